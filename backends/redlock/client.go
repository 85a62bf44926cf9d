package redlock

import (
	"fmt"
	"strconv"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// Transport is how a Redlock client reaches its instances: the one thing the
// simulated client (simTransport, over a sim.Proc) and the live one (redsync
// over go-redis, package backends/redlock/live) do differently. The round
// itself — the set on every instance, the validity check, the release after a
// failed round — is the transport's, because live it is the library's
// (redsync's TryLock does all of it in one call); the rest of the recipe —
// values and tokens, attempts, the wait budget, back-off, what a failed round
// may have left behind, the lease and its detail, the release's verdict, the
// error texts — is Client's, written once.
type Transport interface {
	// Instances names the instances, in the order the client asks them.
	Instances() []string
	// Round runs one acquire round of value on key: the set on every
	// instance (SET NX PX; with token=incr the script that also INCRs
	// <key>:fence), with token=external the token from the sequencer once a
	// majority granted, the validity check, and, when the round failed, the
	// release of value everywhere. The Round is the transport's, valid until
	// its next call.
	Round(key, value string) *Round
	// ReleaseAll sends the compare-and-delete of value to every instance and
	// returns each one's answer, in Instances' order (the transport's buffer,
	// valid until its next call).
	ReleaseAll(key, value string) []Answer
}

// Round is what one acquire round came to.
type Round struct {
	// Outs is each instance's answer to the set, in Instances' order.
	Outs []Outcome
	// Granted is how many instances granted the set.
	Granted int
	// Token is the round's fencing token when it is not the value itself:
	// the greatest INCR of the granters (token=incr), the sequencer's
	// (token=external); 0 otherwise.
	Token uint64
	// Elapsed is how long the round's sets took, on the clock its validity
	// counts on; Validity is what is left of the lease after it (TTL −
	// elapsed − drift).
	Elapsed, Validity time.Duration
	// Failure is why the round gave no lock (FailNone: it did).
	Failure Failure
	// FenceErr is the sequencer's failure (FailFence).
	FenceErr error
	// Maybe reports, for a failed round, that value may still be on a
	// quorum: the instances whose set granted it or did not answer, and
	// whose release did not answer, make one.
	Maybe bool
}

// Failure is why a round gave no lock.
type Failure uint8

// Failures of a round.
const (
	FailNone     Failure = iota
	FailQuorum           // fewer than a majority granted
	FailValidity         // a majority granted, but no validity was left
	FailFence            // the external sequencer gave no token
)

// Outcome is what one instance answered to a round's set.
type Outcome uint8

// Outcomes of a set.
const (
	TimedOut Outcome = iota // no answer within the per-instance timeout
	Refused                 // an error reply: the set did not run
	Granted                 // the instance granted it
	Held                    // the key holds another value
	NotAsked                // the library never reached the instance
)

var outcomeWords = [...]string{TimedOut: " timed out", Refused: " refused", Granted: "", Held: " held", NotAsked: " not asked"}

// Answer is what one instance answered to a compare-and-delete of our value.
type Answer struct {
	// Deleted: our value was there and is deleted.
	Deleted bool
	// TimedOut: no answer within the per-instance timeout (it may have run).
	TimedOut bool
	// Holder is the value the key holds instead of ours ("": none, or the
	// instance refused).
	Holder string
}

// Client is the Redlock client of one client: the recipe, over a Transport.
type Client struct {
	env  lockapi.Env
	t    Transport
	opts Options
	// fail is the error of the last failed round, reused: Acquire reads it
	// (formats it into its own error, or drops it) before the next round.
	fail roundFailure
}

// Topology is where a simulated client finds the instances.
type Topology struct {
	// Instances are the independent Redis instances, in the order the client
	// asks them.
	Instances []sim.NodeID
	// Fence is the external sequencer (token=external).
	Fence sim.NodeID
}

var _ lockapi.Lock = (*Client)(nil)

// NewClient returns a Redlock client for process p.
func NewClient(p *sim.Proc, t Topology, opts Options) *Client {
	// one allocation for the client and its transport
	s := &struct {
		c Client
		t simTransport
	}{}
	s.t.init(p, t, opts)
	s.c = Client{env: p, t: &s.t, opts: opts}
	return &s.c
}

// New returns the Redlock client of the client env, reaching its instances
// through t (simulated or live).
func New(env lockapi.Env, t Transport, opts Options) *Client {
	return &Client{env: env, t: t, opts: opts}
}

// votes is "redis-a,redis-b (2/5)": the granters (or none) and the count.
func (c *Client) votes(outs []Outcome) string { return string(c.appendVotes(nil, outs)) }

// appendVotes appends votes(outs) to b.
func (c *Client) appendVotes(b []byte, outs []Outcome) []byte {
	names := c.t.Instances()
	n := 0
	for i, o := range outs {
		if o != Granted {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, names[i]...)
		n++
	}
	if n == 0 {
		b = append(b, "none"...)
	}
	b = append(b, " ("...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(len(names)), 10)
	return append(b, ')')
}

// others is "redis-d timed out, redis-e held": the instances that did not grant.
func (c *Client) others(outs []Outcome) string { return string(c.appendOthers(nil, outs)) }

// appendOthers appends others(outs) to b.
func (c *Client) appendOthers(b []byte, outs []Outcome) []byte {
	names := c.t.Instances()
	first := true
	for i, o := range outs {
		if o == Granted {
			continue
		}
		if !first {
			b = append(b, ", "...)
		}
		first = false
		b = append(b, names[i]...)
		b = append(b, outcomeWords[o]...)
	}
	return b
}

// roundFailure is a round without a lock: short of a quorum, or granted with
// no validity left. Its text is built only when read (a failed round that is
// retried is never read). Each client reuses one (Client.failed): it does not
// outlive the attempt that returned it.
type roundFailure struct {
	c          *Client
	outs       []Outcome
	noValidity bool
	elapsed    time.Duration
}

// failed is the client's reused roundFailure, set to outs (copied), noValidity
// and elapsed.
func (c *Client) failed(outs []Outcome, noValidity bool, elapsed time.Duration) *roundFailure {
	f := &c.fail
	f.c, f.outs, f.noValidity, f.elapsed = c, append(f.outs[:0], outs...), noValidity, elapsed
	return f
}

func (f *roundFailure) Error() string {
	if f.noValidity {
		return fmt.Sprintf("granted by %s but no validity left: elapsed %v on the %s clock",
			f.c.votes(f.outs), f.elapsed, f.c.opts.ElapsedClock)
	}
	return fmt.Sprintf("granted by %s, quorum %d; %s", f.c.votes(f.outs), f.c.opts.Quorum(), f.c.others(f.outs))
}

// Acquire runs Redlock: set the key on every instance with a per-instance
// timeout, succeed iff a majority granted it and some validity is left,
// otherwise release everywhere and retry after a random delay until wait is
// spent.
func (c *Client) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	start := c.env.Mono()
	uncertain := 0 // the attempt that may have left our value on a quorum
	for attempt := 1; ; attempt++ {
		lease, maybe, err := c.attempt(key)
		if err == nil {
			return lease, nil
		}
		if maybe {
			uncertain = attempt
		}
		elapsed := c.env.Mono() - start
		if elapsed >= wait && uncertain > 0 {
			// Issue 28: a later attempt's refusal does not undo an earlier
			// one whose value may still hold a quorum.
			return lockapi.Lease{}, fmt.Errorf("redlock: acquire %s: %d attempts in %v, last: %v; attempt %d may have left its value "+
				"on a quorum (neither its set nor its release answered there): %w", key, attempt, elapsed, err, uncertain, lockapi.ErrUnknown)
		}
		if elapsed >= wait {
			return lockapi.Lease{}, fmt.Errorf("redlock: acquire %s: %d attempts in %v, last: %v: %w",
				key, attempt, elapsed, err, lockapi.ErrNotAcquired)
		}
		lockapi.SleepBackoff(c.env, c.opts.BackoffMax, wait-elapsed)
	}
}

// attempt is one round of Redlock with a fresh random value, which is also
// the token unless the round gives one. maybe reports that a failed round's
// value may still be on a quorum.
func (c *Client) attempt(key string) (_ lockapi.Lease, maybe bool, _ error) {
	v := c.env.Rand().Uint64()
	value := strconv.FormatUint(v, 10) // the token (token=value) is the same number, printed alike
	r := c.t.Round(key, value)
	switch r.Failure {
	case FailFence:
		return lockapi.Lease{}, r.Maybe, r.FenceErr
	case FailQuorum, FailValidity:
		return lockapi.Lease{}, r.Maybe, c.failed(r.Outs, r.Failure == FailValidity, r.Elapsed)
	}
	lease := lockapi.Lease{Key: key, Owner: value, Token: v, HasToken: true}
	if r.Token != 0 {
		lease.Token = r.Token
	}
	lease.Deadline = c.env.Mono() + r.Validity
	lease.Detail = c.grantDetail(r)
	return lease, false, nil
}

// grantDetail is a granted round's detail: "granted by redis-a,redis-b,redis-c
// (3/5), validity 9.99s; redis-d timed out, redis-e held", in one buffer.
func (c *Client) grantDetail(r *Round) string {
	b := make([]byte, 0, 128)
	b = append(b, "granted by "...)
	b = c.appendVotes(b, r.Outs)
	b = append(b, ", validity "...)
	b = append(b, r.Validity.Round(time.Millisecond).String()...)
	if r.Granted < len(r.Outs) {
		b = append(b, "; "...)
		b = c.appendOthers(b, r.Outs)
	}
	return string(b)
}

// Release deletes the key on every instance where it still has our value,
// and reports whether the lock was ours to release:
//
//   - nil when our value was deleted on a majority (the lock was held, and
//     now is not);
//   - ErrUnknown when only the instances that timed out could make up the
//     majority (our value may still be on one);
//   - ErrNotHeld when another value holds a majority (the lock is someone
//     else's: releasing our stray copies gave nothing back), or when our lease
//     had run out on our clock (a stray copy of our value on a minority is
//     still deleted, but another client may hold the lock), or when no
//     instance had our value any more (released already, or lost);
//   - nil otherwise: our lease still ran and our value was deleted on every
//     instance that still had it; the others lost it before its time (a
//     restart, a clock jump) and nobody took it over, so what was left of our
//     lock is released.
func (c *Client) Release(l lockapi.Lease) error {
	valid := c.env.Mono() < l.Deadline
	rs := c.t.ReleaseAll(l.Key, l.Owner)
	released, timedOut := 0, 0
	others := map[string]int{} // value -> instances holding it instead of ours
	held, holder := 0, ""
	for _, r := range rs {
		switch {
		case r.TimedOut:
			timedOut++
		case r.Deleted:
			released++
		case r.Holder != "":
			if others[r.Holder]++; others[r.Holder] > held {
				held, holder = others[r.Holder], r.Holder
			}
		}
	}
	q := c.opts.Quorum()
	switch {
	case released >= q:
		return nil
	case released+timedOut >= q:
		return fmt.Errorf("redlock: release %s: deleted on %d instance(s), %d timed out, quorum %d: %w",
			l.Key, released, timedOut, q, lockapi.ErrUnknown)
	case !valid:
		return fmt.Errorf("redlock: release %s: our value was on %d instance(s) only, quorum %d: the lease had run out: %w",
			l.Key, released, q, lockapi.ErrNotHeld)
	case held >= q:
		return fmt.Errorf("redlock: release %s: our value was on %d instance(s), %s holds %d, quorum %d: the lock is another's: %w",
			l.Key, released, holder, held, q, lockapi.ErrNotHeld)
	case released > 0:
		return nil
	}
	return fmt.Errorf("redlock: release %s: our value was on 0 instance(s) only, quorum %d: already released, or lost by the instances: %w",
		l.Key, q, lockapi.ErrNotHeld)
}

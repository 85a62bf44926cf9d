package redlock

import (
	"fmt"
	"strconv"
	"time"

	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// Topology is where a client finds the instances.
type Topology struct {
	// Instances are the independent Redis instances, in the order the client
	// asks them.
	Instances []sim.NodeID
	// Fence is the external sequencer (token=external).
	Fence sim.NodeID
}

// Client is the Redlock client of one process.
type Client struct {
	p    *sim.Proc
	topo Topology
	opts Options

	reqs []sim.Request  // the fan-out's requests, reused
	resp []sim.Response // the fan-out's responses, reused
	outs []outcome      // the last round's outcomes, reused
	// fail is the error of the last failed round, reused: Acquire reads it
	// (formats it into its own error, or drops it) before the next round.
	fail roundFailure
}

var _ lockapi.Lock = (*Client)(nil)

// NewClient returns a Redlock client for process p.
func NewClient(p *sim.Proc, t Topology, opts Options) *Client {
	return &Client{p: p, topo: t, opts: opts}
}

func (c *Client) name(id sim.NodeID) string { return c.p.World().Nodes()[id].Name() }

func (c *Client) clock() time.Duration {
	if c.opts.ElapsedClock == redis.ClockWall {
		return c.p.Wall()
	}
	return c.p.Mono()
}

// fanout sends body to every instance, in parallel or one after the other,
// each with the per-instance timeout. The responses are the client's reused
// buffer: valid until the next fan-out.
func (c *Client) fanout(body any) []sim.Response {
	n := len(c.topo.Instances)
	if cap(c.resp) < n {
		c.resp = make([]sim.Response, n)
		c.reqs = make([]sim.Request, n)
	}
	out := c.resp[:n]
	if c.opts.Fanout == FanoutSequential {
		for i, id := range c.topo.Instances {
			out[i].Body, out[i].Err = c.p.Call(id, body, c.opts.RequestTimeout)
		}
		return out
	}
	reqs := c.reqs[:n]
	for i, id := range c.topo.Instances {
		reqs[i] = sim.Request{To: id, Body: body}
	}
	return c.p.CallAllInto(reqs, c.opts.RequestTimeout, out) // reqs keep the body until the next fan-out
}

// outcome is what one instance answered to one round.
type outcome uint8

const (
	timedOut outcome = iota
	refused
	granted
	held
)

var outcomeWords = [...]string{timedOut: " timed out", refused: " refused", granted: "", held: " held"}

// tally is what the instances answered to one round: each instance's outcome
// (in the client's reused buffer) and what the granters said.
type tally struct {
	outs    []outcome
	granted int
	maxIncr int64
}

func (c *Client) count(rs []sim.Response) tally {
	c.outs = c.outs[:0]
	t := tally{}
	for _, r := range rs {
		var o outcome
		switch {
		case r.Err != nil:
			o = timedOut
		case r.Body.(redis.Reply).Err != "":
			o = refused
		case r.Body.(redis.Reply).OK:
			o = granted
			t.granted++
			t.maxIncr = max(t.maxIncr, r.Body.(redis.Reply).Int)
		default:
			o = held
		}
		c.outs = append(c.outs, o)
	}
	t.outs = c.outs
	return t
}

// votes is "redis-a,redis-b (2/5)": the granters (or none) and the count.
func (c *Client) votes(outs []outcome) string { return string(c.appendVotes(nil, outs)) }

// appendVotes appends votes(outs) to b.
func (c *Client) appendVotes(b []byte, outs []outcome) []byte {
	n := 0
	for i, o := range outs {
		if o != granted {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = append(b, c.name(c.topo.Instances[i])...)
		n++
	}
	if n == 0 {
		b = append(b, "none"...)
	}
	b = append(b, " ("...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(len(c.topo.Instances)), 10)
	return append(b, ')')
}

// others is "redis-d timed out, redis-e held": the instances that did not grant.
func (c *Client) others(outs []outcome) string { return string(c.appendOthers(nil, outs)) }

// appendOthers appends others(outs) to b.
func (c *Client) appendOthers(b []byte, outs []outcome) []byte {
	first := true
	for i, o := range outs {
		if o == granted {
			continue
		}
		if !first {
			b = append(b, ", "...)
		}
		first = false
		b = append(b, c.name(c.topo.Instances[i])...)
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
	outs       []outcome
	noValidity bool
	elapsed    time.Duration
}

// failed is the client's reused roundFailure, set to outs (copied), noValidity
// and elapsed.
func (c *Client) failed(outs []outcome, noValidity bool, elapsed time.Duration) *roundFailure {
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
	start := c.p.Mono()
	uncertain := 0 // the attempt that may have left our value on a quorum
	for attempt := 1; ; attempt++ {
		lease, maybe, err := c.attempt(key)
		if err == nil {
			return lease, nil
		}
		if maybe {
			uncertain = attempt
		}
		elapsed := c.p.Mono() - start
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
		lockapi.SleepBackoff(c.p, c.opts.BackoffMax, wait-elapsed)
	}
}

// attempt is one round of Redlock. A failed round releases its value
// everywhere; maybe reports that the value may still be on a quorum: the
// instances whose set granted it or did not answer, and whose release did
// not answer, make one.
func (c *Client) attempt(key string) (_ lockapi.Lease, maybe bool, _ error) {
	v := c.p.Rand().Uint64()
	value := strconv.FormatUint(v, 10) // the token (token=value) is the same number, printed alike
	start := c.clock()
	var body any
	if c.opts.Token == TokenIncr {
		body = redis.SetNXFence{Key: key, Value: value, FenceKey: key + ":fence", TTL: c.opts.TTL}
	} else {
		body = redis.SetNX{Key: key, Value: value, TTL: c.opts.TTL}
	}
	t := c.count(c.fanout(body))
	lease := lockapi.Lease{Key: key, Owner: value, Token: v, HasToken: true}
	var failure error
	if t.granted >= c.opts.Quorum() && c.opts.Token == TokenExternal {
		failure = c.externalToken(&lease)
	}
	elapsed := c.clock() - start
	validity := c.opts.TTL - elapsed - c.opts.Drift()
	switch {
	case failure != nil:
	case t.granted < c.opts.Quorum():
		failure = c.failed(t.outs, false, 0)
	case validity <= 0:
		failure = c.failed(t.outs, true, elapsed)
	}
	if failure != nil {
		rs := c.releaseAll(key, value)
		left := 0
		for i, r := range rs {
			if r.Err != nil && (t.outs[i] == granted || t.outs[i] == timedOut) {
				left++
			}
		}
		return lockapi.Lease{}, left >= c.opts.Quorum(), failure
	}
	if c.opts.Token == TokenIncr {
		lease.Token = uint64(t.maxIncr)
	}
	lease.Deadline = c.p.Mono() + validity
	lease.Detail = c.grantDetail(t, validity)
	return lease, false, nil
}

// grantDetail is a granted round's detail: "granted by redis-a,redis-b,redis-c
// (3/5), validity 9.99s; redis-d timed out, redis-e held", in one buffer.
func (c *Client) grantDetail(t tally, validity time.Duration) string {
	b := make([]byte, 0, 128)
	b = append(b, "granted by "...)
	b = c.appendVotes(b, t.outs)
	b = append(b, ", validity "...)
	b = append(b, validity.Round(time.Millisecond).String()...)
	if t.granted < len(t.outs) {
		b = append(b, "; "...)
		b = c.appendOthers(b, t.outs)
	}
	return string(b)
}

// externalToken takes the token from the external sequencer.
func (c *Client) externalToken(l *lockapi.Lease) error {
	r, err := c.p.Call(c.topo.Fence, redis.Incr{Key: l.Key + ":fence"}, c.opts.RequestTimeout)
	if err != nil {
		return fmt.Errorf("external token from %s: %w", c.name(c.topo.Fence), err)
	}
	l.Token = uint64(r.(redis.Reply).Int)
	return nil
}

func (c *Client) releaseAll(key, value string) []sim.Response {
	return c.fanout(redis.DelIfValue{Key: key, Value: value})
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
	valid := c.p.Mono() < l.Deadline
	rs := c.releaseAll(l.Key, l.Owner)
	released, timedOut := 0, 0
	others := map[string]int{} // value -> instances holding it instead of ours
	held, holder := 0, ""
	for _, r := range rs {
		switch {
		case r.Err != nil:
			timedOut++
		case r.Body.(redis.Reply).OK:
			released++
		case r.Body.(redis.Reply).Value != "":
			v := r.Body.(redis.Reply).Value
			if others[v]++; others[v] > held {
				held, holder = others[v], v
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

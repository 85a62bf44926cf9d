package redlock

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/sim"
)

// simTransport is the simulated Transport: the round as Redlock's
// description and redsync run it, in messages from the client's process to
// the instances' nodes.
type simTransport struct {
	p     *sim.Proc
	topo  Topology
	opts  Options
	names []string // the instances' names

	reqs    []sim.Request  // the fan-out's requests, reused
	resp    []sim.Response // the fan-out's responses, reused
	round   Round          // the last round, reused
	answers []Answer       // the last release's answers, reused
}

var _ Transport = (*simTransport)(nil)

// init makes t the transport of process p to the instances of topo.
func (t *simTransport) init(p *sim.Proc, topo Topology, o Options) {
	names := make([]string, len(topo.Instances))
	for i, id := range topo.Instances {
		names[i] = p.World().Nodes()[id].Name()
	}
	*t = simTransport{p: p, topo: topo, opts: o, names: names, answers: make([]Answer, 0, len(names))}
}

// Instances names the instances.
func (t *simTransport) Instances() []string { return t.names }

func (t *simTransport) clock() time.Duration {
	if t.opts.ElapsedClock == redis.ClockWall {
		return t.p.Wall()
	}
	return t.p.Mono()
}

// fanout sends body to every instance, in parallel or one after the other,
// each with the per-instance timeout. The responses are the transport's
// reused buffer: valid until the next fan-out.
func (t *simTransport) fanout(body any) []sim.Response {
	n := len(t.topo.Instances)
	if cap(t.resp) < n {
		t.resp = make([]sim.Response, n)
		t.reqs = make([]sim.Request, n)
	}
	out := t.resp[:n]
	if t.opts.Fanout == FanoutSequential {
		for i, id := range t.topo.Instances {
			out[i].Body, out[i].Err = t.p.Call(id, body, t.opts.RequestTimeout)
		}
		return out
	}
	reqs := t.reqs[:n]
	for i, id := range t.topo.Instances {
		reqs[i] = sim.Request{To: id, Body: body}
	}
	return t.p.CallAllInto(reqs, t.opts.RequestTimeout, out) // reqs keep the body until the next fan-out
}

// count reads the set's responses into r: each instance's outcome, the
// granters and the greatest INCR among them.
func (t *simTransport) count(r *Round, rs []sim.Response) (maxIncr int64) {
	r.Outs, r.Granted = r.Outs[:0], 0
	for _, resp := range rs {
		var o Outcome
		switch {
		case resp.Err != nil:
			o = TimedOut
		case resp.Body.(redis.Reply).Err != "":
			o = Refused
		case resp.Body.(redis.Reply).OK:
			o = Granted
			r.Granted++
			maxIncr = max(maxIncr, resp.Body.(redis.Reply).Int)
		default:
			o = Held
		}
		r.Outs = append(r.Outs, o)
	}
	return maxIncr
}

// Round sets value on every instance, takes the external token once a
// majority granted (token=external), checks the validity left (TTL − elapsed
// − drift, elapsed on the elapsed clock, the sequencer's call included) and,
// when the round failed, releases value everywhere.
func (t *simTransport) Round(key, value string) *Round {
	r := &t.round
	r.Token, r.Elapsed, r.Validity, r.Failure, r.FenceErr, r.Maybe = 0, 0, 0, FailNone, nil, false
	start := t.clock()
	var body any
	if t.opts.Token == TokenIncr {
		body = redis.SetNXFence{Key: key, Value: value, FenceKey: key + ":fence", TTL: t.opts.TTL}
	} else {
		body = redis.SetNX{Key: key, Value: value, TTL: t.opts.TTL}
	}
	maxIncr := t.count(r, t.fanout(body))
	if r.Granted >= t.opts.Quorum() && t.opts.Token == TokenExternal {
		r.Token, r.FenceErr = t.externalToken(key)
		if r.FenceErr != nil {
			r.Failure = FailFence
		}
	}
	r.Elapsed = t.clock() - start
	r.Validity = t.opts.TTL - r.Elapsed - t.opts.Drift()
	switch {
	case r.Failure != FailNone:
	case r.Granted < t.opts.Quorum():
		r.Failure = FailQuorum
	case r.Validity <= 0:
		r.Failure = FailValidity
	}
	if r.Failure != FailNone {
		rs := t.fanout(redis.DelIfValue{Key: key, Value: value})
		left := 0
		for i, resp := range rs {
			if resp.Err != nil && (r.Outs[i] == Granted || r.Outs[i] == TimedOut) {
				left++
			}
		}
		r.Maybe = left >= t.opts.Quorum()
		return r
	}
	if t.opts.Token == TokenIncr {
		r.Token = uint64(maxIncr)
	}
	return r
}

// externalToken takes the token from the external sequencer.
func (t *simTransport) externalToken(key string) (uint64, error) {
	r, err := t.p.Call(t.topo.Fence, redis.Incr{Key: key + ":fence"}, t.opts.RequestTimeout)
	if err != nil {
		return 0, fmt.Errorf("external token from %s: %w", t.p.World().Nodes()[t.topo.Fence].Name(), err)
	}
	return uint64(r.(redis.Reply).Int), nil
}

// ReleaseAll sends the compare-and-delete of value to every instance.
func (t *simTransport) ReleaseAll(key, value string) []Answer {
	rs := t.fanout(redis.DelIfValue{Key: key, Value: value})
	t.answers = t.answers[:0]
	for _, r := range rs {
		var a Answer
		switch {
		case r.Err != nil:
			a.TimedOut = true
		case r.Body.(redis.Reply).OK:
			a.Deleted = true
		default:
			a.Holder = r.Body.(redis.Reply).Value
		}
		t.answers = append(t.answers, a)
	}
	return t.answers
}

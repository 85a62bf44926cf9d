package redis

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// simTransport is the simulated Transport: commands are messages from a
// client process to the Redis instances' nodes. The client's routines (its
// main process and its watchdogs) each have one; they share where commands
// go (route).
type simTransport struct {
	p *sim.Proc
	r *route
}

// route is where a simulated client's commands go: the primary it believes
// in, and whether to ask the monitor again before the next command.
type route struct {
	topo    Topology
	primary sim.NodeID
	stale   bool
	timeout time.Duration // the monitor's request timeout
}

var _ Transport = (*simTransport)(nil)

func (t *simTransport) nodeName(id sim.NodeID) string { return t.p.World().Nodes()[id].Name() }

// Do sends cmd to the primary and waits at most timeout. A timeout is
// ErrUnknown; an instance that refused the command (a replica, an instance
// within its restart delay) gives a plain error: it certainly did not execute
// it. Either makes a monitored client ask for the primary again.
func (t *simTransport) Do(cmd any, timeout time.Duration) (Reply, string, error) {
	r := t.r
	if r.stale && r.topo.HasMonitor {
		if m, err := t.p.Call(r.topo.Monitor, GetPrimary{}, r.timeout); err == nil {
			r.primary, r.stale = m.(PrimaryIs).Node, false
		}
	}
	to := r.primary
	name := t.nodeName(to)
	body, err := t.p.Call(to, cmd, timeout)
	if err != nil {
		r.stale = true
		return Reply{}, name, &unknownError{node: name, errs: [2]error{lockapi.ErrUnknown, err}}
	}
	rep := body.(Reply)
	if rep.Err != "" {
		r.stale = true
		return rep, name, fmt.Errorf("redis %s: %s", name, rep.Err)
	}
	return rep, name, nil
}

// Go spawns fn as a process on the client's node: a pause of the node stops
// it too.
func (t *simTransport) Go(name string, fn func(env lockapi.Env, t Transport)) {
	t.p.Spawn(name, func(w *sim.Proc) { fn(w, &simTransport{p: w, r: t.r}) })
}

// unknownError is a command whose outcome is unknown (it timed out): "redis
// NODE: <ErrUnknown>: <cause>", formatted only when read (most are retried).
type unknownError struct {
	node string
	errs [2]error // ErrUnknown and the cause, what Unwrap returns (without allocating)
}

func (e *unknownError) Error() string {
	return "redis " + e.node + ": " + lockapi.ErrUnknown.Error() + ": " + e.errs[1].Error()
}

func (e *unknownError) Unwrap() []error { return e.errs[:] }

package libmode

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/storage"
)

// client is one client's workload: the fenced counter of the simulator
// (acquire, read the cell, hold, write read+1 with the lease's token,
// release, think), each call recorded in the history with the virtual
// time it was made and returned at.
type client struct {
	w       *world
	name    string
	process int
	lock    Lock
	rnd     *rand.Rand
}

func (c *client) now() int64 { return int64(c.w.elapsed()) }

// record appends an event of this client.
func (c *client) record(e history.Event) {
	e.Process, e.Node = c.process, c.name
	if e.Time == 0 {
		e.Time = c.now()
	}
	c.w.rec.add(e)
	c.w.observe(e)
}

func tokenPtr(l Lease) *uint64 {
	if l.HasToken {
		return history.Ptr(l.Token)
	}
	return nil
}

// sleep waits d of virtual time (ending in the client's lane), or until
// the run ends.
func (c *client) sleep(ctx context.Context, d time.Duration) bool {
	now := c.w.elapsed()
	t := time.NewTimer(c.w.align(now+d, c.name) - now)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// loop runs rounds until ctx ends.
func (c *client) loop(ctx context.Context) {
	key := c.w.cfg.Key
	if !c.sleep(ctx, 0) { // start in the client's lane
		return
	}
	for ctx.Err() == nil {
		c.w.gate(c.name)
		c.round(ctx, key)
		think := time.Duration(c.rnd.Int64N(int64(2*c.w.cfg.Think) + 1))
		if !c.sleep(ctx, think) {
			return
		}
	}
}

func (c *client) round(ctx context.Context, key string) {
	start := c.w.elapsed()
	c.record(history.Event{Type: history.Invoke, F: history.FAcquire, Key: key})
	l, err := c.lock.Acquire(ctx, key)
	if ctx.Err() != nil && err != nil {
		// The run ended during the call: its outcome is unknown. The
		// library's error is left out: when the end cancels several of its
		// goroutines at once, the order of their errors is the scheduler's.
		c.record(history.Event{Type: history.Info, F: history.FAcquire, Key: key, Detail: runEnded})
		return
	}
	done := history.Event{Type: history.Type(outcome(err)), F: history.FAcquire, Key: key, Detail: errText(err)}
	if err == nil {
		done.Owner, done.Token = l.Owner, tokenPtr(l)
		if len(c.w.servers) == 1 {
			// the client knows which instance granted it: its only one (with
			// several, the library does not say which answered)
			done.Detail = "granted by " + c.w.servers[0].name
		}
		switch {
		case !l.Until.IsZero():
			done.Deadline = history.Ptr(int64(l.Until.Sub(c.w.start)))
		case l.Valid > 0:
			done.Deadline = history.Ptr(int64(start + l.Valid))
		}
	}
	c.record(done)
	if err != nil {
		return
	}
	v, ok := c.storage(key, l, false, 0)
	if ok {
		c.w.afterRead(c.name)
		c.w.gate(c.name)
		c.sleep(ctx, c.w.cfg.Hold)
		c.w.gate(c.name)
		c.storage(key, l, true, v+1)
	}
	c.w.gate(c.name)
	c.record(history.Event{Type: history.Invoke, F: history.FRelease, Key: key, Owner: l.Owner, Token: tokenPtr(l)})
	err = c.lock.Release(ctx, l)
	done = history.Event{Type: history.Type(outcome(err)), F: history.FRelease, Key: key, Owner: l.Owner,
		Token: tokenPtr(l), Detail: errText(err)}
	if ctx.Err() != nil && err != nil {
		done.Type, done.Detail = history.Info, runEnded
	}
	c.record(done)
}

// storage reads key or writes value to it under l, recorded.
func (c *client) storage(key string, l Lease, write bool, value int64) (int64, bool) {
	f := history.FRead
	var req any = storage.ReadReq{Key: key, Token: l.Token}
	inv := history.Event{Type: history.Invoke, Key: key, Owner: l.Owner, Token: tokenPtr(l)}
	if write {
		f = history.FWrite
		req = storage.WriteReq{Key: key, Value: value, Token: l.Token}
		inv.Value = history.Ptr(value)
	}
	inv.F = f
	c.record(inv)
	r, err := c.w.callStorage(c.name, req)
	done := history.Event{F: f, Key: key, Owner: l.Owner, Token: tokenPtr(l)}
	switch {
	case err != nil:
		done.Type, done.Detail = history.Info, err.Error()
	case r.Rejected:
		done.Type, done.Detail = history.Fail, fmt.Sprintf("rejected by the storage: token %d below %d", l.Token, r.Highest)
	default:
		done.Type, done.Value = history.OK, history.Ptr(r.Value)
		if write {
			done.Value = history.Ptr(value)
		}
	}
	c.record(done)
	return r.Value, err == nil && !r.Rejected
}

// runEnded is the detail of a call the end of the run interrupted.
const runEnded = "the run ended during the call"

// errRunOver answers a storage call made after the run ended.
var errRunOver = errors.New("the run is over")

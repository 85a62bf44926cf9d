package workloads

import (
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lockapi"
)

// Client is what a workload program is given: its environment, its lock client,
// the storage client and the recorder of its operations.
type Client struct {
	Env   lockapi.Env
	Lock  lockapi.Lock
	Store lockapi.Storage
	Rec   *history.Recorder
}

// Workload is a client program. Run loops until the process is stopped (the
// end of the run or a crash of the client).
type Workload interface {
	Run(c Client)
}

// Initializer is implemented by workloads whose storage cells start at values
// other than 0 (a stock level, say). The harness sets the storage up with them
// and tells the checks.
type Initializer interface {
	// Initial maps storage keys to their values before the run.
	Initial() map[string]int64
}

// Outcome classifies an error as the history type of the completion.
func Outcome(err error) history.Type {
	switch {
	case err == nil:
		return history.OK
	case lockapi.Unknown(err):
		return history.Info
	default:
		return history.Fail
	}
}

func detail(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// leaseEvent describes a lease in a completion event. The token and the
// deadline are written to *token and *deadline, which the event points to:
// the caller's variables, so recording a grant allocates nothing (the log
// copies the values).
func leaseEvent(rec *history.Recorder, l lockapi.Lease, token *uint64, deadline *int64) history.Event {
	e := history.Event{Owner: l.Owner, Detail: l.Detail}
	if l.HasToken {
		*token = l.Token
		e.Token = token
	}
	if l.Deadline != 0 {
		*deadline = int64(rec.Clock().TrueAt(l.Deadline))
		e.Deadline = deadline
	}
	return e
}

func tokenOf(l lockapi.Lease) *uint64 {
	if l.HasToken {
		return history.Ptr(l.Token)
	}
	return nil
}

// Acquire acquires key through c.Lock and records it.
func Acquire(c Client, key string, wait time.Duration) (lockapi.Lease, error) {
	op := c.Rec.Invoke(history.Event{F: history.FAcquire, Key: key})
	l, err := c.Lock.Acquire(key, wait)
	e := history.Event{Detail: detail(err)}
	var token uint64
	var deadline int64
	if err == nil {
		e = leaseEvent(c.Rec, l, &token, &deadline)
	}
	op.Complete(Outcome(err), e)
	return l, err
}

// Release releases l through c.Lock and records it.
func Release(c Client, l lockapi.Lease) error {
	op := c.Rec.Invoke(history.Event{F: history.FRelease, Key: l.Key, Owner: l.Owner, Token: tokenOf(l)})
	err := c.Lock.Release(l)
	op.Complete(Outcome(err), history.Event{Detail: detail(err)})
	return err
}

// Read reads key from the storage under lease l and records it.
func Read(c Client, key string, l lockapi.Lease) (int64, error) {
	op := c.Rec.Invoke(history.Event{F: history.FRead, Key: key, Owner: l.Owner, Token: tokenOf(l)})
	v, err := c.Store.Read(key, l.Token)
	e := history.Event{Detail: detail(err), Token: tokenOf(l)}
	if err == nil {
		e.Value = history.Ptr(v)
	}
	op.Complete(Outcome(err), e)
	return v, err
}

// Write writes value to key in the storage under lease l and records it.
func Write(c Client, key string, value int64, l lockapi.Lease) error {
	op := c.Rec.Invoke(history.Event{F: history.FWrite, Key: key, Owner: l.Owner, Token: tokenOf(l), Value: history.Ptr(value)})
	err := c.Store.Write(key, value, l.Token)
	op.Complete(Outcome(err), history.Event{Detail: detail(err), Token: tokenOf(l), Value: history.Ptr(value)})
	return err
}

// RecordRenewals records the renewals of c.Lock's watchdog, if it has one. Each
// renewal in flight gets a process of its own (on the client's node), so that a
// renewal overlapping the client's own operations keeps the one-operation-per-
// process rule.
func RecordRenewals(c Client) {
	ro, ok := c.Lock.(lockapi.RenewObserver)
	if !ok {
		return
	}
	var idle []*history.Recorder
	open := map[string]struct {
		rec *history.Recorder
		op  history.Op
	}{}
	ro.OnRenew(func(l lockapi.Lease, done bool, err error) {
		if !done {
			var rec *history.Recorder
			if n := len(idle); n > 0 {
				rec, idle = idle[n-1], idle[:n-1]
			} else {
				rec = c.Rec.Sibling()
			}
			op := rec.Invoke(history.Event{F: history.FRenew, Key: l.Key, Owner: l.Owner, Token: tokenOf(l)})
			open[l.Owner] = struct {
				rec *history.Recorder
				op  history.Op
			}{rec, op}
			return
		}
		o, found := open[l.Owner]
		if !found {
			return
		}
		delete(open, l.Owner)
		e := history.Event{Detail: detail(err)}
		var token uint64
		var deadline int64
		if err == nil {
			e = leaseEvent(o.rec, l, &token, &deadline)
		}
		o.op.Complete(Outcome(err), e)
		idle = append(idle, o.rec)
	})
}

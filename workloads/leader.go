package workloads

import (
	"time"

	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/lockapi"
)

// LeaderElection is the leader-election workload: what a controller does
// with client-go's LeaderElector. Each client is a candidate that runs for
// leadership of the lock LeaderKey (one acquire, waiting up to Wait); once
// it leads it works — a round of work reads the counter LeaderKey, holds,
// and writes counter+1 with its token, one round every Work — until it stops
// leading: its lease could not be renewed (client-go's OnStoppedLeading,
// which the lock tells through Leader), or it is told to stop after leading
// for Term (its context cancelled: it releases). Then it ends the term in
// the history (a release, which fails when the lease was already lost),
// waits Work and runs for leadership again.
//
// A term is one grant in the history and each round of work one critical
// section, so the lock checks (mutual exclusion, critical sections, fencing
// tokens, liveness) judge it as they judge any workload. A round that has
// read finishes with its write without looking at the leadership again, as
// a controller's reconcile does once it has computed its update: a leader
// paused or cut off between its read and its write writes late.
type LeaderElection struct {
	// Hold is the time between a round's read and its write.
	Hold time.Duration
	// Work is the time between one round of work and the next while
	// leading, and between the end of a term and the next run.
	Work time.Duration
	// Wait is how long a candidate runs for leadership before it gives up
	// (a failed acquire in the history) and runs again.
	Wait time.Duration
	// Term is how long a leader works before it is told to stop (0: never;
	// only a lost lease ends its term).
	Term time.Duration
}

// LeaderKey is the lock of the leader-election workload, and the storage
// cell its leaders work on.
const LeaderKey = "k"

// Leader is implemented by locks that are leader electors (client-go's
// LeaderElector): the client learns that it stopped leading — its lease
// could not be renewed — without a call of its own (OnStoppedLeading). A
// lock without it leads, for the leader-election workload, until its
// lease's Deadline as granted (no Deadline: until told to stop).
type Leader interface {
	// Leading reports whether the client still leads key: it acquired it
	// and has not stopped leading since.
	Leading(key string) bool
}

// LeaderElectionTable declares the options of the leader-election workload.
var LeaderElectionTable = opt.Table[LeaderElection]{Owner: "leader-election", Options: []opt.Option[LeaderElection]{
	opt.Var("hold", "time between a round's read of the counter and its write", "100ms",
		func(w *LeaderElection) *time.Duration { return &w.Hold }, opt.NonNegative),
	opt.Var("work", "time between one round of work and the next while leading, and between the end of a term and the next run "+
		"for leadership", "500ms", func(w *LeaderElection) *time.Duration { return &w.Work }, opt.NonNegative),
	opt.Var("wait", "how long a candidate runs for leadership before it gives up (a failed acquire) and runs again", "1m0s",
		func(w *LeaderElection) *time.Duration { return &w.Wait }, opt.NonNegative),
	opt.Var("term", "how long a leader works before it is told to stop and releases (0s: never; only a lost lease ends its term)",
		"0s", func(w *LeaderElection) *time.Duration { return &w.Term }, opt.NonNegative),
}}

// DefaultLeaderElection returns the declared defaults.
func DefaultLeaderElection() LeaderElection { return LeaderElectionTable.Defaults() }

// Set sets one option from its textual form (key=value on the command line).
func (w *LeaderElection) Set(key, value string) error { return LeaderElectionTable.Set(w, key, value) }

// Run is the candidate's program.
func (w LeaderElection) Run(c Client) {
	RecordRenewals(c)
	for {
		if lease, err := Acquire(c, LeaderKey, w.Wait); err == nil {
			w.lead(c, lease)
		}
		c.Env.Sleep(w.Work)
	}
}

// lead works while the client leads, then ends the term with a release (no
// defer: a process stopped at the end of the run must not record one).
func (w LeaderElection) lead(c Client, lease lockapi.Lease) {
	start := c.Env.Mono()
	for w.leading(c, lease) && (w.Term == 0 || c.Env.Mono()-start < w.Term) {
		if v, err := Read(c, LeaderKey, lease); err == nil {
			c.Env.Sleep(w.Hold)
			_ = Write(c, LeaderKey, v+1, lease)
		}
		c.Env.Sleep(w.Work)
	}
	_ = Release(c, lease)
}

// leading tells whether the client still leads: the elector's own word
// (Leader), else the lease's deadline as granted.
func (w LeaderElection) leading(c Client, lease lockapi.Lease) bool {
	if l, ok := c.Lock.(Leader); ok {
		return l.Leading(lease.Key)
	}
	return lease.Deadline == 0 || c.Env.Mono() < lease.Deadline
}

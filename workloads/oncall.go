package workloads

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/lockapi"
)

// OnCall is the on-call workload (Kleppmann's doctors): Doctors doctors,
// each on call (row oncall/dN = 1). Client cN is doctor ((N-1) mod Doctors)+1.
// Under the lock OnCallLock a doctor reads every row and goes off call
// (writes 0 to its own row) only if another doctor is still on call; a
// doctor off call comes back on call (writes 1) on its next turn. The
// invariant "at least one doctor on call" is judged by the on-call check
// over the storage's states. Two doctors who both read the other on call
// and both go off call are a write skew: each wrote only its own row.
type OnCall struct {
	// Doctors is the number of doctors (rows).
	Doctors int
	// Hold is the time between the reads and the write.
	Hold time.Duration
	// Think is the mean pause between turns (uniform in [0, 2*Think]).
	Think time.Duration
	// Wait is the acquire wait budget.
	Wait time.Duration
	// OffDuty is how long a doctor who went off call stays away before its
	// next turn (in which it comes back on call).
	OffDuty time.Duration
}

// OnCallLock is the lock key of the on-call workload.
const OnCallLock = "oncall"

// OnCallTable declares the options of the on-call workload.
var OnCallTable = opt.Table[OnCall]{Owner: "oncall", Options: []opt.Option[OnCall]{
	opt.Var("doctors", "number of doctors, each with a row oncall/dN, all on call at the start", "2",
		func(w *OnCall) *int { return &w.Doctors }, opt.Range(2, 100)),
	opt.Var("hold", "time between the reads of the rows and the write of one's own", "100ms",
		func(w *OnCall) *time.Duration { return &w.Hold }, opt.NonNegative),
	opt.Var("think", "mean pause between turns (uniform in [0, 2*think])", "100ms",
		func(w *OnCall) *time.Duration { return &w.Think }, opt.NonNegative),
	opt.Var("wait", "the acquire wait budget", "5s",
		func(w *OnCall) *time.Duration { return &w.Wait }, opt.NonNegative),
	opt.Var("off-duty", "how long a doctor who went off call stays away before its next turn (in which it comes back on call)",
		"1s", func(w *OnCall) *time.Duration { return &w.OffDuty }, opt.NonNegative),
}}

// DefaultOnCall returns the declared defaults.
func DefaultOnCall() OnCall { return OnCallTable.Defaults() }

// Set sets one option from its textual form (key=value on the command line).
func (w *OnCall) Set(key, value string) error { return OnCallTable.Set(w, key, value) }

// Row is the storage key of doctor i (1-based).
func (w OnCall) Row(i int) string { return fmt.Sprintf("oncall/d%d", i) }

// Initial puts every doctor on call (workloads.Initializer).
func (w OnCall) Initial() map[string]int64 {
	out := make(map[string]int64, w.Doctors)
	for i := 1; i <= w.Doctors; i++ {
		out[w.Row(i)] = 1
	}
	return out
}

// Doctor is the doctor the client called name plays (1-based).
func (w OnCall) Doctor(name string) int { return (clientNumber(name)-1)%w.Doctors + 1 }

// Run is the doctor's program.
func (w OnCall) Run(c Client) {
	RecordRenewals(c)
	rnd := c.Env.Rand()
	me := w.Doctor(c.Env.Name())
	for {
		if lease, err := Acquire(c, OnCallLock, w.Wait); err == nil {
			off := w.turn(c, me, lease)
			_ = Release(c, lease)
			if off {
				c.Env.Sleep(w.OffDuty)
			}
		}
		think(c, rnd, w.Think)
	}
}

// turn reads the other doctors' rows, then its own (last, so that a pause
// after the first read falls between the reads that decide and the write),
// then goes off call if another doctor is on call, or back on call if it is
// off. It reports whether the doctor went off call.
func (w OnCall) turn(c Client, me int, lease lockapi.Lease) (off bool) {
	others := 0
	for i := 1; i <= w.Doctors; i++ {
		if i == me {
			continue
		}
		v, err := Read(c, w.Row(i), lease)
		if err != nil {
			return false
		}
		if v != 0 {
			others++
		}
	}
	mine, err := Read(c, w.Row(me), lease)
	if err != nil {
		return
	}
	switch {
	case mine == 0:
		c.Env.Sleep(w.Hold)
		_ = Write(c, w.Row(me), 1, lease)
	case others > 0:
		c.Env.Sleep(w.Hold)
		return Write(c, w.Row(me), 0, lease) == nil
	}
	return false
}

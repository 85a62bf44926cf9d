package raftkv

import (
	"time"

	"github.com/locklab/locklab/backends"
	"github.com/locklab/locklab/backends/raftkv/lockfsm"
)

// truth records the lock state machine's grants as the ground truth of a
// simulated run: each log entry once, when the first node applies it, with
// leases counted from the true time the command was stamped.
type truth struct {
	log     *backends.GrantLog
	applied map[uint64]uint64 // log index -> term of the entry recorded there
	stamps  map[stampKey]stamping
}

type stampKey struct {
	session string
	seq     uint64
	stamp   int64
}

// stamping is when (true time) and for which client node a command got its
// stamp.
type stamping struct {
	at     time.Duration
	client string
}

// RecordGrants makes the cluster record in log every grant, renewal and
// release its state machine makes (scope "raft"). Call it before the run.
func (c *Cluster) RecordGrants(log *backends.GrantLog) {
	c.truth = &truth{log: log, applied: map[uint64]uint64{}, stamps: map[stampKey]stamping{}}
}

// stamped notes that cmd got its stamp at true time at, for client.
func (t *truth) stamped(cmd lockfsm.Command, client string, at time.Duration) {
	if t == nil || !t.log.Recording() {
		return
	}
	k := stampKey{cmd.Session, cmd.Seq, cmd.Stamp}
	if _, seen := t.stamps[k]; !seen {
		t.stamps[k] = stamping{at: at, client: client}
	}
}

// entry records what the command of the entry at index (of term) did, the
// first time any node applies it: prev and held are the key's owner before.
func (t *truth) entry(node string, index, term uint64, cmd lockfsm.Command, res lockfsm.Result, prev lockfsm.Owner,
	held bool, now time.Duration) {
	if t == nil || !t.log.Recording() {
		return
	}
	if was, seen := t.applied[index]; seen && was == term {
		return
	}
	t.applied[index] = term
	if !res.Success || res.Duplicate {
		return
	}
	st, ok := t.stamps[stampKey{cmd.Session, cmd.Seq, cmd.Stamp}]
	if !ok {
		st = stamping{at: now}
	}
	until := st.at + cmd.Lease
	switch res.Code {
	case lockfsm.FirstTimeSuccess, lockfsm.NewAcquireSuccess:
		t.log.Granted("raft", node, cmd.Key, cmd.Acquirer, st.client, now, until)
	case lockfsm.ReentrantSuccess, lockfsm.KeepLeaseSuccess:
		t.log.Renewed("raft", cmd.Key, cmd.Acquirer, now, until)
	case lockfsm.UnlockSuccess:
		if held && prev.Acquirer == cmd.Acquirer && res.Owner.Acquires == 0 {
			t.log.Released("raft", cmd.Key, cmd.Acquirer, now)
		}
	}
}

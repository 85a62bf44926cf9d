package raftkv

import (
	"time"

	"github.com/locklab/locklab/backends/raftkv/lockfsm"
	"github.com/locklab/locklab/lockapi"
)

// truth records the lock state machine's grants as the ground truth of a
// simulated run: each log entry once, when the first node applies it, with
// leases counted from the true time the command was stamped.
type truth struct {
	log     *lockapi.GrantLog
	applied []uint64 // by log index: term of the entry recorded there (0: none yet)
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
func (c *Cluster) RecordGrants(log *lockapi.GrantLog) {
	c.truth = &truth{log: log, stamps: map[stampKey]stamping{}}
	if c.mem != nil {
		c.truth.applied, c.mem.truth = c.mem.truth, nil
	}
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

// first reports whether the entry at index (of term) is applied for the
// first time by any node and is to be recorded, and notes that it was: then
// the caller records what it did with entry.
func (t *truth) first(index, term uint64) bool {
	if t == nil || !t.log.Recording() {
		return false
	}
	t.applied = extend(t.applied, index)
	if t.applied[index] == term {
		return false
	}
	t.applied[index] = term
	return true
}

// entry records what the command of an entry did the first time a node
// applied it (first said so): prev and held are the key's owner before.
func (t *truth) entry(node string, cmd lockfsm.Command, res lockfsm.Result, prev lockfsm.Owner, held bool, now time.Duration) {
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

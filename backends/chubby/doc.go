// Package chubby models a Chubby cell (Burrows, OSDI 2006) in the simulator:
// replicas cb1..cbN with an elected master, sessions whose leases the master
// extends with every KeepAlive and expires on its own clock, exclusive lock
// files whose grants carry a sequencer (lock name, mode, generation number),
// and lock-delay: when a holder's session is lost without a clean release,
// the master refuses the lock to everyone for lock-delay.
//
// Consensus is etcd raft, run as backends/raftkv and backends/zookeeper run
// it (the master is the raft leader that hears from a quorum; the paper's
// Paxos plays the same part).
//
// Lock-delay across a master change. The paper (section 2.4) has the lock
// server refuse a lock freed by its holder's failure for the lock-delay; its
// fail-over (section 2.9) has a new master rebuild sessions and locks from
// the database, discard the old master's in-memory state, and extend every
// session's lease "to the maximum that the previous master may have been
// using". It does not say that the lock-delay is replicated. Here it is not:
// the master keeps it on its own clock, as it keeps the session leases. What
// a new master does know, from the log, is which locks were freed by a
// session's expiry and not granted since; not when the old master's
// lock-delay of them started. So, as with the leases, it assumes the most the
// old master may still have had to run: a whole lock-delay of every such
// lock from its own election (issue 28: a new master used to start without
// any, and granted such a lock at once under pauses alone). A lock freed by
// expiry and never taken since is thus delayed again after every fail-over.
//
// The client keeps a conservative local lease (it starts when a KeepAlive is
// sent, so it ends before the master's); a holder believes it holds until
// that local lease runs out (jeopardy). Not modelled: the grace period's
// recovery of a session across a master failover beyond the fresh lease, shared
// locks, and CheckSequencer from the storage (the storage's check mode).
package chubby

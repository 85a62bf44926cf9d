// Package chubby models a Chubby cell (Burrows, OSDI 2006) in the simulator:
// replicas cb1..cbN with an elected master, sessions whose leases the master
// extends with every KeepAlive and expires on its own clock, exclusive lock
// files whose grants carry a sequencer (lock name, mode, generation number),
// and lock-delay: when a holder's session is lost without a clean release,
// the master refuses the lock to everyone for lock-delay.
//
// Consensus is etcd raft, run as backends/raftkv and backends/zookeeper run
// it (the master is the raft leader that hears from a quorum; the paper's
// Paxos plays the same part). The lock-delay is kept by the master on its
// own clock and is not replicated: a new master starts without any (and
// grants every session a fresh lease, as the paper's failover does).
//
// The client keeps a conservative local lease (it starts when a KeepAlive is
// sent, so it ends before the master's); a holder believes it holds until
// that local lease runs out (jeopardy). Not modelled: the grace period's
// recovery of a session across a master failover beyond the fresh lease, shared
// locks, and CheckSequencer from the storage (the storage's check mode).
package chubby

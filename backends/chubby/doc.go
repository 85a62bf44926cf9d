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
// The lock-delay in the history. Each master tells of its lock-delay of a
// lock as a window (Event "lock-delay", recorded as a system event of the
// lock's key): it opens when the master starts it (at a session's expiry, or
// at its election for a lock freed by an expiry and not granted since) and
// closes when it runs out on the master's clock, or when that master stops
// being master (it crashed or lost its leadership). The liveness check
// counts the lock as held back by design, not free, meanwhile (issue 28).
//
// The client keeps a conservative local lease (it starts when a KeepAlive is
// sent, so it ends before the master's); a holder believes it holds until
// that local lease runs out (jeopardy).
//
// The record of grants (Cell.RecordGrants, the ground truth of a simulated
// run): a grant starts when the acquire that gave a free lock is first
// applied; its promise is its session's lease, extended in true time by every
// master's contact with the session (a KeepAlive or any request it answered,
// the session's opening, a new master's fresh lease); a clean release ends
// it. Lock-delay is recorded as a further promise to the holder whose
// session expired: the grant's promise is extended to the expiry plus the
// lock-delay, so a grant to another inside it is a breach in the record.
//
// # Fidelity
//
// The behaviours that matter for a lock, after the paper (section numbers
// are its), whether they are modelled, and what shows it. Chubby is not
// available outside Google: there is no live mode and no live row.
//
//   - Sessions and leases (2.8): the master extends a session's lease (12 s)
//     on every KeepAlive and expires it on its own monotonic clock (clock
//     drift moves it, a wall-clock jump does not). Modelled. Shown by the
//     scenario kleppmann-gc-pause/chubby-unsafe and TestLockDelaySurvivesAMasterChange.
//   - The client's conservative local lease (2.8): counted from the
//     KeepAlive's sending, so it ends before the master's. Modelled. Shown by
//     TestClientLeasesCountFromTheRequest/chubby (every client deadline
//     within what the masters promised).
//   - KeepAlive blocking (2.8): the master holds a KeepAlive until the lease
//     is nearly over. Not modelled: it answers at once; the client sends one
//     every lease/3.
//   - Jeopardy and the grace period (2.8): modelled as the client giving its
//     session up 45 s after its local lease ran out; the jeopardy and safe
//     events are not delivered to the application.
//   - A KeepAlive nobody answered is an unknown renewal, not a lost lock.
//     TestAKeepAliveWithNoReplyIsUnknown.
//   - Exclusive locks with sequencers (2.4): lock name, mode, generation.
//     Modelled; shared (reader) locks are not. Shown by TestState and
//     kleppmann-gc-pause/chubby-fixed (storage fenced by the generation).
//   - CheckSequencer (2.4): the storage asks the master whether a sequencer
//     is current; the check and the write are not atomic. Modelled (storage
//     check mode). Shown by chubby-check-sequencer/unsafe; the resource's own
//     comparison with the highest sequencer it saw is the fenced storage
//     (chubby-check-sequencer/fixed).
//   - Lock-delay (2.4): after an unclean loss (session expiry) nobody else
//     gets the lock for the lock-delay (1 min); none after a clean release.
//     Modelled, any duration (the paper bounds it at one minute). Shown by
//     chubby-lock-delay (unsafe, fixed, fixed-sequencer) and TestState. An
//     acquire the master let through just before the expiry is refused when
//     the expiry is applied first (TestState). Its windows are recorded in
//     the history (TestLockDelayWindowsAreReported).
//   - Lock-delay across a fail-over (2.4, 2.9): see above; a whole lock-delay
//     from the new master's election. TestLockDelaySurvivesAMasterChange.
//   - Fail-over (2.9): the new master rebuilds sessions and locks from the
//     replicated state and gives every session a fresh lease. Modelled; the
//     client epoch number, the fail-over event and the master's wait for
//     every session's acknowledgement are not.
//   - The master lease (2.1): the paper's master promises for a few seconds
//     that no other master is elected. Modelled differently: the raft leader
//     (pre-vote on) acts as master only while it has heard from a quorum
//     within the election timeout, so a deposed master may answer for up to
//     that long. The conformance suite (TestEveryRegisteredSystemConforms:
//     every fault kind on the master, partitioned, then crashed) and the
//     ground-truth sweep
//     (TestLockVerdictsAgreeWithTheServers/chubby) run fail-overs.
//   - Replicated state surviving crashes (2.1, 2.2): the raft log of every
//     replica survives a crash; the master's in-memory state does not.
//     Modelled. TestLockDelaySurvivesAMasterChange (the master crashes; its
//     successor rebuilds from the log).
//   - Retries: a request is retried with the same sequence number, but the
//     master does not deduplicate; a retried acquire by the holder is
//     idempotent, a retried release after a lost reply is an unknown outcome
//     (the paper does not describe at-most-once delivery).
//     TestReleaseAfterALostReplyIsUnknown.
//   - Not modelled and not needed by a lock: the file namespace's contents,
//     caching and invalidations, events, handles, ACLs, ephemeral files,
//     proxies and partitioning.
package chubby

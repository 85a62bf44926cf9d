// Package guide is coverage-guided exploration: instead of drawing each
// run's faults blindly (swarm random), it keeps a corpus of schedules that
// reached new coverage and mutates them, in the manner of greybox fuzzing
// (AFL), with the coverage of a run abstracted in the lock's own terms
// (Mallory, CCS 2023, guides fault injection by the states it reaches;
// model-guided fuzzing, OOPSLA 2025, by an abstract model's states).
//
// Coverage (see Coverage) is a set of features: for every fault, its kind,
// the role of the node it hit (holder, waiter, idle client, a server that
// granted the current lock, another server, the storage) and the protocol
// phase that node was in when the fault began (acquiring, held, read,
// writing, written, releasing, renewing; for servers whether the lock was
// held); and lock-level events (a storage operation after the lease ran out,
// a grant by a restarted, promoted or clock-skewed server, a stale write
// rejected, outcomes unknown, a failed release, a grant that rests on a bare
// quorum, a server a holder's grant rests on restarted or had its clock moved
// while that holder still held the lock, and each kind of overlap).
//
// Search starts with swarm-random runs (the first Fresh of them), then
// mostly mutates corpus entries. A parent is drawn by its energy: the sum,
// over the features its run covered, of 1/(runs that covered the feature),
// so entries that reached what few runs reach are mutated most (a rarity
// power schedule). Half the mutations (three in four when the hunt's kind
// has directed attacks) are one targeted placement alone, and three in four
// of those also drop the parent's faults that would start after the
// placement's anchor, so that what the placed fault sets off plays out
// undisturbed; the others are one to three of: add a random fault, drop one,
// move one by up to ±10 s, retarget one, scale its duration and amount (×1/8
// to ×4), place it right after a client's protocol step (a trigger), splice
// in a fault of another corpus entry, change the seed of the rest of the
// world, or a targeted placement (three times as likely as each other).
//
// A targeted placement is an attack in the lock's terms — pause or isolate
// the holder, delay its writes, move its clock; crash (restarting within
// the hold, half the time), isolate, pause or move the clock of a server
// that granted the hold; set another server's clock ahead — anchored by a
// trigger on one of the parent's holdings: right after the grant (three
// times in four for an attack on a granter), a random time into the
// holding, or (three times in four) right after one of the holder's own
// protocol steps in it (its read, its write sent, its release: the phase the
// attack aims at; for an attack on the holder, a step before its last
// storage operation, which the attack is to make late). Half the attacks on
// the holder's clock land while its acquire is under way instead (a
// validity measured on the wall clock, an expiry written from it), half of
// those as a pause right after the acquire is sent and a step back of its
// clock by as long when the pause ends. A grant
// that rests on a bare quorum is the anchor half the time; a holding in the
// last quarter of the run is not one. The parent's run is the same up to
// the anchor, so the fault lands where it aims. Durations, jumps and delays
// are drawn relative to the system's timing: around what is left of the
// holder's lease, and for an attack on the holder mostly beyond it (a
// pause that ends before the deadline shows nothing), or around the
// system's timeouts (the sum of its duration options, defaults included:
// session timeout, lock-delay, failover timing). An attack that cuts off or
// pauses a granter first, half the time, delays the granter's messages to
// the other servers from the acquire's invocation on (replication that
// lags), with one of them cut off with the granter half the time (it
// acknowledged the grant: WAIT), so that the replica the monitor promotes
// has not seen the grant. Three placements in four are directed
// (Directed): the attacks whose fault, in that phase, the hunt's kind of
// violation names as its cause (a pause of the holder for gc-pause, a crash
// of a granter for restart-regrant, ...).
//
// Fresh draws never stop: after the first Fresh runs (default 4), the
// share of runs that are fresh draws falls as Fresh/runs, to one in
// FreshEvery. The k-th fresh draw is the hunt's test of
// seed Start+k: the runs a swarm sweep from Start makes, in order. So a
// guided search is that swarm sweep with mutations interleaved: it finds
// what the sweep finds in its first Fresh runs at the same run, and the
// comparison (explore --compare) measures what the mutations add.
// Every run is a full simulated run of the hunt's length, so runs counted by
// Search and by harness.Hunt.Sweep are comparable.
//
// A search aims at a Target: a catalog hunt (HuntTarget: the hunt's variant
// with swarm-random faults, stopped by the hunt's kind of violation), or any
// base test with a fault family and a stop predicate — a cell of the safety
// matrix, say. A family of one fault kind keeps the whole search within it:
// fresh draws are that kind's random nemesis, mutations add, retarget, place
// and splice faults of that kind only, and the placements are the attacks
// made of it (for pause, the holder paused beyond its lease or a granter
// paused; for crash, a granter crashed; ...), directed at them. OnRun is
// told of every run, so that a caller can count what the runs showed.
//
// Search is deterministic from its seed (and Start): one PCG stream drives every
// choice, and corpus features are kept in sorted order, so the same seed
// gives the same corpus and the same finding.
package guide

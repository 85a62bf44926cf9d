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
// power schedule). Half the mutations are one targeted placement alone;
// the others are one to three of: add a random fault, drop one, move one by
// up to ±10 s, retarget one, scale its duration and amount (×1/8 to ×4),
// place it right after a client's protocol step (a trigger), splice in a
// fault of another corpus entry, change the seed of the rest of the world,
// or a targeted placement (three times as likely as each other). A targeted
// placement is an attack in the lock's terms — pause or isolate the holder,
// delay its writes, move its clock; crash (restarting within the hold, half
// the time), isolate, pause or move the clock of a server that granted the
// hold; set another server's clock ahead — started right after (a random
// time into) one of the parent's holdings by a trigger on that acquire, with
// durations, jumps and delays around what was left of the lease (half to
// four times it). A grant that rests on a bare quorum is the anchor half
// the time. The parent's run is the same up to the anchor, so the fault
// lands where it aims. Three placements in four are directed (Directed): the
// attacks whose fault, in that phase, the hunt's kind of violation names as
// its cause (a pause of the holder for gc-pause, a crash of a granter for
// restart-regrant, ...).
//
// Fresh draws never stop: the share of runs that are fresh draws falls as
// Fresh/runs, to one in FreshEvery. The k-th fresh draw is the hunt's test of
// seed Start+k: the runs a swarm sweep from Start makes, in order. So a
// guided search is that swarm sweep with mutations interleaved: it finds
// what the sweep finds in its first Fresh runs at the same run, and the
// comparison (explore --compare) measures what the mutations add.
// Every run is a full simulated run of the hunt's length, so runs counted by
// Search and by harness.Hunt.Sweep are comparable.
//
// Search is deterministic from its seed (and Start): one PCG stream drives every
// choice, and corpus features are kept in sorted order, so the same seed
// gives the same corpus and the same finding.
package guide

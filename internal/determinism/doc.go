// Package determinism enforces, as a test, the rules that keep the simulator
// replayable from its seed: the simulated packages (sim, backends, lockapi,
// storage, workloads, nemesis) must not read the machine's clock or sleep on
// it, must not use global or crypto randomness, must not start goroutines of
// their own, and must not range over maps (whose order is random). A line that must break a rule
// for a reason that cannot change an outcome carries the comment
// "determinism:ok <reason>".
package determinism

// Package harness wires a run together: a Test names a lock system (with its
// options), a workload, the storage mode, a fault schedule or generator, a run
// length and a seed; Run builds the simulated world from them, runs it, checks
// the history and returns a Result.
//
// The registries of systems and workloads live here, so adding a backend means
// adding one entry to Systems. Names a fault schedule may use are resolved here
// too: client names (c1, c2, ...), server names (redis, ...), "storage",
// "clients", "servers" and whatever a system adds.
//
// Run is deterministic: the same Test gives the same history, byte for byte.
package harness

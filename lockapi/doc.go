// Package lockapi holds the contract between workloads and the lock services
// under test: the Lock client interface, the Lease it grants, the protected
// Storage, the client's Env (clock, sleep, randomness), the errors that
// classify every outcome as certain or unknown, and the servers' own records
// of grants and applied writes (the ground truth of a simulated run).
//
// Each lock system is a package under backends/ (redis, control, ...) that
// provides its server models (event-driven sim.Handlers) and a client library
// implementing Lock on top of a sim.Proc. The protected resource is package
// storage. The
// same interfaces will be implemented by live clients against real servers, so
// nothing here mentions the simulator.
//
// Outcome rules (Jepsen's, as every backend must apply them): an operation
// returns nil when it certainly happened, an error wrapping ErrUnknown when it
// may or may not have happened (a timeout of a request that changes state), and
// any other error only when it certainly did not happen.
//
// Ground truth: in the simulator, each system's servers also record the grants
// they make in a GrantLog (key, owner, the true time of the grant, the lease
// end they promised, renewals, releases). The record never enters the history
// — a history holds only what clients observed — but a run exposes it, so the
// verdicts judged from the history can be checked against what the servers
// actually did (GrantLog.Breaches: two owners holding one lock at once, or a
// lock deleted under its owner).
package lockapi

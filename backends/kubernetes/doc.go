// Package kubernetes models Kubernetes leader election: client-go's
// tools/leaderelection package over a coordination.k8s.io/v1 Lease
// (resourcelock.LeaseLock), stored by API servers in etcd — the lock every
// Kubernetes controller and operator runs. It registers the system
// "kubernetes", its options, designs and catalog scenarios.
//
// The model follows client-go at commit
// 32ce75a7d6bc6960fd048d3d1e3b34185418d8c8 (master, 2026-07-24):
// tools/leaderelection/leaderelection.go and resourcelock/leaselock.go.
//
// # The servers
//
// The etcd cluster is backends/etcd's (etcd1..3 or 5 on etcd raft, its MVCC
// store), imported, not copied. In front of it run the API servers
// apiserver1..N (1 or 3), each a node with its own etcd client connection,
// so that a client can be cut off from an API server and an API server from
// etcd. An API server keeps the Lease <name> at /registry/leases/default/<name>
// as the record holderIdentity, leaseDurationSeconds, acquireTime,
// renewTime, leaseTransitions; its resourceVersion is the key's mod
// revision. A get is a linearizable read; a create is Txn(If
// CreateRevision==0 Then Put), 409 AlreadyExists otherwise; an update is
// Txn(If ModRevision==resourceVersion Then Put), 409 Conflict when stale,
// 404 when absent. An etcd request that timed out is answered 504 (the
// write may have happened), one that etcd certainly refused 500.
//
// # The elector
//
// Client is LeaderElector with a LeaseLock;
// one elector per Lease for the client's lifetime (its observed record and
// observedTime survive from one Acquire to the next, as in a process that
// runs the elector again). Acquire is acquire(): tryAcquireOrRenew at once
// and then every RetryPeriod jittered by JitterFactor 1.2
// (wait.JitterUntil), until the wait budget (the context) runs out.
// tryAcquireOrRenew is client-go's, step by step: the leader's optimistic
// update with its cached resourceVersion when the observed record names it
// and is still valid; else get; create when absent; take over only when the
// record is not held, or has not changed (byte for byte) for
// leaseDurationSeconds since observedTime — a reading of the candidate's
// own monotonic clock, so a wall-clock offset or jump changes nothing, a
// rate error does; leaseTransitions + 1 on a takeover. Once leading, a
// process of the client runs renew(): a poll of tryAcquireOrRenew at once
// and every RetryPeriod (each request bounded by the poll's context) that
// gives up RenewDeadline after it started (OnStoppedLeading); the next poll
// starts RetryPeriod after a success; the poll's ticker ticks every
// RetryPeriod from its start and the poll ends at its deadline. The lease
// handed to the workload has as Deadline the end of the current poll, plus
// RenewDeadline with ReleaseOnCancel: client-go's renew() calls release()
// before it returns, and only then does Run cancel OnStartedLeading's
// context. An answer read only after its context's deadline (the client
// was paused meanwhile) races the deadline as Go's select does: option
// late-answer (either, drawn from the seeded stream and told in the
// history; expired; answered). Release cancels the context (the renewal in
// flight is abandoned); with ReleaseOnCancel, client-go's release()
// follows (also when the renew loop gave up), as option client-go says: 0.33
// updates with the cached resourceVersion (409 Conflict when the Lease
// changed); 0.36 (v0.34.0 to v0.36, the default) gets the Lease first and,
// if the record last observed names this elector (IsLeader, not the record
// just fetched), updates it with the fetched resourceVersion — whoever
// holds the Lease by then (kubernetes-release-on-cancel/client-go-0.36);
// 0.37 (pre-releases) also retries on Conflict. The identity is the node's
// name, "_" and a UUID per process (option identity=node: the node's name).
// The API server validates the Lease as kube-apiserver's ValidateLeaseSpec
// does: a lease-duration under 1 s is written as 0 seconds and every write
// is refused, 422 Invalid: nobody leads
// (kubernetes-many-candidates/sub-second). Options are refused the way
// NewLeaderElector refuses them, naming the option
// (TestOptionsAreRefusedAsNewLeaderElectorRefusesThem).
//
// # The workload
//
// The system's matrix rows and catalog scenarios run the leader-election
// workload (RowWorkload, workloads.LeaderElection), as controllers use
// client-go's elector: a candidate runs for leadership (Acquire), works with
// its token while it leads (Client.Leading: until the renew loop, and with
// ReleaseOnCancel its release, has returned, as Run cancels
// OnStartedLeading's context) or until it is told to stop, then runs again.
// A leader that crashes is followed by a standby after LeaseDuration plus
// about 1.2 RetryPeriods at the median and 3.1 at p99 with one standby:
// the standby's jittered tries (RetryPeriod plus up to JitterFactor 1.2
// RetryPeriod) delay both its observation of the last renewal and its
// takeover (TestFailoverAfterALeaderCrash).
//
// # Fencing and the guard
//
// client-go hands no token. Option fencing gives the workload one:
// leaseTransitions + 1 of the record that made the client leader, or the
// resourceVersion of that write; the storage node checks it
// (kubernetes-paused-leader/fixed, /fixed-resource-version). The write-side
// guard — a write to an object in the API server conditional on the Lease's
// resourceVersion in the same transaction — is not built: the Kubernetes
// API has no transaction across two objects (an update's precondition names
// the object's own resourceVersion only), so option resource=apiserver is
// refused with that error.
//
// # Ground truth
//
// The record of holders (lockapi.GrantLog, scope "kubernetes") is kept by
// the API servers: each Lease record an API server reads or writes at a
// resourceVersion newer than any seen is a grant (new holder), a renewal
// (same holder) or a release (no holder), at the true time it saw it; a
// grant's promise is then plus leaseDurationSeconds. A takeover does not end
// the earlier grant: its promise does (TestTheRecordOfGrants). A release
// written by a client other than the holder removes the holder's lock, a
// broken promise (TestAReleaseWithAnOldObservationIsARemovalInTheRecord).
//
// # Not modelled
//
// Coordinated leader election (LeaseCandidate objects, the coordinated
// strategy), the legacy Endpoints and ConfigMap locks and MultiLock, the
// API servers' watch cache (a get goes to etcd, as a get with no
// resourceVersion does), admission, authentication, API priority and
// fairness, HTTP/2 connection behaviour beyond one connection per client
// that moves to the next API server after a timeout, and the OnNewLeader
// callback. There is no live form: a real kube-apiserver cannot run on this
// machine (no Debian package; k8s.io/kubernetes cannot be a dependency), so
// client-go's real package is never run against one. The fidelity table is
// docs/fidelity/kubernetes.md.
package kubernetes

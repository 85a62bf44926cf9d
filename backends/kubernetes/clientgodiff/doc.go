// Package clientgodiff is the differential test of the simulated Kubernetes
// leader election (backends/kubernetes) against the real one: client-go's
// tools/leaderelection over a LeaseLock, run in a testing/synctest bubble
// (virtual time) against a fake Lease API, and the model run in the
// simulator against a scripted API server node. Both are driven by the same
// random schedule of API answers (latencies, errors, timeouts, writes by
// another holder) and the same jitter draws, and must send the same Lease
// requests — get, create, update, with the same record and resourceVersion —
// at the same times, and start and stop leading at the same times.
//
// It is its own Go module so that k8s.io/client-go never enters the main
// module's dependencies; .ci/run tests it in a block of its own:
//
//	cd backends/kubernetes/clientgodiff && go test ./...
package clientgodiff

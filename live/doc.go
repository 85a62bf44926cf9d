// Package live runs a locklab test in real time against real code: the
// same workloads, through the same backends interfaces, recorded by the same
// history recorder and judged by the same checks as a simulated run, with
// the same run directory and report.
//
// Clients are goroutines; the history's true time is the harness's
// monotonic clock since the workload started. The seed fixes every choice
// locklab makes (the workload's randomness, the random fault schedule), but
// not the outcome: goroutine scheduling and hashicorp/raft's own timers and
// randomness differ from run to run, so a live run is not replayable byte
// for byte, and its report says so.
//
// Faults come from the same schedule JSON. A fault a live system cannot
// perform (clock drift; a crash of a client or of the storage) is refused
// before the run with an error naming the fault. A run stops at its time, on
// an error, or when its context is cancelled (Ctrl-C), and leaves nothing
// behind: the cluster is shut down and every goroutine it started ends.
//
// Scale multiplies every duration of a test (run time, fault times and
// amounts, workload and system durations, hashicorp/raft's timeouts), so a
// scenario written for the simulator can run live in a tenth of its time
// with the same proportions.
//
// Systems with a live form: raftkv (hashicorp/raft, in-process; see
// backends/raftkv/live); redis (redis-server, with replicas=N a primary,
// replicas and redis-sentinel; go-redis) and redlock (independent
// redis-server instances; redsync), whose live forms register from
// backends/redis/live and backends/redlock/live; database (a real
// PostgreSQL server with pgx clients; see backends/database/live); etcd
// (real etcd-server members and clientv3; see backends/etcd/live) and
// zookeeper (a real ZooKeeper ensemble and go-zookeeper; see
// backends/zookeeper/live). Nothing simulated imports this package.
package live

// Package libmode is library mode: a lock library a program really uses
// (bsm/redislock, go-redsync/redsync, a user's own code over go-redis),
// unmodified, run from a go test in virtual time against locklab's
// simulated Redis instances, under faults, with the project's checks on
// the history and the servers' record of grants behind the verdicts.
//
//	func TestMyLock(t *testing.T) {
//		res := libmode.Run(t, libmode.Config{
//			NewLock: func(c *libmode.Client) (libmode.Lock, error) {
//				rdb := redis.NewClient(c.RedisOptions(0)) // go-redis's defaults, the in-memory dialer
//				return myLock{redislock.New(rdb)}, nil       // names the library's acquire and release
//			},
//			Faults: []libmode.Fault{libmode.PauseInCriticalSection{After: 2 * time.Second, For: 3 * time.Second}},
//		})
//		t.Log(res.Summary())
//	}
//
// # How it runs
//
// Run opens a testing/synctest bubble: inside it the time package runs on
// a fake clock that advances only when every goroutine of the bubble is
// durably blocked, so the library's goroutines, time.Now, timers, tickers,
// select and context deadlines all run in virtual time, as written.
//
// The instances, the storage the workload protects and the network are
// one goroutine, the kernel. A client's connection is a net.Conn whose
// reads wait on channels of the bubble (durably blocking); the bytes a
// client writes reach the kernel, which delivers them after the link's
// latency to the instance's RESP front end (package
// backends/redis/engine: ParseCommand, Session, AppendReply; RESP2 and
// RESP3 through HELLO) and sends the replies back the same way. Before each
// delivery the kernel waits until every other goroutine is durably blocked
// (synctest.Wait), so deliveries are serialised in the order (virtual
// time, link, sequence number) whatever the Go scheduler does, and a
// message's latency is drawn from the seed and the message's identity,
// never from a stream shared by goroutines. crypto/rand, which lock
// libraries draw their values from, is seeded by testing/cryptotest.
//
// Each client runs the fenced-counter workload as a goroutine: acquire
// (the user's Lock.Acquire), read the storage cell, hold, write read+1
// with the lease's token, release, think. The history it records goes
// through the project's checks (models); the instances record every grant
// in a lockapi.GrantLog (which owner held which lock key, when, until
// when), the storage every write in a lockapi.WriteLog, and Result.Outlived
// ties each lost update to the grants that explain it.
//
// # Faults and what a pause means
//
// PauseClient and PauseInCriticalSection freeze a client's connections
// (nothing it sends or is sent gets through until the pause ends) and its
// workload (the critical section does not move on). The library's own
// goroutines and timers keep running: in a bubble a pause is not a
// stop-the-world pause of the client's process, and every result that
// paused a client says so (Result.Note). Partition cuts clients from
// instances, holding (delivered at the heal), lossy (the connection goes
// silent) or rejecting (reset at once). ClockJump moves an instance's wall
// clock, which its TTLs follow. Crash resets an instance's connections and
// restarts it empty or with its data; Delay slows the messages of chosen
// links for a while.
//
// # Search, shrinking and replay
//
// Every run's faults are also in the schedule form of package nemesis
// (Result.Schedule, the JSON a schedule file holds), and Scheduled runs a
// fault of that form: its start at a time or right after a client's event,
// a pause's end at another client's event. Replay runs a schedule.
// Random runs seeds with drawn faults (DrawFaults); Guided runs every
// placement of a single pause that package placement enumerates (anchored
// at the clients' acquires and reads, ended at another client's steps or
// lasting around the library's timeouts) and states the bound; Shrink
// reduces a finding (ddmin over the faults, shorter faults, fewer
// clients, a shorter run) keeping the same failure; Search does the three
// and writes the finding's run directory (WriteReport: report.html,
// schedule.json, the servers' record) with the go test line that replays
// it (LIBMODE_REPLAY). Package userlocktest's SearchLibrary is the same
// search for a library named by its acquire and release.
//
// # Blocking outside the bubble
//
// A goroutine blocked on something the bubble cannot see (a real socket, a
// DNS lookup, a mutex held for ever, a system call) stops virtual time. A
// watchdog outside the bubble notices that the kernel made no step for
// Config.StuckAfter of real time and ends the test binary with the stacks
// of the bubble's goroutines that are blocked but not durably: the
// goroutine and the call that left the bubble.
package libmode

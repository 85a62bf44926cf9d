package lockfsm

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkApply is a replica applying a raftkv run's mix: five clients
// contending for one key with try-locks under their own sessions, the
// holder's watchdog renewing its lease and the holder unlocking.
func BenchmarkApply(b *testing.B) {
	const clients = 5
	var cmds []Command
	seqs := map[string]uint64{}
	next := func(session string) uint64 { seqs[session]++; return seqs[session] }
	stamp := int64(0)
	for round := range 200 {
		holder := fmt.Sprintf("c%d", round%clients)
		for i := range clients {
			c := fmt.Sprintf("c%d", (round+i)%clients)
			stamp += int64(time.Millisecond)
			cmds = append(cmds, Command{Op: OpTryLock, Key: "k", Acquirer: c + ":k", Lease: 10 * time.Second,
				Context: []byte("n" + c), Stamp: stamp, Session: c, Seq: next(c)})
		}
		stamp += int64(time.Millisecond)
		cmds = append(cmds, Command{Op: OpKeepLease, Key: "k", Acquirer: holder + ":k", Lease: 10 * time.Second,
			Stamp: stamp, Session: holder + "/watchdog:k", Seq: next(holder + "/watchdog:k")})
		stamp += int64(time.Millisecond)
		cmds = append(cmds, Command{Op: OpUnlock, Key: "k", Acquirer: holder + ":k", Stamp: stamp, Session: holder, Seq: next(holder)})
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m := New(Config{})
		for _, c := range cmds {
			if _, err := m.Apply(c); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(cmds)), "ns/command")
}

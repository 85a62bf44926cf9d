package sim

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkKernelEvents measures raw kernel throughput: each event schedules the
// next, with 1,000 events always pending (a realistic queue depth).
func BenchmarkKernelEvents(b *testing.B) {
	w := NewWorld(Config{})
	var tick func()
	tick = func() { w.After(time.Millisecond, tick) }
	for i := range 1000 {
		w.At(time.Duration(i)*time.Microsecond, tick)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkNodeTimers measures node-gated timer events (what servers use).
func BenchmarkNodeTimers(b *testing.B) {
	w := NewWorld(Config{})
	n := w.AddNode("n", NodeOptions{})
	var tick func()
	tick = func() { n.SetTimer(time.Millisecond, tick) }
	for range 100 {
		n.SetTimer(0, tick)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.Step()
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkProcSwitch measures one sleep of a client process: the coroutine
// yields to the kernel and is resumed by a timer event (two switches).
func BenchmarkProcSwitch(b *testing.B) {
	w := NewWorld(Config{})
	n := w.AddNode("n", NodeOptions{})
	n.Spawn("sleeper", func(p *Proc) {
		for {
			p.Sleep(time.Microsecond)
		}
	})
	w.Step() // start it
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		w.Step()
	}
	b.StopTimer()
	w.Close()
}

// BenchmarkRPC measures a request/reply round trip between a client process and
// a server model over the simulated network.
func BenchmarkRPC(b *testing.B) {
	w := NewWorld(Config{})
	srv := w.AddNode("srv", NodeOptions{Handler: &echo{}})
	cl := w.AddNode("cl", NodeOptions{})
	calls := 0
	cl.Spawn("client", func(p *Proc) {
		for {
			if _, err := p.Call(srv.ID(), 1, time.Second); err != nil {
				panic(err)
			}
			calls++
		}
	})
	b.ReportAllocs()
	b.ResetTimer()
	for calls < b.N {
		w.Step()
	}
	b.StopTimer()
	w.Close()
}

// BenchmarkRunUntilObserved measures RunUntil with an observer called every
// 4096 events (what the harness installs for progress and memory bounds);
// compare with every=0 (no observer).
func BenchmarkRunUntilObserved(b *testing.B) {
	for _, every := range []uint64{0, 4096} {
		b.Run(fmt.Sprintf("every=%d", every), func(b *testing.B) {
			w := NewWorld(Config{})
			var tick func()
			tick = func() { w.After(time.Millisecond, tick) }
			for i := range 1000 {
				w.At(time.Duration(i)*time.Microsecond, tick)
			}
			calls := 0
			w.Observe(every, func() { calls++ })
			b.ReportAllocs()
			b.ResetTimer()
			for w.Processed() < uint64(b.N) {
				w.RunUntil(w.Now() + time.Second)
			}
			b.ReportMetric(float64(w.Processed())/b.Elapsed().Seconds(), "events/s")
		})
	}
}

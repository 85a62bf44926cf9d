package live

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/liveform"
)

// TestOverlappingCrashesAndPausesOfAServerAreCounted: two crashes (pauses)
// of one server that overlap kill (stop) it once and restart (resume) it
// once, when the last ends, as in the simulator; the two ends may come at
// once (two faults that end at the same moment) and never start two
// processes on its port.
func TestOverlappingCrashesAndPausesOfAServerAreCounted(t *testing.T) {
	for _, tc := range []struct {
		name string
		ends string // the order the two faults end: "seq" or "together"
	}{
		{"the first ends, then the second", "seq"},
		{"both end at the same moment", "together"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var calls []string
			do := func(what string) func(string) error {
				return func(n string) error {
					mu.Lock()
					calls = append(calls, what+" "+n)
					mu.Unlock()
					return nil
				}
			}
			sys := &liveform.Deployed{Description: liveform.Description{Servers: []string{"redis"}},
				Crash: do("crash"), Restart: do("restart"), Pause: do("pause"), Resume: do("resume")}
			r := &run{sys: sys, failed: make(chan struct{})}
			fs := &faults{r: r}
			p := liveFaults{fs, 0}
			undo := []func(){p.Crash([]string{"redis"}), p.Crash([]string{"redis"}), p.Pause([]string{"redis"}), p.Pause([]string{"redis"})}
			switch tc.ends {
			case "seq":
				for _, u := range undo {
					u()
				}
			case "together":
				var wg sync.WaitGroup
				for _, u := range undo {
					wg.Add(1)
					go func() { defer wg.Done(); u() }()
				}
				wg.Wait()
			}
			count := map[string]int{}
			for _, c := range calls {
				count[c]++
			}
			assert.Equal(t, map[string]int{"crash redis": 1, "restart redis": 1, "pause redis": 1, "resume redis": 1}, count,
				fmt.Sprint(calls))
			assert.NoError(t, r.err)
		})
	}
}

// TestACrashOfAPausedServerDoesNotHoldItsResume: an in-process server's
// crash waits for its paused goroutines, which only the resume frees; the
// resume, due meanwhile, must not wait for the crash (raftkv seed 4 under
// pause,crash,partition hung so).
func TestACrashOfAPausedServerDoesNotHoldItsResume(t *testing.T) {
	resumed := make(chan struct{})
	sys := &liveform.Deployed{Description: liveform.Description{Servers: []string{"n3"}},
		Pause:   func(string) error { return nil },
		Resume:  func(string) error { close(resumed); return nil },
		Crash:   func(string) error { <-resumed; return nil },
		Restart: func(string) error { return nil }}
	r := &run{sys: sys, failed: make(chan struct{})}
	p := liveFaults{&faults{r: r}, 0}
	resume := p.Pause([]string{"n3"})
	crashed := make(chan func())
	go func() { crashed <- p.Crash([]string{"n3"}) }()
	time.Sleep(10 * time.Millisecond) // the crash waits for the resume
	done := make(chan struct{})
	go func() { resume(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the resume waited for the crash, which waits for the resume")
	}
	(<-crashed)()
	assert.NoError(t, r.err)
}

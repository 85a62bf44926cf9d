package libmode

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// watchdog runs outside the bubble on the machine's clock. Virtual time
// advances only when every goroutine of the bubble is durably blocked; a
// goroutine blocked on something the bubble cannot see (a real socket, a
// mutex held for ever, a system call) stops it, and the kernel with it.
// When the kernel makes no step for StuckAfter of real time, the watchdog
// names every goroutine of the bubble that is blocked but not durably,
// with its call stack, and ends the test binary: a library that blocks
// outside the bubble is reported, never a silent hang.
type watchdog struct {
	after time.Duration
	w     atomic.Pointer[world]
	done  chan struct{}
	once  sync.Once
	// fail is what the watchdog does with its report (tests replace it).
	fail func(report string)
}

func startWatchdog(after time.Duration) *watchdog {
	wd := &watchdog{after: after, done: make(chan struct{}), fail: func(report string) {
		fmt.Fprintln(os.Stderr, report)
		panic("libmode: the run is blocked outside the bubble (the goroutines and their calls are above)")
	}}
	go wd.loop()
	return wd
}

func (wd *watchdog) attach(w *world) { wd.w.Store(w) }

func (wd *watchdog) stop() { wd.once.Do(func() { close(wd.done) }) }

func (wd *watchdog) loop() {
	tick := time.NewTicker(wd.after / 10)
	defer tick.Stop()
	last, since := int64(-1), time.Now()
	for {
		select {
		case <-wd.done:
			return
		case <-tick.C:
		}
		w := wd.w.Load()
		if w == nil {
			since = time.Now()
			continue
		}
		if p := w.progress.Load(); p != last {
			last, since = p, time.Now()
			continue
		}
		if time.Since(since) < wd.after {
			continue
		}
		wd.fail(fmt.Sprintf("libmode: the run made no progress for %v of real time at virtual time %v: "+
			"a goroutine of the bubble is blocked outside it (a real socket or timer, a mutex held for ever, "+
			"a system call), so virtual time cannot advance. Blocked, not durably:\n%s",
			wd.after, time.Duration(w.now.Load()), bubbleStacks(true)))
		return
	}
}

// bubbleStacks are the stacks of the bubble's goroutines: those blocked
// but not durably (nonDurable), or all that are blocked.
func bubbleStacks(nonDurable bool) string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	var out []string
	for _, g := range strings.Split(string(buf), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if !strings.Contains(header, "synctest bubble") {
			continue
		}
		if nonDurable && (strings.Contains(header, "durable") || strings.Contains(header, "[running") ||
			strings.Contains(header, "[runnable")) {
			continue
		}
		out = append(out, g)
	}
	if len(out) == 0 {
		return "(no goroutine of the bubble found blocked)"
	}
	return strings.Join(out, "\n\n")
}

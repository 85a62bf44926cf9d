package harness

import (
	"errors"
	"fmt"
	"time"
)

// BytesPerEvent is the memory a run takes per history event at its peak,
// checks and report included (measured with /usr/bin/time -v: a 4 h default
// run, 982,240 events, peaks at 1.77 GB of resident memory; a 1 h one, 245,584
// events, at 390-450 MB). Estimates of a run's memory use it.
const BytesPerEvent = 1800

// progressEvery is how many kernel events pass between two calls of the run's
// observer (progress and the history bound).
const progressEvery = 1 << 14

// ErrTooLarge marks a run refused, or stopped, because its history would
// exceed Test.MaxHistoryEvents: a user error (the limit can be raised), not a
// crash.
var ErrTooLarge = errors.New("history too large")

// Progress is how far a running test has come.
type Progress struct {
	// Simulated is the true time reached; Total is the test's duration.
	Simulated, Total time.Duration
	// KernelEvents is how many events the simulator has executed.
	KernelEvents uint64
	// HistoryEvents is how many events the history holds.
	HistoryEvents int
	// Done is set on the last report, when the simulation is over (the
	// checks are still to run).
	Done bool
}

// Watch observes a run.
type Watch struct {
	// Progress, when set, is called every few thousand kernel events and
	// once when the simulation is over. It runs between simulated events and
	// must not touch the world: the run is the same with or without it.
	Progress func(Progress)
}

// pilotSpan is the simulated time after which a run estimates its whole
// history: 1% of the test, at least 10 s, at most a minute. A run no longer
// than that is not estimated (the hard bound still holds).
func pilotSpan(total time.Duration) time.Duration {
	return min(max(total/100, 10*time.Second), time.Minute)
}

// simulate runs the world for the test's duration, reporting progress to w
// and holding the history under the test's bound: after pilotSpan it
// extrapolates the history to the whole run and refuses to go on if that
// exceeds the bound, and it stops when the history does (checked every
// progressEvery kernel events and at the end). Both decisions depend only on
// the simulation, so they are as deterministic as the run.
func (p *Prepared) simulate(w Watch) error {
	world, total, limit := p.World, p.Test.Time, p.Test.HistoryLimit()
	report := func(done bool) {
		if w.Progress != nil {
			w.Progress(Progress{Simulated: world.Now(), Total: total, KernelEvents: world.Processed(),
				HistoryEvents: p.Log.Len(), Done: done})
		}
	}
	world.Observe(progressEvery, func() {
		if int64(p.Log.Len()) > limit {
			world.Stop()
			return
		}
		report(false)
	})
	defer world.Observe(0, nil)
	if pilot := pilotSpan(total); pilot < total {
		world.RunUntil(pilot)
		if world.Stopped() {
			return p.overLimit(limit)
		}
		if estimate := float64(p.Log.Len()) * (float64(total) / float64(pilot)); estimate > float64(limit) {
			return fmt.Errorf("%w: %v of simulated time would record about %s history events (%s in the first %v), "+
				"needing about %s of memory; the limit is %s events: shorten the run, use fewer clients, "+
				"or raise the limit (locklab run --max-history-events)",
				ErrTooLarge, total, count(estimate), count(float64(p.Log.Len())), pilot,
				bytesOf(estimate*BytesPerEvent), thousands(limit))
		}
	}
	world.RunUntil(total)
	if world.Stopped() || int64(p.Log.Len()) > limit {
		return p.overLimit(limit)
	}
	report(true)
	return nil
}

func (p *Prepared) overLimit(limit int64) error {
	return fmt.Errorf("%w: the history passed the limit of %s events at %v of %v simulated, "+
		"and would need about %s of memory to finish: shorten the run, use fewer clients, "+
		"or raise the limit (locklab run --max-history-events)",
		ErrTooLarge, thousands(limit), p.World.Now().Round(time.Millisecond), p.Test.Time,
		bytesOf(float64(p.Log.Len())*(float64(p.Test.Time)/float64(max(p.World.Now(), 1)))*BytesPerEvent))
}

// count renders an estimate readably: 1,234, 2.4 million or 2.4 billion.
func count(n float64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.1f billion", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f million", n/1e6)
	}
	return thousands(int64(n))
}

// thousands renders n with thousands separators: 1,000,000.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// bytesOf renders a memory size: 393 MB, 3.9 TB.
func bytesOf(b float64) string {
	units := []string{"B", "kB", "MB", "GB", "TB", "PB"}
	i := 0
	for ; b >= 1000 && i < len(units)-1; i++ {
		b /= 1000
	}
	if b < 10 && i > 0 {
		return fmt.Sprintf("%.1f %s", b, units[i])
	}
	return fmt.Sprintf("%.0f %s", b, units[i])
}

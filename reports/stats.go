package reports

import (
	"encoding/json"
	"math"
	"slices"

	"github.com/locklab/locklab/history"
)

// quantile returns the q-quantile (0..1) of sorted values by the nearest-rank
// method; 0 for no values.
func quantile(sorted []int64, q float64) int64 {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(n))) - 1
	return sorted[min(max(i, 0), n-1)]
}

// LatencyRow is the latency of one function's operations with one outcome.
type LatencyRow struct {
	F       string
	Outcome history.Type
	Count   int
	// P50, P95, P99 and Max are latencies in nanoseconds.
	P50, P95, P99, Max int64
}

// Stats are the summary figures of a report.
type Stats struct {
	// Latency has one row per function and outcome with completions.
	Latency []LatencyRow
	// Pending counts operations that never completed, by function.
	Pending map[string]int
	// Duration is the history's length (ns).
	Duration int64
	// Completed counts completed operations; CompletedPerSec, OKPerSec and
	// AcquiredPerSecond are throughput over the history's length.
	Completed         int
	CompletedPerSec   float64
	OKPerSec          float64
	AcquiredPerSecond float64
	// AcquireAttempts and Acquired count acquire operations and the ok ones.
	AcquireAttempts, Acquired int
	// Network is the simulator's message counters, nil when the run has none.
	Network *NetworkCounters
	// Holdings and Overlaps count the lock intervals and their overlaps.
	Holdings, Overlaps int
}

// NetworkCounters are the message counters of a simulated run.
type NetworkCounters struct {
	Sent, Delivered, Dropped, Duplicated uint64
}

// MessagesPerAttempt is network messages per acquire attempt (-1: no attempts).
func (s Stats) MessagesPerAttempt() float64 {
	if s.Network == nil || s.AcquireAttempts == 0 {
		return -1
	}
	return float64(s.Network.Sent) / float64(s.AcquireAttempts)
}

// MessagesPerAcquisition is network messages per successful acquire (-1: none).
func (s Stats) MessagesPerAcquisition() float64 {
	if s.Network == nil || s.Acquired == 0 {
		return -1
	}
	return float64(s.Network.Sent) / float64(s.Acquired)
}

func computeStats(v *view, extra map[string]any) Stats {
	s := Stats{Pending: map[string]int{}, Duration: v.end, Holdings: len(v.holdings), Overlaps: len(v.overlaps)}
	lat := map[string][]int64{}
	okCount := 0
	for _, o := range v.ops {
		if o.Invoke.F == history.FAcquire {
			s.AcquireAttempts++
		}
		d, done := o.Latency()
		if !done {
			s.Pending[o.Invoke.F]++
			continue
		}
		s.Completed++
		if o.Completion.Type == history.OK {
			okCount++
			if o.Invoke.F == history.FAcquire {
				s.Acquired++
			}
		}
		k := o.Invoke.F + "\x00" + string(o.Completion.Type)
		lat[k] = append(lat[k], d)
	}
	for _, f := range v.functions() {
		for _, t := range outcomes {
			ds := lat[f+"\x00"+string(t)]
			if len(ds) == 0 {
				continue
			}
			slices.Sort(ds)
			s.Latency = append(s.Latency, LatencyRow{F: f, Outcome: t, Count: len(ds),
				P50: quantile(ds, 0.5), P95: quantile(ds, 0.95), P99: quantile(ds, 0.99), Max: ds[len(ds)-1]})
		}
	}
	if secs := float64(v.end) / 1e9; secs > 0 {
		s.CompletedPerSec = float64(s.Completed) / secs
		s.OKPerSec = float64(okCount) / secs
		s.AcquiredPerSecond = float64(s.Acquired) / secs
	}
	s.Network = networkCounters(extra)
	return s
}

// networkCounters reads Extra["network"], given either as the simulator's
// counters or as the JSON object read back from results.json.
func networkCounters(extra map[string]any) *NetworkCounters {
	raw, ok := extra["network"]
	if !ok || raw == nil {
		return nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var n NetworkCounters
	if err := json.Unmarshal(b, &n); err != nil {
		return nil
	}
	return &n
}

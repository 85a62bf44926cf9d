package sweep

import (
	"slices"
	"strings"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// Record is what a sweep keeps of one run: a few hundred bytes, every field a
// function of the run's configuration and seed (no machine time).
type Record struct {
	// ID is the run's id (see Run).
	ID string `json:"id"`
	// Overall merges the verdicts.
	Overall models.Result `json:"overall"`
	// Checks maps every safety check that was not valid to its result.
	Checks map[string]models.Result `json:"checks,omitempty"`
	// Liveness is the liveness checks' merged result when not valid.
	Liveness models.Result `json:"liveness,omitempty"`
	// Reason is the first failing safety check's one-line reason (else the
	// first failing check's), at most reasonMax bytes.
	Reason string `json:"reason,omitempty"`
	// Acquires and AcquiresOK count acquire attempts and grants.
	Acquires   int `json:"acquires"`
	AcquiresOK int `json:"acquires_ok"`
	// StallMaxMS is the longest time clients waited while nobody held the
	// lock (the liveness check's longest stall).
	StallMaxMS float64 `json:"stall_max_ms"`
	// AcquireP50US and AcquireP99US are the latency quantiles of granted
	// acquires, in microseconds.
	AcquireP50US int64 `json:"acquire_p50_us"`
	AcquireP99US int64 `json:"acquire_p99_us"`
	// Messages is the number of messages the network carried.
	Messages uint64 `json:"messages"`
	// Crash is set when the harness itself failed on this run.
	Crash string `json:"crash,omitempty"`
}

// reasonMax bounds a record's reason.
const reasonMax = 240

// NewRecord condenses a result.
func NewRecord(id string, r harness.Result) Record {
	rec := Record{ID: id, Overall: r.Overall, Messages: r.Network.Sent}
	var safety, other string
	for _, v := range r.Verdicts {
		if v.Check == "liveness" && v.Stats != nil {
			rec.StallMaxMS = v.Stats["stall-longest-ms"]
		}
		if v.Result == models.Valid {
			continue
		}
		if v.Liveness {
			rec.Liveness = models.Merge(cmpOr(rec.Liveness, models.Valid), v.Result)
			if other == "" {
				other = v.Check + ": " + v.Reason
			}
			continue
		}
		if rec.Checks == nil {
			rec.Checks = map[string]models.Result{}
		}
		rec.Checks[v.Check] = v.Result
		switch {
		case v.Result == models.Invalid && !v.Liveness && safety == "":
			safety = v.Check + ": " + v.Reason
		case other == "":
			other = v.Check + ": " + v.Reason
		}
	}
	rec.Reason = oneLine(cmpOr(safety, other))
	var lat []int64
	for _, op := range history.Operations(r.Events) {
		if op.Invoke.F != "acquire" {
			continue
		}
		rec.Acquires++
		if op.Outcome() != history.OK {
			continue
		}
		rec.AcquiresOK++
		if ns, ok := op.Latency(); ok {
			lat = append(lat, ns)
		}
	}
	slices.Sort(lat)
	rec.AcquireP50US, rec.AcquireP99US = quantile(lat, 0.50)/1000, quantile(lat, 0.99)/1000
	return rec
}

// quantile is the q-quantile of sorted xs (nearest rank), 0 when empty.
func quantile(xs []int64, q float64) int64 {
	if len(xs) == 0 {
		return 0
	}
	i := int(q*float64(len(xs))+0.999999) - 1
	return xs[min(max(i, 0), len(xs)-1)]
}

func cmpOr[S ~string](a, b S) S {
	if a != "" {
		return a
	}
	return b
}

// oneLine keeps the first line of s, at most reasonMax bytes (cut at a rune).
func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) <= reasonMax {
		return s
	}
	cut := reasonMax
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// Violated reports whether a safety check was invalid.
func (r Record) Violated() bool {
	for _, res := range r.Checks {
		if res == models.Invalid {
			return true
		}
	}
	return false
}

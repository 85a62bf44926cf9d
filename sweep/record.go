package sweep

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
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
	// Fired counts the faults that took effect (judge.FaultsOf); NoFault
	// marks a run that asked for faults (a fault family's column) in which
	// none did: it tested the design without faults. A record written
	// before they were kept has neither, and counts as not known to be
	// fault-free.
	Fired   int  `json:"fired,omitempty"`
	NoFault bool `json:"no_fault,omitempty"`
	// Crash is set when the harness itself failed on this run.
	Crash string `json:"crash,omitempty"`
}

// reasonMax bounds a record's reason.
const reasonMax = 240

// NewRecord condenses a result.
func NewRecord(id string, r scenario.Result) Record {
	faults := judge.FaultsOf(r)
	rec := Record{ID: id, Overall: r.Overall, Messages: r.Network.Sent, Fired: faults.TotalFired(), NoFault: faults.NoneFired}
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

// parseRecord reads a record line of grid g — a journal's or records.jsonl's
// — and returns its run's index. It refuses a line that is not a record as a
// sweep writes it: unknown or mistyped fields, a run outside the grid, results
// other than valid, invalid and unknown, an overall result that does not
// merge the failing checks', impossible counts, or bytes other than the
// record's own encoding. A garbled line is refused rather than let change the
// matrix.
func parseRecord(g Grid, line []byte) (int, Record, error) {
	var rec Record
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rec); err != nil {
		return 0, Record{}, fmt.Errorf("not a record: %w", err)
	}
	i, ok := g.IndexOf(rec.ID)
	if !ok {
		return 0, Record{}, fmt.Errorf("run %q is not in the grid: %s", rec.ID, g.whyNotIn(rec.ID))
	}
	if err := rec.check(); err != nil {
		return 0, Record{}, fmt.Errorf("run %s: %w", rec.ID, err)
	}
	if canon, err := json.Marshal(rec); err != nil || !bytes.Equal(canon, line) {
		return 0, Record{}, fmt.Errorf("run %s: the line is not the record as a sweep writes it (fields reordered, spaced or edited)", rec.ID)
	}
	return i, rec, nil
}

// check refuses a record whose fields contradict each other.
func (r Record) check() error {
	isResult := func(x models.Result) bool {
		return x == models.Valid || x == models.Invalid || x == models.Unknown
	}
	if !isResult(r.Overall) {
		return fmt.Errorf("overall %q: want valid, invalid or unknown", r.Overall)
	}
	worst := []models.Result{models.Valid}
	for _, name := range slices.Sorted(maps.Keys(r.Checks)) {
		res := r.Checks[name]
		if res != models.Invalid && res != models.Unknown {
			return fmt.Errorf("check %q is %q: a record keeps only invalid and unknown checks", name, res)
		}
		worst = append(worst, res)
	}
	if r.Liveness != "" {
		if r.Liveness != models.Invalid && r.Liveness != models.Unknown {
			return fmt.Errorf("liveness %q: want invalid or unknown (or none)", r.Liveness)
		}
		worst = append(worst, r.Liveness)
	}
	if r.Crash != "" {
		worst = append(worst, models.Unknown)
	}
	// Overall merges every verdict; the record keeps the ones not valid. No
	// verdicts at all merge to unknown, so an unknown overall with none kept
	// is possible, but not an invalid one, nor a valid one above a failure.
	switch m := models.Merge(worst...); {
	case r.Overall == models.Invalid && m != models.Invalid,
		r.Overall == models.Valid && m != models.Valid,
		r.Overall == models.Unknown && m == models.Invalid:
		return fmt.Errorf("overall %s, but the checks kept merge to %s", r.Overall, m)
	}
	switch {
	case r.Acquires < 0 || r.AcquiresOK < 0 || r.AcquiresOK > r.Acquires:
		return fmt.Errorf("%d of %d acquires granted", r.AcquiresOK, r.Acquires)
	case r.StallMaxMS < 0 || math.IsNaN(r.StallMaxMS) || math.IsInf(r.StallMaxMS, 0):
		return fmt.Errorf("stall_max_ms %v", r.StallMaxMS)
	case r.AcquireP50US < 0 || r.AcquireP99US < r.AcquireP50US:
		return fmt.Errorf("acquire latency p50 %d µs, p99 %d µs", r.AcquireP50US, r.AcquireP99US)
	case r.Fired < 0 || (r.NoFault && r.Fired > 0):
		return fmt.Errorf("fired %d, no_fault %v: a run in which no fault fired fired none", r.Fired, r.NoFault)
	}
	return nil
}

// whyNotIn says which part of a run id the grid lacks.
func (g Grid) whyNotIn(id string) string {
	parts := strings.Split(id, "/")
	if len(parts) != 3 {
		return "want row/column/seed"
	}
	if !slices.ContainsFunc(g.Rows, func(r Row) bool { return r.ID == parts[0] }) {
		return "no row " + strconv.Quote(parts[0])
	}
	if !slices.Contains(g.Columns, parts[1]) {
		return "no column " + strconv.Quote(parts[1])
	}
	return fmt.Sprintf("seed %s is not one of its seeds %d..%d", parts[2], g.FirstSeed, g.FirstSeed+uint64(g.Seeds)-1)
}

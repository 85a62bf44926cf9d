package libmode

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/placement"
)

// GuidedOptions bound the guided search.
type GuidedOptions struct {
	// Sections is how many of each client's first critical sections
	// anchor a pause's start (its acquire, its read). Default 2.
	Sections int
	// Timeouts are the library's declared timeouts (its lock's TTL, say):
	// besides the end anchors, each pause lasts just short of, just past
	// and 1.5x each. None: end anchors only.
	Timeouts []placement.Timeout
	// Deltas are the offsets after another client's read (invoked) a pause
	// ends at. Default 0, 1, 5, 20, 50 ms (package placement's).
	Deltas []time.Duration
	// StopAtFirst ends the search at the first placement that fails a
	// safety check.
	StopAtFirst bool
}

// Searched is what a search covered and what it found.
type Searched struct {
	// How is the search ("random", "guided") and Bound what it covered,
	// in words.
	How, Bound string
	// Runs is the number of runs; Fired those in which a fault took
	// effect (a placement whose anchor never happened did nothing).
	Runs, Fired int
	// Failing are the runs a safety check found invalid, in search order.
	Failing []Result
	// Wall is the real time the search took.
	Wall time.Duration
}

// Line is the search in one line: "guided: 228 runs (214 fired), 31
// failing, in 24.1 s; bound: ...".
func (s Searched) Line() string {
	return fmt.Sprintf("%s: %d runs (%d with a fault that fired), %d failing a safety check, in %.1f s; bound: %s",
		s.How, s.Runs, s.Fired, len(s.Failing), s.Wall.Seconds(), s.Bound)
}

// fired reports whether a fault of r took effect (its history has a
// fault's start).
func fired(r Result) bool {
	return slices.ContainsFunc(r.Events, func(e history.Event) bool {
		return e.Process == history.NemesisProcess && e.Type == history.Start
	})
}

// Placements are the single pauses Guided runs for cfg: package
// placement's enumeration of the pause family on cfg's clients (the
// instances are not paused in library mode), and the bound in words.
func Placements(cfg Config, opts GuidedOptions) ([]nemesis.Fault, string) {
	cfg, _ = cfg.withDefaults()
	set := placement.Enumerate(string(nemesis.Pause), placement.Topology{Clients: clientNames(cfg.Clients)},
		placement.Bound{Sections: opts.Sections, Deltas: opts.Deltas, Timeouts: opts.Timeouts, RunTime: cfg.Duration})
	words, _, _ := strings.Cut(set.Words, "; of each server") // no server is paused here
	return set.Faults, fmt.Sprintf("all %d single %s (%d clients, %v each, seed %d)", len(set.Faults), words,
		cfg.Clients, cfg.Duration, cfg.Seed)
}

// Guided runs every placement of a single pause (Placements) with cfg's
// seed, in order: a pause of each client from its acquire or its read in
// each of its first sections, ended at another client's acquire, read
// (invoked, plus each delta; answered) or write, or lasting just short of,
// just past and 1.5x each timeout. cfg.Faults are replaced by each
// placement. Searched says the bound, the runs and the failing ones.
func Guided(t *testing.T, cfg Config, opts GuidedOptions) Searched {
	t.Helper()
	began := time.Now()
	faults, bound := Placements(cfg, opts)
	s := Searched{How: "guided", Bound: bound}
	for _, f := range faults {
		c := cfg
		c.Faults = []Fault{Scheduled{f}}
		r := Run(t, c)
		s.Runs++
		if fired(r) {
			s.Fired++
		}
		if !r.Safe() {
			s.Failing = append(s.Failing, r)
			if opts.StopAtFirst {
				break
			}
		}
	}
	s.Wall = time.Since(began)
	return s
}

// Random runs seeds 1..n of cfg with the faults draw makes for each seed
// (DrawFaults, or the test's own), and says what it found: Explore's
// search, counted. stopAtFirst ends it at the first failing run.
func Random(t *testing.T, cfg Config, n int, draw func(seed uint64) []Fault, stopAtFirst bool) Searched {
	t.Helper()
	began := time.Now()
	s := Searched{How: "random", Bound: fmt.Sprintf("seeds 1..%d, faults drawn per seed", n)}
	for seed := uint64(1); seed <= uint64(n); seed++ {
		c := cfg
		c.Seed = seed
		c.Faults = draw(seed)
		r := Run(t, c)
		s.Runs++
		if fired(r) {
			s.Fired++
		}
		if !r.Safe() {
			s.Failing = append(s.Failing, r)
			if stopAtFirst {
				break
			}
		}
	}
	s.Wall = time.Since(began)
	return s
}

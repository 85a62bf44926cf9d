package sweep

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/placement"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/system"
)

// Placements is the systematic part of a cell's search: every single fault
// of the cell's family within a stated bound (package placement), each run
// once. A cell may list a design as keeping the data safe only when its
// placements are Complete.
type Placements struct {
	// Bound says what was enumerated, in words.
	Bound string `json:"bound"`
	// Total counts the placements enumerated; Ran those run (fewer when a
	// run corrupted the data: the search stops there); Fired those in
	// which the fault took hold (an anchor that never came leaves a run
	// without the fault).
	Total int `json:"total"`
	Ran   int `json:"ran"`
	Fired int `json:"fired"`
	// Complete: every placement ran and none corrupted the data.
	Complete bool `json:"complete"`
	// Pairs counts the pairs of placements run after the singles (drawn
	// from the cell's seed, up to SearchConfig.Pairs).
	Pairs int `json:"pairs,omitempty"`
}

// pairsOf draws n pairs of distinct placements of a set of total, from
// seed: the same cell runs the same pairs.
func pairsOf(total, n int, seed uint64) [][2]int {
	if total < 2 {
		return nil
	}
	r := rand.New(rand.NewPCG(seed, 0x9a1c5))
	out := make([][2]int, 0, n)
	for range n {
		i := r.IntN(total)
		j := r.IntN(total - 1)
		if j >= i {
			j++
		}
		out = append(out, [2]int{i, j})
	}
	return out
}

// Shape is a row's run shape: the timeouts its design declares (and the
// chain of its two longest) and the run length that fits them, so that a
// fault that must outlast lease + lock-delay, or a drift that must add up
// past a TTL, can matter within a run.
type Shape struct {
	// Time is the simulated length of the row's runs (at least the
	// matrix's Time).
	Time Duration `json:"time"`
	// Timeouts name the declared timeouts a fault's length straddles
	// ("ttl 10s", "ttl 10s + down-after 3s").
	Timeouts []string `json:"timeouts,omitempty"`
	// Guided is the most guided runs each of the row's cells makes after
	// its placements: the matrix's budget, fewer for rows whose runs are
	// longer than GuidedRunTime (guidedBudget).
	Guided int `json:"guided"`
}

// GuidedRunTime is the run length up to which a cell's guided search makes
// the matrix's whole budget of runs; a row of longer runs makes
// proportionally fewer, so that its cells spend no more simulated time than
// budget runs of GuidedRunTime (Chubby's 84-s runs make about a third of
// them). Its systematic placements are never cut.
const GuidedRunTime = 30 * time.Second

// guidedBudget is the guided runs of a cell whose runs last t, for a matrix
// budget of budget runs: at least one.
func guidedBudget(budget int, t time.Duration) int {
	if t <= GuidedRunTime {
		return budget
	}
	return max(1, int(int64(budget)*int64(GuidedRunTime)/int64(t)))
}

// Run shapes are bounded: a row whose timeouts chain past maxShapeTime runs
// that long and says so (its Beyond).
const (
	minTimeout   = time.Second
	maxShapeTime = 150 * time.Second
	// driftScale bounds the timeouts a drift of 50% must add up past within
	// a run (leases, TTLs and sessions; not a minute of lock-delay).
	driftScale = 30 * time.Second
)

// rowShape is the run shape of row: Time at least the matrix's, and long
// enough for the chain of timeouts the design declares (system.Timeout's
// Then; without one, the two longest declared timeouts), plus 10% and 5 s
// for the handoff after it, and for a drift of 50% to add up past the
// longest lease-like one (2.2x it), at most maxShapeTime.
func rowShape(c SearchConfig, row SearchedRow) (Shape, []placement.Timeout) {
	var declared, chains []placement.Timeout
	if sys, err := system.Find(row.System); err == nil && sys.Options != nil {
		if settings, err := sys.Options.Effective(row.Config.SystemOptions); err == nil {
			durations := map[string]time.Duration{}
			for _, s := range settings {
				if d, err := time.ParseDuration(s.Value); err == nil {
					durations[s.Name] = d
					if d >= minTimeout {
						declared = append(declared, placement.Timeout{Name: s.Name + " " + d.String(), D: d})
					}
				}
			}
			for _, to := range sys.Timeouts {
				a, okA := durations[to.Option]
				b, okB := durations[to.Then]
				if to.Then != "" && okA && okB && a+b >= minTimeout {
					chains = append(chains, placement.Timeout{Name: fmt.Sprintf("%s %v + %s %v", to.Option, a, to.Then, b), D: a + b})
				}
			}
		}
	}
	ts := placement.ChainedAs(declared, chains)
	var lease time.Duration // the longest declared timeout of at most driftScale
	for _, d := range declared {
		if d.D <= driftScale {
			lease = max(lease, d.D)
		}
	}
	t := max(time.Duration(c.Time), placement.Longest(ts)*11/10+5*time.Second, lease*22/10+2*time.Second)
	t = min(t, max(maxShapeTime, time.Duration(c.Time))).Round(time.Second)
	sh := Shape{Time: Duration(t), Guided: guidedBudget(c.Budget, t)}
	for _, x := range ts {
		sh.Timeouts = append(sh.Timeouts, x.Name)
	}
	return sh, ts
}

// topology is what a row's faults can name: its clients, servers and
// roles, from a prepared (not run) world of test t.
func topology(t scenario.Test) (placement.Topology, error) {
	p, err := harness.Prepare(t)
	if err != nil {
		return placement.Topology{}, err
	}
	top := placement.Topology{Clients: t.ClientNames(), Roles: slices.Clone(p.Deployment.Roles), Storage: "storage"}
	for _, s := range p.Deployment.Servers {
		top.Servers = append(top.Servers, s.Name())
	}
	return top, nil
}

// placementsOf enumerates the single faults of a cell's family on its row
// (none for the swarm family, "random": its single faults are the other
// columns').
func placementsOf(c SearchConfig, row SearchedRow, column string, sh Shape, ts []placement.Timeout) (placement.Set, error) {
	if !slices.Contains(placement.Families, nemesis.Kind(column)) {
		return placement.Set{Family: column}, nil
	}
	top, err := topology(c.test(row, "none", 1))
	if err != nil {
		return placement.Set{}, fmt.Errorf("the row's nodes: %w", err)
	}
	return placement.Enumerate(column, top, placement.Bound{Timeouts: ts, RunTime: time.Duration(sh.Time)}), nil
}

// placementTest is the run of one placement: the row's test with the
// fault as its whole schedule.
func placementTest(c SearchConfig, row SearchedRow, seed uint64, f nemesis.Fault) scenario.Test {
	t := c.test(row, "none", seed)
	t.Nemesis = ""
	t.Schedule = &nemesis.Schedule{Faults: []nemesis.Fault{f}}
	return t
}

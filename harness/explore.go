package harness

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/locklab/locklab/internal/suggest"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

// Random exploration: can the random nemesis rediscover a catalog
// counterexample without being told its schedule, and how many seeds does it
// take?

// Hunt is one exploration target: the unsafe variant of a catalog scenario,
// run with random faults (swarm style) instead of its schedule, and the kind
// of violation it must rediscover.
type Hunt struct {
	// Name is the hunt's name: the scenario and the variant
	// ("kleppmann-gc-pause/redis-unsafe").
	Name string
	// Scenario and Variant name the catalog counterexample.
	Scenario, Variant string
	// Kind is the kind of violation that counts.
	Kind string
	// Time is the simulated duration of each seed's run. Default 60 s.
	Time time.Duration
}

// Hunts are the exploration targets, derived from the catalog: one for every
// variant that declares the kind of violation it shows (Variant.Kind), in
// catalog order. A family that adds a scenario adds its hunt with it.
func Hunts() []Hunt {
	var out []Hunt
	for _, s := range scenario.Catalog() {
		for _, v := range s.Variants {
			if v.Kind != "" {
				out = append(out, Hunt{Name: s.Name + "/" + v.Name, Scenario: s.Name, Variant: v.Name, Kind: v.Kind})
			}
		}
	}
	return out
}

// HuntNames are the names of Hunts.
func HuntNames() []string {
	var out []string
	for _, h := range Hunts() {
		out = append(out, h.Name)
	}
	return out
}

// FindHunt returns the hunt called name; a scenario's name alone stands for
// its only hunt. A scenario with several hunts is refused naming them; an
// unknown name is a *suggest.UnknownError naming the hunts it was probably
// meant to be (a near miss of a scenario's name stands for its hunts).
func FindHunt(name string) (Hunt, error) {
	var of []string
	hunts := Hunts()
	for _, h := range hunts {
		if h.Name == name {
			return h, nil
		}
		if h.Scenario == name {
			of = append(of, h.Name)
		}
	}
	switch {
	case len(of) == 1:
		return FindHunt(of[0])
	case len(of) > 1:
		return Hunt{}, fmt.Errorf("scenario %q has %d hunts, name one: %s", name, len(of), strings.Join(of, ", "))
	}
	if s, err := scenario.Find(name); err == nil {
		return Hunt{}, fmt.Errorf("scenario %q has no hunt: none of its %d variants declares a kind of violation for random faults to find",
			name, len(s.Variants))
	}
	// The near misses among the hunts and their scenarios' names, a
	// scenario standing for its hunts.
	var known []string
	for _, h := range hunts {
		known = append(known, h.Name)
		if !slices.Contains(known, h.Scenario) {
			known = append(known, h.Scenario)
		}
	}
	err := suggest.Unknown("hunt", name, HuntNames())
	var near []string
	for _, n := range suggest.Closest(name, known) {
		for _, h := range hunts {
			if (h.Name == n || h.Scenario == n) && !slices.Contains(near, h.Name) {
				near = append(near, h.Name)
			}
		}
	}
	err.Suggestions = near
	return Hunt{}, err
}

// Test is the hunt's run for one seed: the variant's system, options,
// workload and storage, with random faults drawn from the seed.
//
// The variant's test is looked up in the catalog once per (scenario,
// variant) and remembered (building the catalog is a tenth of a redis hunt
// run); each call returns a copy whose maps and slices are its own, so a
// caller may change it. TestHuntTestIsTheCatalogsVariant holds the memo to
// the catalog.
func (h Hunt) Test(seed uint64) (scenario.Test, error) {
	v, err := variantTest(h.Scenario, h.Variant)
	if err != nil {
		return scenario.Test{}, err
	}
	t := v.Clone()
	t.Schedule, t.Nemesis, t.Seed = nil, "random", seed
	t.Time = h.Time
	if t.Time == 0 {
		t.Time = 60 * time.Second
	}
	return t, nil
}

// variantTests remembers the tests of the catalog variants hunts ran, by
// scenario and variant name. The catalog is fixed when the program starts
// (every system registers its scenarios from init), so a remembered test
// never goes stale.
var variantTests struct {
	sync.Mutex
	m map[[2]string]scenario.Test
}

// variantTest is the test of the catalog's variant of scenario name, remembered
// without its schedule. Do not change it: clone it.
func variantTest(name, variant string) (scenario.Test, error) {
	variantTests.Lock()
	defer variantTests.Unlock()
	key := [2]string{name, variant}
	if t, ok := variantTests.m[key]; ok {
		return t, nil
	}
	s, err := scenario.Find(name)
	if err != nil {
		return scenario.Test{}, err
	}
	v, err := s.FindVariant(variant)
	if err != nil {
		return scenario.Test{}, err
	}
	if variantTests.m == nil {
		variantTests.m = map[[2]string]scenario.Test{}
	}
	t := v.Test.Clone()
	t.Schedule = nil
	variantTests.m[key] = t
	return t, nil
}

// Sweep is one sequential search from a starting seed.
type Sweep struct {
	// Start is the first seed tried.
	Start uint64 `json:"start"`
	// Seeds is how many seeds ran (the finding one included).
	Seeds int `json:"seeds"`
	// NoFault counts the runs in which no fault fired (the random nemesis
	// drew none, or none took effect): they searched nothing.
	NoFault int `json:"no_fault,omitempty"`
	// Found reports whether a violation of the hunt's kind turned up; Seed is
	// the seed that showed it.
	Found bool   `json:"found"`
	Seed  uint64 `json:"seed,omitempty"`
	// Wall is the machine time the sweep took.
	Wall time.Duration `json:"wall"`
	// Finding is the test that showed the violation when it is not the
	// hunt's test of Seed (a guided search's mutated schedule); nil otherwise.
	Finding *scenario.Test `json:"finding,omitempty"`
}

// Sweep runs seeds start, start+1, ... until one shows a violation of the
// hunt's kind, at most maxSeeds of them; progress, when set, is called after
// every seed.
func (h Hunt) Sweep(start uint64, maxSeeds int, progress func()) (Sweep, error) {
	sw := Sweep{Start: start}
	began := time.Now()
	defer func() { sw.Wall = time.Since(began) }()
	for i := range maxSeeds {
		seed := start + uint64(i)
		t, err := h.Test(seed)
		if err != nil {
			return sw, err
		}
		r, err := Run(t)
		if err != nil {
			return sw, fmt.Errorf("%s seed %d: %w", h.Name, seed, err)
		}
		sw.Seeds++
		if progress != nil {
			progress()
		}
		found := r.Overall == models.Invalid && slices.Contains(r.ViolationKinds(), h.Kind)
		if judge.FaultsOf(r).NoneFired {
			sw.NoFault++
		}
		r.Release() // nothing of it is kept but the seed
		if found {
			sw.Found, sw.Seed = true, seed
			sw.Wall = time.Since(began)
			return sw, nil
		}
	}
	sw.Wall = time.Since(began)
	return sw, nil
}

// Exploration is the outcome of several sweeps of one hunt.
type Exploration struct {
	Hunt   Hunt    `json:"hunt"`
	Sweeps []Sweep `json:"sweeps"`
}

// MedianSeeds is the median number of seeds the sweeps needed; a sweep that
// found nothing counts as its number of seeds (so the median is a lower bound
// when some did not find).
func (e Exploration) MedianSeeds() float64 {
	n := make([]int, len(e.Sweeps))
	for i, s := range e.Sweeps {
		n[i] = s.Seeds
	}
	slices.Sort(n)
	switch {
	case len(n) == 0:
		return 0
	case len(n)%2 == 1:
		return float64(n[len(n)/2])
	}
	return float64(n[len(n)/2-1]+n[len(n)/2]) / 2
}

// Found counts the sweeps that found a violation.
func (e Exploration) Found() int {
	c := 0
	for _, s := range e.Sweeps {
		if s.Found {
			c++
		}
	}
	return c
}

// NoFault counts the runs of every sweep in which no fault fired, and Runs
// every run.
func (e Exploration) NoFault() (noFault, runs int) {
	for _, s := range e.Sweeps {
		noFault += s.NoFault
		runs += s.Seeds
	}
	return noFault, runs
}

// WallPerSeed is the mean machine time per seed.
func (e Exploration) WallPerSeed() time.Duration {
	var wall time.Duration
	seeds := 0
	for _, s := range e.Sweeps {
		wall += s.Wall
		seeds += s.Seeds
	}
	if seeds == 0 {
		return 0
	}
	return wall / time.Duration(seeds)
}

// Explore sweeps the hunt from each starting seed in turn.
func Explore(h Hunt, starts []uint64, maxSeeds int, progress func()) (Exploration, error) {
	e := Exploration{Hunt: h}
	for _, s := range starts {
		sw, err := h.Sweep(s, maxSeeds, progress)
		if err != nil {
			return e, err
		}
		e.Sweeps = append(e.Sweeps, sw)
	}
	return e, nil
}

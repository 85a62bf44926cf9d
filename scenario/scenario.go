package scenario

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/locklab/locklab/internal/suggest"
	"github.com/locklab/locklab/models"
)

// Scenario is a named, runnable experiment from SCENARIOS: a system, a
// workload and a fault schedule, in variants that differ in one option (the
// unsafe one and the fix), each with the verdicts it must produce. A harness
// that only ever says "unsafe" (or only "safe") is broken; the pair proves it
// can tell the difference.
type Scenario struct {
	// Name is the scenario's name (kleppmann-gc-pause, redis-failover, ...).
	Name string
	// Doc says in one line what it shows.
	Doc string
	// Variants are the runs; the first is the default of `locklab repro`.
	Variants []Variant
}

// Variant is one run of a scenario and what it must show.
type Variant struct {
	// Name is "unsafe", "fixed", or a more specific name ("fixed-wait").
	Name string
	// Doc says what differs in this variant and why it matters.
	Doc string
	// Test is the run.
	Test Test
	// Expect maps check names to the result they must give; checks not named
	// are reported but not asserted.
	Expect map[string]models.Result
	// Assert, when set, checks further properties of the result (figures,
	// counterexample contents) and returns what does not match.
	Assert func(r Result) error
	// Kind is the kind of violation the variant's counterexample shows
	// (KindGCPause, KindFailover, ...; see ViolationKinds): random
	// exploration hunts for it (Hunts derives one hunt per such variant).
	// Every unsafe variant declares its kind, or NoHunt.
	Kind string
	// NoHunt says why random faults cannot rediscover this unsafe variant (it
	// fails without any fault, say); it keeps the variant out of Hunts.
	NoHunt string
	// MatrixNote explains why the default safety matrix's cell of this
	// variant (its design and storage mode under its faults' family) comes
	// out otherwise than the variant (an unsafe variant's violation not
	// found there, or a fixed variant's cell with one): the variant's
	// workload, clients or schedule stage something the matrix's runs do
	// not. The consistency test (sweep) allows a disagreement only with it.
	MatrixNote string
}

// ReproTest is the variant's test with the checks its expectations name added
// ("+name") to the default selection, unless the test names its checks itself.
func (v Variant) ReproTest() Test {
	t := v.Test
	if len(t.Checks) == 0 {
		for _, c := range slices.Sorted(maps.Keys(v.Expect)) {
			t.Checks = append(t.Checks, "+"+c)
		}
	}
	return t
}

// family is a registered contributor of scenarios.
type family struct {
	rank      int
	scenarios func() []Scenario
}

// families are the registered families, in rank order.
var families []family

// Register adds a family of scenarios to the catalog; a lock system's
// package calls it from init with the function that builds its scenarios.
// Families may contribute variants to one scenario (kleppmann-gc-pause runs
// on several systems): the catalog concatenates them in rank order, lowest
// first, so that the order of a scenario's variants (the first is the
// default of `locklab repro`) does not depend on the order packages are
// initialised in. The built-in systems rank the simplest first: the control
// and the no-fault baselines 0-2, redis 10, redlock 20, raftkv 30, etcd 40,
// database 50, zookeeper 60, chubby 70, the on-call write skew 80-81. Two
// families of one rank are a programming error: Register panics.
func Register(rank int, scenarios func() []Scenario) {
	for _, f := range families {
		if f.rank == rank {
			panic(fmt.Sprintf("scenario.Register: two families of rank %d", rank))
		}
	}
	families = append(families, family{rank: rank, scenarios: scenarios})
	slices.SortFunc(families, func(a, b family) int { return a.rank - b.rank })
}

// Catalog returns every scenario, sorted by name. Families may contribute
// variants to the same scenario (kleppmann-gc-pause runs on several systems):
// scenarios with one name are merged, their variants concatenated in family
// rank order, the first non-empty Doc kept.
func Catalog() []Scenario {
	var out []Scenario
	index := map[string]int{}
	for _, f := range families {
		for _, s := range f.scenarios() {
			i, seen := index[s.Name]
			if !seen {
				index[s.Name] = len(out)
				out = append(out, s)
				continue
			}
			if out[i].Doc == "" {
				out[i].Doc = s.Doc
			}
			out[i].Variants = append(out[i].Variants, s.Variants...)
		}
	}
	slices.SortFunc(out, func(a, b Scenario) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Find returns the scenario called name; an unknown name is a
// *suggest.UnknownError naming the scenarios it was probably meant to be.
func Find(name string) (Scenario, error) {
	return suggest.Find("scenario", name, Catalog(), func(s Scenario) string { return s.Name })
}

// FindVariant returns the variant called name ("" for the first).
func (s Scenario) FindVariant(name string) (Variant, error) {
	var names []string
	for _, v := range s.Variants {
		if name == "" || v.Name == name {
			return v, nil
		}
		names = append(names, v.Name)
	}
	return Variant{}, fmt.Errorf("scenario %s has no variant %q (variants: %s)", s.Name, name, strings.Join(names, ", "))
}

// FencedWritesNote is the MatrixNote of a fixed variant whose fix is a
// fence on writes alone: the variant's own fault is stopped, but the
// matrix's systematic search ends a pause between the new holder's read and
// its write, and the fence lets both writes through.
const FencedWritesNote = "fencing writes only: besides this stale write, which the storage rejects, the matrix finds a stale holder " +
	"whose write lands after the new holder read and before it wrote (the storage has not seen the newer token yet): a lost update " +
	"that fencing reads prevents (the fenced+reads row)"

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

// family is a registered contributor of scenarios: the lock system whose
// package registered it, and the function that builds its scenarios.
type family struct {
	system    string
	scenarios func() []Scenario
}

// families are the registered families in the order of the system
// registry, by system name; one system's in the order it registered them.
var families []family

// Register adds a family of scenarios of the lock system called system to
// the catalog; a lock system's package calls it from init with the function
// that builds its scenarios. The catalog orders the families as the system
// registry orders systems (by name; one system's families in the order it
// registered them), so that no order depends on the order packages are
// initialised in and no system need know another's place. An empty system
// name is a programming error: Register panics.
func Register(system string, scenarios func() []Scenario) {
	if system == "" {
		panic("scenario.Register: a family of scenarios without its system's name")
	}
	families = append(families, family{system: system, scenarios: scenarios})
	slices.SortStableFunc(families, func(a, b family) int { return strings.Compare(a.system, b.system) })
}

// Catalog returns every scenario, sorted by name. Families may contribute
// variants to the same scenario (kleppmann-gc-pause runs on several
// systems): scenarios with one name are merged. The scenario's home is the
// first family, in registry order, that gives it a Doc: its Doc is kept and
// its variants come first (the first is the default of `locklab repro`);
// the other families' variants follow in registry order.
func Catalog() []Scenario {
	parts := map[string][]Scenario{}
	var names []string
	for _, f := range families {
		for _, s := range f.scenarios() {
			if _, seen := parts[s.Name]; !seen {
				names = append(names, s.Name)
			}
			parts[s.Name] = append(parts[s.Name], s)
		}
	}
	out := make([]Scenario, 0, len(names))
	for _, name := range names {
		ps := parts[name]
		home := max(slices.IndexFunc(ps, func(s Scenario) bool { return s.Doc != "" }), 0)
		s := ps[home]
		s.Variants = slices.Clone(s.Variants)
		for i, p := range ps {
			if i != home {
				s.Variants = append(s.Variants, p.Variants...)
			}
		}
		out = append(out, s)
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

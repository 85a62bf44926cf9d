package harness

import (
	"fmt"
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
		for _, c := range sortedKeys(v.Expect) {
			t.Checks = append(t.Checks, "+"+c)
		}
	}
	return t
}

// Outcome compares a variant's result with its expectations.
type Outcome struct {
	Variant Variant
	Result  Result
	// Mismatches lists every expectation that did not hold; empty means MATCH.
	Mismatches []string
}

// Match reports whether every expectation held.
func (o Outcome) Match() bool { return len(o.Mismatches) == 0 }

// scenarioFamilies are the functions that contribute scenarios, one per file
// (scenarios_<family>.go). Their order is the order of the variants of a
// scenario that several families share: the simplest system first.
var scenarioFamilies = []func() []Scenario{basicScenarios, redisScenarios, redlockScenarios, raftkvScenarios, etcdScenarios, databaseScenarios,
	zookeeperScenarios, chubbyScenarios, oncallScenarios}

// Catalog returns every scenario, sorted by name. Families may contribute
// variants to the same scenario (kleppmann-gc-pause runs on several systems):
// scenarios with one name are merged, their variants concatenated in family
// registration order, the first non-empty Doc kept.
func Catalog() []Scenario {
	var out []Scenario
	index := map[string]int{}
	for _, f := range scenarioFamilies {
		for _, s := range f() {
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

// FindScenario returns the scenario called name; an unknown name is a
// *suggest.UnknownError naming the scenarios it was probably meant to be.
func FindScenario(name string) (Scenario, error) {
	var names []string
	for _, s := range Catalog() {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Scenario{}, suggest.Unknown("scenario", name, names)
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

// Repro runs a variant and compares the verdicts with its expectations. The
// checks the expectations name run in addition to those that apply by default.
// A fault of its schedule that did not fire is a mismatch too.
func Repro(v Variant) (Outcome, error) {
	return ReproWith(v, Run)
}

// compareOutcome compares a variant's result with its expectations.
func compareOutcome(v Variant, r Result) Outcome {
	out := Outcome{Variant: v, Result: r}
	for _, check := range sortedKeys(v.Expect) {
		want := v.Expect[check]
		got, found := models.Verdict{}, false
		for _, vd := range r.Verdicts {
			if vd.Check == check {
				got, found = vd, true
			}
		}
		switch {
		case !found:
			out.Mismatches = append(out.Mismatches, fmt.Sprintf("%s: expected %s, but the check did not run", check, want))
		case got.Result != want:
			out.Mismatches = append(out.Mismatches, fmt.Sprintf("%s: expected %s, got %s (%s)", check, want, got.Result, got.Reason))
		}
	}
	if v.Assert != nil {
		if err := v.Assert(r); err != nil {
			out.Mismatches = append(out.Mismatches, err.Error())
		}
	}
	// A scenario shows what its faults do: one that did not fire shows nothing.
	for _, o := range r.FaultOutcomes {
		if !o.Fired {
			out.Mismatches = append(out.Mismatches, fmt.Sprintf("faults[%d] (%s) did not fire: %s", o.Fault, o.Kind, o.DidNotFire))
		}
	}
	return out
}

package scenario

import "time"

// The tests and scenarios every system's family states in the same words:
// Kleppmann's two counterexamples and the run without faults.

// GCPauseTest is Kleppmann's GC pause on system: two clients for 30 s,
// client 1 paused for 15 s right after its first read under the lock.
func GCPauseTest(system string) Test {
	return Test{System: system, Clients: 2, Seed: 1, Time: 30 * time.Second,
		Schedule: Schedule(PauseAfter("c1", "read", 15*time.Second))}
}

// NetworkDelayTest is Kleppmann's network delay on system: two clients for
// 30 s, client 1's next write to the storage after its first read delayed by
// 15 s.
func NetworkDelayTest(system string) Test {
	return Test{System: system, Clients: 2, Seed: 1, Time: 30 * time.Second,
		Schedule: Schedule(DelayNextWrite("c1", 15*time.Second))}
}

// Baseline is system's scenario without faults, "baseline-<system>": its
// variant "fixed" runs the system's defaults (seed 1) and must give expect
// and pass assert (nil: none). A system with configurations of its own adds
// variants to it (NoFaults).
func Baseline(system, doc string, expect Expectations, assert func(Result) error) Scenario {
	return Scenario{Name: "baseline-" + system, Doc: doc, Variants: []Variant{{
		Name: "fixed", Doc: "no faults", Test: Test{System: system, Seed: 1}, Expect: expect, Assert: assert,
	}}}
}

// NoFaults is one more variant of a Baseline: the same run and the same
// expectations with the system options kv (key, value, ...) set.
func (s Scenario) NoFaults(name, doc string, kv ...string) Scenario {
	v := s.Variants[0]
	v.Name, v.Doc = name, doc
	v.Test.SystemOptions = WithOpts(v.Test.SystemOptions, kv...)
	s.Variants = append(s.Variants[:len(s.Variants):len(s.Variants)], v)
	return s
}

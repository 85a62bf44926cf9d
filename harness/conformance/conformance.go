// Package conformance is the suite every lock system in locklab passes, in the
// pattern of testing/fstest.TestFS: Check takes a registered system and the
// claims it makes for one configuration (harness.Claims), runs every property
// a lock system must have and returns every misbehaviour at once, joined in one
// error (nil: it conforms).
//
// The properties, by the names Claims.ExpectFail uses:
//
//   - baseline: without faults every check is valid and more than 99% of the
//     acquires succeed, on each of Config.Seeds seeds;
//   - determinism: under random faults of each kind (nemesis.Kinds) alone, the
//     same seed gives a byte-identical history and another seed another one;
//   - server-faults: crash-restart, pause and partition of each server node
//     leave the run checkable (the harness does not crash, every check gives a
//     verdict) and the world not stuck (an acquire succeeds after the fault);
//   - gc-pause-unfenced: Kleppmann's pause of a holder past its lease, with
//     unfenced storage, makes the critical sections invalid (the suite can
//     tell a broken run);
//   - gc-pause-fenced (claims Tokens only): the same pause with fenced storage
//     and the system's own tokens leaves the critical sections valid;
//   - safe-release (claims SafeRelease only): the paused holder's release
//     after its lock went to another client frees nothing: no two clients
//     other than it ever overlap.
//
// A system proves itself by declaring its Claims in its registration
// (harness.System.Claims); TestEveryRegisteredSystemConforms runs the suite on
// every registered system, so a new system is checked by being added. The
// default cost is small (Config's zero value: 2 seeds, short runs); the flag
// -conformance.seeds of that test runs more.
package conformance

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/locklab/locklab/backends/storage"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
)

// Property names, as Claims.ExpectFail uses them.
const (
	Baseline         = "baseline"
	Determinism      = "determinism"
	ServerFaults     = "server-faults"
	GCPauseUnfenced  = "gc-pause-unfenced"
	GCPauseFenced    = "gc-pause-fenced"
	SafeRelease      = "safe-release"
	defaultPause     = 15 * time.Second
	baselineMinShare = 0.99
)

// Properties lists every property in the order Check runs them.
var Properties = []string{Baseline, Determinism, ServerFaults, GCPauseUnfenced, GCPauseFenced, SafeRelease}

// Config sizes the suite. The zero value is the default.
type Config struct {
	// Seeds is the number of seeds of the baseline (default 2); the other
	// properties use seed 1 (determinism: 7 and 8).
	Seeds int
}

// Misbehaviour is one property a system broke (or, expected to break, held).
type Misbehaviour struct {
	System   string
	Variant  string
	Property string
	Detail   string
}

func (m Misbehaviour) Error() string {
	name := m.System
	if m.Variant != "" {
		name += "/" + m.Variant
	}
	return fmt.Sprintf("%s: %s: %s", name, m.Property, m.Detail)
}

// Check runs every property on system with the claims c and returns every
// misbehaviour joined (each a Misbehaviour), or nil.
func Check(system string, c harness.Claims, cfg Config) error {
	if _, err := harness.FindSystem(system); err != nil {
		return err
	}
	if cfg.Seeds <= 0 {
		cfg.Seeds = 2
	}
	if c.HolderPause <= 0 {
		c.HolderPause = defaultPause
	}
	s := suite{system: system, c: c, cfg: cfg}
	var errs []error
	for _, p := range Properties {
		problems := s.run(p)
		expected := slices.Contains(c.ExpectFail, p)
		switch {
		case expected && len(problems) == 0 && s.applies(p):
			errs = append(errs, s.bad(p, "expected to fail (Claims.ExpectFail), but it holds"))
		case !expected:
			for _, pr := range problems {
				errs = append(errs, s.bad(p, pr))
			}
		}
	}
	return errors.Join(errs...)
}

type suite struct {
	system string
	c      harness.Claims
	cfg    Config
}

func (s suite) bad(property, detail string) Misbehaviour {
	return Misbehaviour{System: s.system, Variant: s.c.Variant, Property: property, Detail: detail}
}

// applies reports whether the claims ask for property p at all.
func (s suite) applies(p string) bool {
	switch p {
	case GCPauseFenced:
		return s.c.Tokens
	case SafeRelease:
		return s.c.SafeRelease
	}
	return true
}

func (s suite) run(p string) []string {
	if !s.applies(p) {
		return nil
	}
	switch p {
	case Baseline:
		return s.baseline()
	case Determinism:
		return s.determinism()
	case ServerFaults:
		return s.serverFaults()
	case GCPauseUnfenced:
		return s.gcPause(false)
	case GCPauseFenced:
		return s.gcPause(true)
	case SafeRelease:
		return s.safeRelease()
	}
	panic("conformance: unknown property " + p)
}

// test is the configuration's test with opts added to its options.
func (s suite) test(t harness.Test, fenced bool) harness.Test {
	t.System = s.system
	t.SystemOptions = maps.Clone(s.c.Options)
	if t.SystemOptions == nil {
		t.SystemOptions = map[string]string{}
	}
	if fenced {
		maps.Copy(t.SystemOptions, s.c.FencedOptions)
		t.Storage = storage.Fenced
	}
	return t
}

func (s suite) baseline() []string {
	var out []string
	for seed := uint64(1); seed <= uint64(s.cfg.Seeds); seed++ {
		r, err := harness.Run(s.test(harness.Test{Seed: seed, Time: time.Minute}, false))
		if err != nil {
			out = append(out, fmt.Sprintf("seed %d: %v", seed, err))
			continue
		}
		for _, v := range r.Verdicts {
			if v.Result != models.Valid {
				out = append(out, fmt.Sprintf("seed %d: %s is %s: %s", seed, v.Check, v.Result, v.Reason))
			}
		}
		if r.Summary.AcquireSuccess <= baselineMinShare {
			out = append(out, fmt.Sprintf("seed %d: acquire success %.3f, want > %.2f", seed, r.Summary.AcquireSuccess, baselineMinShare))
		}
	}
	return out
}

func (s suite) determinism() []string {
	var out []string
	for _, k := range nemesis.Kinds {
		t := s.test(harness.Test{Nemesis: string(k), Time: 15 * time.Second}, false)
		var hs [3][]byte
		for i, seed := range []uint64{7, 7, 8} {
			t.Seed = seed
			r, err := harness.Run(t)
			if err != nil {
				out = append(out, fmt.Sprintf("%s faults, seed %d: %v", k, seed, err))
				break
			}
			var b bytes.Buffer
			if err := history.Write(&b, r.Events); err != nil {
				out = append(out, fmt.Sprintf("%s faults: writing the history: %v", k, err))
				break
			}
			hs[i] = b.Bytes()
		}
		switch {
		case hs[2] == nil:
		case !bytes.Equal(hs[0], hs[1]):
			out = append(out, fmt.Sprintf("%s faults: seed 7 twice gave two different histories", k))
		case bytes.Equal(hs[0], hs[2]):
			out = append(out, fmt.Sprintf("%s faults: seeds 7 and 8 gave the same history", k))
		}
	}
	return out
}

// serverFaults crashes, pauses and cuts off each server node in turn from 5 s
// to 10 s of a 25 s run.
func (s suite) serverFaults() []string {
	p, err := harness.Prepare(s.test(harness.Test{Seed: 1}, false))
	if err != nil {
		return []string{err.Error()}
	}
	var servers []string
	for _, n := range p.Deployment.Servers {
		servers = append(servers, n.Name())
	}
	p.World.Close()
	const start, length = 5 * time.Second, 5 * time.Second
	var out []string
	for _, server := range servers {
		for _, k := range []nemesis.Kind{nemesis.Crash, nemesis.Pause, nemesis.Partition} {
			f := nemesis.Fault{Kind: k, Targets: []string{server}, At: nemesis.Duration(start), Duration: nemesis.Duration(length)}
			t := s.test(harness.Test{Seed: 1, Time: 25 * time.Second, Schedule: &nemesis.Schedule{Faults: []nemesis.Fault{f}}}, false)
			r, err := harness.Run(t)
			if err != nil {
				out = append(out, fmt.Sprintf("%s of %s: %v", k, server, err))
				continue
			}
			if len(r.Verdicts) == 0 {
				out = append(out, fmt.Sprintf("%s of %s: no check gave a verdict", k, server))
			}
			if !acquiredAfter(r.Events, int64(start+length)) {
				out = append(out, fmt.Sprintf("%s of %s: no acquire succeeded after the fault ended at %v (stuck)", k, server, start+length))
			}
		}
	}
	return out
}

// acquiredAfter reports whether an acquire returned ok after t.
func acquiredAfter(events []history.Event, t int64) bool {
	for _, e := range events {
		if e.F == history.FAcquire && e.Type == history.OK && e.Time > t {
			return true
		}
	}
	return false
}

// gcPause pauses client 1 right after it read under the lock, for
// HolderPause; two clients.
func (s suite) gcPause(fenced bool) []string {
	t := s.test(harness.Test{Seed: 1, Clients: 2, Time: 2*s.c.HolderPause + 10*time.Second,
		Schedule: &nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Pause, Targets: []string{"c1"},
			Duration: nemesis.Duration(s.c.HolderPause), After: &nemesis.Trigger{Node: "c1", F: history.FRead}}}}}, fenced)
	r, err := harness.Run(t)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	if !fired(r) {
		out = append(out, "the pause of c1 after its first read never fired")
	}
	cs := verdictOf(r, "critical-sections")
	switch {
	case fenced && cs.Result != models.Valid:
		out = append(out, fmt.Sprintf("fenced storage with the system's tokens: critical-sections is %s (%s), want valid", cs.Result, cs.Reason))
	case !fenced && cs.Result != models.Invalid:
		out = append(out, fmt.Sprintf("unfenced storage: critical-sections is %s (%s), want invalid", cs.Result, cs.Reason))
	}
	return out
}

// safeRelease pauses client 1 right after its first write for HolderPause;
// it releases when it resumes. Three clients hold the lock 1.5 s at a time.
func (s suite) safeRelease() []string {
	t := s.test(harness.Test{Seed: 1, Clients: 3, Time: 2*s.c.HolderPause + 10*time.Second,
		WorkloadOptions: map[string]string{"hold": "1500ms"},
		Schedule: &nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Pause, Targets: []string{"c1"},
			Duration: nemesis.Duration(s.c.HolderPause), After: &nemesis.Trigger{Node: "c1", F: history.FWrite}}}}}, false)
	r, err := harness.Run(t)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	if !fired(r) {
		out = append(out, "the pause of c1 after its first write never fired")
	}
	for _, o := range models.Overlaps(models.Holdings(r.Events)) {
		if o.A.Node != "c1" && o.B.Node != "c1" {
			out = append(out, fmt.Sprintf("%s and %s held the lock at once from %v for %v after c1's late release",
				o.A.Node, o.B.Node, time.Duration(o.Start), o.Length()))
			break
		}
	}
	return out
}

func fired(r harness.Result) bool {
	for _, o := range r.FaultOutcomes {
		if !o.Fired {
			return false
		}
	}
	return true
}

func verdictOf(r harness.Result, check string) models.Verdict {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return v
		}
	}
	return models.Verdict{Check: check, Result: models.Unknown, Reason: "the check did not run"}
}

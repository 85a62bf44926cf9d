// Package conformance is the suite every lock system in locklab passes, in the
// pattern of testing/fstest.TestFS: it takes the system itself (a
// system.System, registered or not) and the claims it makes for each
// configuration (system.Claims), runs every property a lock system must have
// and returns every misbehaviour at once, joined in one error (nil: it
// conforms). TestSystem runs it from a test, one subtest per claim.
//
// The properties, by the names Claims.ExpectFail uses:
//
//   - baseline: without faults every check is valid and more than 99% of the
//     acquires succeed, on each of Config.Seeds seeds;
//   - determinism: under random faults of each kind (nemesis.Kinds) alone and
//     of every kind at once, under every kind aimed at each declared role in
//     one run, and in every catalog variant of the system, the same seed
//     gives a byte-identical history and another seed another one; each
//     kind's faults start in its run, and every fault aimed at a role fires;
//   - declared: every role the deployment declares (Deployment.Roles) names a
//     node a fault can take (a pause of it fires), and every message type it
//     declares (Deployment.Messages) is sent in some run of a claimed
//     configuration (this one or another the system registers, fenced or
//     not) under random faults or of the system's catalog variants;
//   - honest-outcomes: under random faults, every acquire that returned ok was
//     granted by the servers (their own record, lockapi.GrantLog: a grant to
//     its client and owner by then, on a quorum of scopes), and every acquire
//     that returned fail holds no grant made during the call that was still in
//     force when it returned; info (unknown) is what the record allows either
//     way, and is counted, not judged;
//   - server-faults: crash-restart, pause and partition of each server node
//     leave the run checkable (the harness does not crash, every check gives a
//     verdict) and the world not stuck (an acquire succeeds after the fault);
//   - gc-pause-unfenced: Kleppmann's pause of a holder past its lease, with
//     unfenced storage, makes the critical sections invalid (the suite can
//     tell a broken run);
//   - gc-pause-fenced (claims Tokens only): the same pause with fenced storage
//     and the system's own tokens leaves the critical sections valid;
//   - fenced-safety (claims Tokens only): a targeted search of each fault
//     family (the safety matrix's search of one cell: guided by what each run
//     shows, Config.Budget runs at most) finds no run with fenced storage
//     (reads and writes) and the system's tokens whose critical sections or
//     token order fail: the
//     claim that the tokens fence is tested where it could break, and a false
//     one fails with its counterexample (the shrunk faults and the story);
//   - safe-release (claims SafeRelease only): the paused holder's release
//     after its lock went to another client frees nothing: no two clients
//     other than it ever overlap;
//   - live-parity (Config.Live only; once per system, with its first claimed
//     configuration, as the catalog's variants are the system's): every
//     catalog variant of the system that runs live (package live) runs in
//     real time at Config.LiveScale (or as Config.LiveTuning says), up to 3
//     tries, and one try must match the variant's expectations (its
//     verdicts, every fault fired, and its assertions; at a scale other
//     than 1 a measured time out of its range, scenario.ErrTiming, is
//     excused, since the servers' own timers are not scaled), as the
//     simulation does. It does not apply to a system with no
//     live form; a variant live refuses before starting (an option or fault
//     with no live form) is not run, and one whose server is not installed is
//     skipped, not a misbehaviour: both are said through Config.Logf.
//
// A system proves itself by declaring its Claims in its registration
// (system.System.Claims); TestEveryRegisteredSystemConforms runs the suite on
// every registered system, so a new system is checked by being added. The
// default cost is that of the default safety matrix's search for the claimed
// configurations; -short and the flags of that test size it.
package conformance

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/live"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/sweep"
	"github.com/locklab/locklab/system"
)

// Property names, as Claims.ExpectFail uses them.
const (
	Baseline         = "baseline"
	Determinism      = "determinism"
	Declared         = "declared"
	HonestOutcomes   = "honest-outcomes"
	ServerFaults     = "server-faults"
	GCPauseUnfenced  = "gc-pause-unfenced"
	GCPauseFenced    = "gc-pause-fenced"
	FencedSafety     = "fenced-safety"
	SafeRelease      = "safe-release"
	LiveParity       = "live-parity"
	defaultPause     = 15 * time.Second
	baselineMinShare = 0.99
)

// Properties lists every property in the order Check runs them.
var Properties = []string{Baseline, Determinism, Declared, HonestOutcomes, ServerFaults, GCPauseUnfenced, GCPauseFenced, FencedSafety, SafeRelease,
	LiveParity}

// Config sizes the suite. The zero value is the default.
type Config struct {
	// Seeds is the number of seeds of the baseline and of the honest-outcomes
	// runs (default 2); the other properties use seed 1 (determinism: 7 and 8).
	Seeds int
	// Budget is the most runs the fenced-safety search makes in each fault
	// family (default 300, the default safety matrix's).
	Budget int
	// Families are the fault families fenced-safety searches (default every
	// family of the safety matrix: sweep.SearchColumns).
	Families []string
	// Live runs the live-parity property: the system's catalog variants in
	// real time against the real library or servers (default false: it
	// takes real time, and may start real servers).
	Live bool
	// LiveScale multiplies every duration of a live-parity run (default
	// 0.1, as the live package's own cross-validation of raftkv).
	LiveScale float64
	// LiveTuning, if set, tunes one variant's live-parity run: its scale (0:
	// LiveScale) and the system options that override the variant's after
	// scaling (live.Config.Options), for a variant whose story needs a
	// timing of the real system that the scale alone does not give
	// (hashicorp/raft's election shortened, a slower scale for a server's
	// own timers).
	LiveTuning func(v scenario.Variant) (scale float64, options map[string]string)
	// Logf, if set, is told what the suite skipped and why (a variant live
	// refuses, a server that is not installed) and how each live-parity
	// variant went, try by try; TestSystem sets it to t.Logf.
	Logf func(format string, args ...any)
}

// DefaultBudget is the fenced-safety search's default budget per family.
const DefaultBudget = 300

// DefaultLiveScale is live-parity's default scale of every duration.
const DefaultLiveScale = 0.1

// liveTries is how many times live-parity runs a variant before its misses
// count: a real-time run on a loaded machine can miss the moment its story
// needs; a model that disagrees with the real system misses every try.
const liveTries = 3

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

// TestSystem runs the suite on every configuration sys claims, one subtest
// each (named for the claim's Variant, "defaults" for ""), in parallel; a
// system that claims nothing fails. It is how a system's own test proves it,
// registered or not (a system must be registered to run: harness.Run finds it
// by name).
func TestSystem(t *testing.T, sys system.System, cfg Config) {
	t.Helper()
	if len(sys.Claims) == 0 {
		t.Fatalf("system %s declares no Claims in its registration", sys.Name)
	}
	for _, c := range sys.Claims {
		name := c.Variant
		if name == "" {
			name = "defaults"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cfg := cfg
			if cfg.Logf == nil {
				cfg.Logf = t.Logf
			}
			if err := Check(sys, c, cfg); err != nil {
				t.Errorf("%s does not conform:\n%v", sys.Name, err)
			}
		})
	}
}

// Check runs every property on the system sys with the claims c and returns
// every misbehaviour joined (each a Misbehaviour), or nil. sys must be
// registered (harness.Run deploys a system by its name).
func Check(sys system.System, c system.Claims, cfg Config) error {
	if _, err := system.Find(sys.Name); err != nil {
		return fmt.Errorf("conformance of %q: %w", sys.Name, err)
	}
	if cfg.Seeds <= 0 {
		cfg.Seeds = 2
	}
	if cfg.Budget <= 0 {
		cfg.Budget = DefaultBudget
	}
	if len(cfg.Families) == 0 {
		cfg.Families = sweep.SearchColumns()
	}
	if cfg.LiveScale <= 0 {
		cfg.LiveScale = DefaultLiveScale
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if c.HolderPause <= 0 {
		c.HolderPause = defaultPause
	}
	s := suite{sys: sys, system: sys.Name, c: c, cfg: cfg}
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
	sys    system.System
	system string
	c      system.Claims
	cfg    Config
}

func (s suite) bad(property, detail string) Misbehaviour {
	return Misbehaviour{System: s.system, Variant: s.c.Variant, Property: property, Detail: detail}
}

// applies reports whether the claims ask for property p at all.
func (s suite) applies(p string) bool {
	switch p {
	case GCPauseFenced, FencedSafety:
		return s.c.Tokens
	case SafeRelease:
		return s.c.SafeRelease
	case LiveParity:
		return s.cfg.Live && slices.Contains(live.Systems(), s.system) &&
			(len(s.sys.Claims) == 0 || s.c.Variant == s.sys.Claims[0].Variant)
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
	case Declared:
		return s.declared()
	case HonestOutcomes:
		return s.honestOutcomes()
	case ServerFaults:
		return s.serverFaults()
	case GCPauseUnfenced:
		return s.gcPause(false)
	case GCPauseFenced:
		return s.gcPause(true)
	case FencedSafety:
		return s.fencedSafety()
	case SafeRelease:
		return s.safeRelease()
	case LiveParity:
		return s.liveParity()
	}
	panic("conformance: unknown property " + p)
}

// test is the configuration's test with opts added to its options.
func (s suite) test(t scenario.Test, fenced bool) scenario.Test {
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

// serverless reports whether the configuration deploys no server (the
// control lock): a crash has nothing to take.
func (s suite) serverless() bool {
	p, err := harness.Prepare(s.test(scenario.Test{Seed: 1}, false))
	if err != nil {
		return false
	}
	defer p.World.Close()
	return len(p.Deployment.Servers) == 0
}

// variants are the system's own catalog variants (those that run it).
func (s suite) variants() []scenario.Variant {
	var out []scenario.Variant
	for _, sc := range scenario.Catalog() {
		for _, v := range sc.Variants {
			if v.Test.System == s.system {
				v.Name = sc.Name + "/" + v.Name
				out = append(out, v)
			}
		}
	}
	return out
}
func (s suite) baseline() []string {
	var out []string
	for seed := uint64(1); seed <= uint64(s.cfg.Seeds); seed++ {
		r, err := harness.Run(s.test(scenario.Test{Seed: seed, Time: time.Minute}, false))
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
	kinds := append(slices.Clone(nemesis.Kinds), "random")
	for _, k := range kinds {
		t := s.test(scenario.Test{Nemesis: string(k), Time: 15 * time.Second}, false)
		r7, problem := sameSeedSameHistory(t, string(k)+" faults")
		if problem != "" {
			out = append(out, problem)
			continue
		}
		if k != "random" && r7.Summary.Faults[string(k)] == 0 && !(k == nemesis.Crash && s.serverless()) {
			out = append(out, fmt.Sprintf("%s faults: seed 7 started none", k))
		}
	}
	// Every fault kind on every role the deployment declares, in one run:
	// each fires, and the run is deterministic.
	if sched, err := s.everyFault(); err != nil {
		out = append(out, err.Error())
	} else {
		t := s.test(scenario.Test{Schedule: sched, Time: time.Duration(len(sched.Faults)+2) * 3 * time.Second}, false)
		r7, problem := sameSeedSameHistory(t, "every fault kind on every role")
		if problem != "" {
			out = append(out, problem)
		}
		for _, o := range r7.FaultOutcomes {
			if !o.Fired {
				out = append(out, fmt.Sprintf("every fault kind on every role: %s (faults[%d]) did not fire: %s", o.Kind, o.Fault, o.DidNotFire))
			}
		}
	}
	// The catalog's variants reach options and schedules the claims do not:
	// each is deterministic too.
	for _, v := range s.variants() {
		if _, problem := sameSeedSameHistory(v.Test, v.Name); problem != "" {
			out = append(out, problem)
		}
	}
	return out
}

// everyFault is a schedule of every fault kind aimed at each role the
// deployment declares (and at client c1), one after another, 3 s apart.
func (s suite) everyFault() (*nemesis.Schedule, error) {
	p, err := harness.Prepare(s.test(scenario.Test{Seed: 1}, false))
	if err != nil {
		return nil, err
	}
	targets := append([]string{"c1"}, p.Deployment.Roles...)
	servers := len(p.Deployment.Servers) > 0
	p.World.Close()
	var faults []nemesis.Fault
	at := func() nemesis.Duration { return nemesis.Duration(time.Duration(len(faults)+1) * 3 * time.Second) }
	two := nemesis.Duration(2 * time.Second)
	for _, target := range targets {
		on := []string{target}
		faults = append(faults,
			nemesis.Fault{Kind: nemesis.Pause, Targets: on, At: at(), Duration: two},
			nemesis.Fault{Kind: nemesis.Partition, Targets: on, At: at(), Duration: two},
			nemesis.Fault{Kind: nemesis.ClockJump, Targets: on, At: at(), Amount: nemesis.Duration(20 * time.Second)},
			nemesis.Fault{Kind: nemesis.ClockDrift, Targets: on, At: at(), Drift: 0.3, Duration: two})
		if target != "c1" && servers {
			faults = append(faults, nemesis.Fault{Kind: nemesis.Crash, Targets: on, At: at(), Duration: nemesis.Duration(time.Second)})
		}
	}
	faults = append(faults, nemesis.Fault{Kind: nemesis.Delay, From: []string{"clients"}, To: []string{"storage"}, At: at(),
		Amount: nemesis.Duration(time.Second), Duration: two})
	return &nemesis.Schedule{Faults: faults}, nil
}

// sameSeedSameHistory runs t with seeds 7, 7 and 8 and says what is wrong:
// the same seed giving two histories, or two seeds one (a history of one
// event or none is no evidence either way). It returns seed 7's result.
func sameSeedSameHistory(t scenario.Test, what string) (scenario.Result, string) {
	var hs [3][]byte
	var first scenario.Result
	for i, seed := range []uint64{7, 7, 8} {
		t.Seed = seed
		r, err := harness.Run(t)
		if err != nil {
			return first, fmt.Sprintf("%s, seed %d: %v", what, seed, err)
		}
		var b bytes.Buffer
		if err := history.Write(&b, r.Events); err != nil {
			return first, fmt.Sprintf("%s: writing the history: %v", what, err)
		}
		hs[i] = b.Bytes()
		if i == 0 {
			first = r
		}
	}
	switch {
	case !bytes.Equal(hs[0], hs[1]):
		return first, fmt.Sprintf("%s: seed 7 twice gave two different histories", what)
	case bytes.Equal(hs[0], hs[2]) && bytes.Count(hs[0], []byte("\n")) > 1:
		return first, fmt.Sprintf("%s: seeds 7 and 8 gave the same history", what)
	}
	return first, ""
}

// declared checks the deployment's roles and message types against what the
// system does: each role names a node a pause can take, and each declared
// message type is sent in a run of the configuration under random faults or
// of one of the system's catalog variants.
func (s suite) declared() []string {
	var out []string
	p, err := harness.Prepare(s.test(scenario.Test{Seed: 1}, false))
	if err != nil {
		return []string{err.Error()}
	}
	roles, declared := slices.Clone(p.Deployment.Roles), typeNames(p.Deployment.Messages)
	p.World.Close()
	for _, role := range roles {
		f := nemesis.Fault{Kind: nemesis.Pause, Targets: []string{role}, At: nemesis.Duration(2 * time.Second), Duration: nemesis.Duration(2 * time.Second)}
		r, err := harness.Run(s.test(scenario.Test{Seed: 1, Time: 10 * time.Second, Schedule: &nemesis.Schedule{Faults: []nemesis.Fault{f}}}, false))
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("role %q: a pause of it: %v", role, err))
		case len(r.FaultOutcomes) != 1 || !r.FaultOutcomes[0].Fired:
			out = append(out, fmt.Sprintf("role %q: a pause of it never fired", role))
		}
	}
	sent := map[string]bool{}
	var runs []scenario.Test
	claims := append([]system.Claims{s.c}, s.sys.Claims...)
	for i, c := range claims {
		other := suite{sys: s.sys, system: s.system, c: c, cfg: s.cfg}
		for _, fenced := range []bool{false, c.Tokens} {
			runs = append(runs, other.test(scenario.Test{Seed: uint64(i + 1), Nemesis: "random", Time: 20 * time.Second}, fenced))
		}
	}
	configs := len(runs)
	for _, v := range s.variants() {
		runs = append(runs, v.Test)
	}
	for _, t := range runs {
		p, err := harness.Prepare(t)
		if err != nil {
			out = append(out, err.Error())
			continue
		}
		p.World.Network().AddRule(sim.Rule{Match: func(m sim.Message) bool {
			sent[fmt.Sprintf("%T", m.Body)] = true
			return false
		}})
		p.World.RunUntil(p.Test.Time)
		p.World.Close()
	}
	var unsent []string
	for _, name := range declared {
		if !sent[name] {
			unsent = append(unsent, name)
		}
	}
	if len(unsent) > 0 {
		out = append(out, fmt.Sprintf("declared message types never sent (by %d claimed configurations under random faults, fenced and not, or by the catalog's %d variants): %s",
			len(claims), len(runs)-configs, strings.Join(unsent, ", ")))
	}
	return out
}

// typeNames are the %T names of one value of each message type.
func typeNames(messages []any) []string {
	var out []string
	for _, m := range messages {
		out = append(out, fmt.Sprintf("%T", m))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// honestOutcomes runs the configuration under random faults with the
// servers' record of grants and judges every acquire that returned ok or fail
// against it (see the package doc).
func (s suite) honestOutcomes() []string {
	var out []string
	var infos, judged int
	for seed := uint64(1); seed <= uint64(s.cfg.Seeds); seed++ {
		p, err := harness.Prepare(s.test(scenario.Test{Seed: seed, Nemesis: "random", Time: 30 * time.Second}, false))
		if err != nil {
			return []string{err.Error()}
		}
		if p.Deployment.Grants == nil {
			return []string{"the deployment keeps no record of its grants (Deployment.Grants)"}
		}
		p.RecordGrants()
		r, err := p.Run()
		if err != nil {
			return []string{fmt.Sprintf("seed %d: %v", seed, err)}
		}
		problems, n, i := judgeOutcomes(r.Events, p.Deployment.Grants.Grants(), p.Deployment.Grants.Quorum())
		judged, infos = judged+n, infos+i
		for _, pr := range problems {
			out = append(out, fmt.Sprintf("seed %d: %s", seed, pr))
		}
	}
	if judged == 0 {
		out = append(out, fmt.Sprintf("no acquire returned ok or fail in %d runs under random faults: nothing to judge", s.cfg.Seeds))
	}
	return out
}

// judgeOutcomes judges the acquires of a history against the grants the
// servers recorded: the dishonest outcomes, the acquires judged and those
// that ended unknown.
func judgeOutcomes(events []history.Event, grants []lockapi.Grant, quorum int) (problems []string, judged, infos int) {
	quorum = max(quorum, 1)
	type asked struct{ node, owner string }
	byAsker := map[asked][]lockapi.Grant{}
	for _, g := range grants {
		k := asked{g.Client, g.Owner}
		byAsker[k] = append(byAsker[k], g)
	}
	invoked := map[int]history.Event{}
	for _, e := range events {
		if e.F != history.FAcquire {
			continue
		}
		if e.Type == history.Invoke {
			invoked[e.Process] = e
			continue
		}
		if !e.Type.IsCompletion() {
			continue
		}
		inv, ok := invoked[e.Process]
		delete(invoked, e.Process)
		if !ok {
			continue
		}
		if e.Type == history.Info {
			infos++
			continue
		}
		owner := e.Owner
		if owner == "" {
			owner = inv.Owner
		}
		gs := byAsker[asked{e.Node, owner}]
		at := time.Duration(e.Time)
		switch e.Type {
		case history.OK:
			judged++
			if owner == "" {
				problems = append(problems, fmt.Sprintf("%s's acquire that returned ok at %s names no owner to look up", e.Node, history.FormatTime(e.Time)))
				continue
			}
			if n := scopes(gs, func(g lockapi.Grant) bool { return g.At <= at }); n < quorum {
				problems = append(problems, fmt.Sprintf("%s's acquire returned ok at %s as %s, but the servers granted %s on %d of the %d scopes it needs by then",
					e.Node, history.FormatTime(e.Time), owner, owner, n, quorum))
			}
		case history.Fail:
			judged++
			if owner == "" {
				continue // nothing was asked in a name the servers could grant
			}
			from := time.Duration(inv.Time)
			inForce := func(g lockapi.Grant) bool {
				return g.At >= from && g.At <= at && (g.Released == 0 || g.Released > at) && (g.Removed == 0 || g.Removed > at) &&
					(g.Until == 0 || g.Until > at)
			}
			if n := scopes(gs, inForce); n >= quorum {
				problems = append(problems, fmt.Sprintf("%s's acquire returned fail at %s, but the servers granted it to %s during the call and the grant was still in force on %d scopes (quorum %d)",
					e.Node, history.FormatTime(e.Time), owner, n, quorum))
			}
		}
	}
	return problems, judged, infos
}

// scopes counts the distinct scopes of the grants that satisfy keep.
func scopes(gs []lockapi.Grant, keep func(lockapi.Grant) bool) int {
	seen := map[string]bool{}
	for _, g := range gs {
		if keep(g) {
			seen[g.Scope] = true
		}
	}
	return len(seen)
}

// fencedSafety searches each fault family for a run with fenced storage and
// the system's tokens whose critical sections or token order fail (see the
// package doc): the search of the safety matrix's cell of this configuration.
func (s suite) fencedSafety() []string {
	t := s.test(scenario.Test{}, true)
	// Reads are fenced too: a fence on writes alone lets two holders read
	// the same value and both write (a lost update no token can prevent).
	row := sweep.NewSearchedRow("claimed configuration", sweep.Config{System: t.System, SystemOptions: t.SystemOptions, Storage: t.Storage,
		FenceReads: true}, "fencing reads and writes")
	c := sweep.SearchConfig{Rows: []sweep.SearchedRow{row}, Columns: s.cfg.Families, Budget: s.cfg.Budget,
		Time: sweep.Duration(20 * time.Second), Clients: 2, ShrinkRuns: 150}
	var out []string
	for _, family := range s.cfg.Families {
		cell, _, err := sweep.SearchCell(c, row, family, sweep.CellOptions{})
		if err != nil {
			out = append(out, fmt.Sprintf("%s faults: %v", family, err))
			continue
		}
		for _, f := range cell.Findings {
			if f.Kind != sweep.VerdictCorrupted && f.Kind != sweep.VerdictTokenOrder {
				continue
			}
			out = append(out, fmt.Sprintf("%s faults, run %d of the search: %s fails (%s); faults: %s; %s",
				family, f.RunsTo, strings.Join(f.Checks, ", "), f.Kind, strings.Join(f.Faults, "; "), f.Story))
		}
	}
	return out
}

// serverFaults crashes, pauses and cuts off each server node in turn from 5 s
// to 10 s of a 25 s run.
func (s suite) serverFaults() []string {
	p, err := harness.Prepare(s.test(scenario.Test{Seed: 1}, false))
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
			t := s.test(scenario.Test{Seed: 1, Time: 25 * time.Second, Schedule: &nemesis.Schedule{Faults: []nemesis.Fault{f}}}, false)
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
	r, out := s.pauseHolder(scenario.Test{Clients: 2}, history.FRead, fenced)
	if r == nil {
		return out
	}
	cs := verdictOf(*r, "critical-sections")
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
	r, out := s.pauseHolder(scenario.Test{Clients: 3, WorkloadOptions: map[string]string{"hold": "1500ms"}},
		history.FWrite, false)
	if r == nil {
		return out
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

// pauseHolder runs base (seed 1, long enough for the pause and a recovery)
// with client 1 paused for HolderPause right after its first operation f
// under the lock. It returns the result, nil when the run failed, and the
// suite's findings so far: the run's error, or a pause that never fired.
func (s suite) pauseHolder(base scenario.Test, f string, fenced bool) (*scenario.Result, []string) {
	base.Seed, base.Time = 1, 2*s.c.HolderPause+10*time.Second
	base.Schedule = &nemesis.Schedule{Faults: []nemesis.Fault{{Kind: nemesis.Pause, Targets: []string{"c1"},
		Duration: nemesis.Duration(s.c.HolderPause), After: &nemesis.Trigger{Node: "c1", F: f}}}}
	r, err := harness.Run(s.test(base, fenced))
	if err != nil {
		return nil, []string{err.Error()}
	}
	var out []string
	if !fired(r) {
		out = append(out, fmt.Sprintf("the pause of c1 after its first %s never fired", f))
	}
	return &r, out
}

func fired(r scenario.Result) bool {
	for _, o := range r.FaultOutcomes {
		if !o.Fired {
			return false
		}
	}
	return true
}

func verdictOf(r scenario.Result, check string) models.Verdict {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return v
		}
	}
	return models.Verdict{Check: check, Result: models.Unknown, Reason: "the check did not run"}
}

// liveParity runs each of the system's catalog variants that live can run in
// real time, up to liveTries times, and reports those no try matched (see
// the package doc). Variants live refuses and servers not installed are
// logged as skipped.
func (s suite) liveParity() []string {
	var out []string
	for _, v := range s.variants() {
		cfg := live.Config{Scale: s.cfg.LiveScale}
		if s.cfg.LiveTuning != nil {
			if scale, options := s.cfg.LiveTuning(v); scale > 0 || options != nil {
				cfg.Scale, cfg.Options = cmp.Or(scale, cfg.Scale), options
			}
		}
		if why := live.Unavailable(v.ReproTest()); why != "" {
			s.cfg.Logf("%s: %s/%s: skipped: %s", LiveParity, s.system, v.Name, why)
			continue
		}
		if _, err := live.Prepare(v.ReproTest(), cfg); errors.Is(err, live.ErrNotLive) {
			s.cfg.Logf("%s: %s/%s: skipped: %v", LiveParity, s.system, v.Name, err)
			continue
		}
		problem, err := s.liveTries(v, cfg)
		var missing *proc.MissingError
		switch {
		case errors.As(err, &missing):
			s.cfg.Logf("%s: %s/%s: skipped: %v", LiveParity, s.system, v.Name, missing)
		case err != nil:
			out = append(out, fmt.Sprintf("%s (live, scale %g): %v", v.Name, cfg.Scale, err))
		case problem != "":
			out = append(out, fmt.Sprintf("%s (live, scale %g): no try of %d matched; the last: %s", v.Name, cfg.Scale, liveTries, problem))
		}
	}
	return out
}

// liveTries runs v live until it matches its expectations, at most
// liveTries times, logging each try; it returns the last try's mismatches
// ("" when one matched) or the error that stopped a try. At a scale other
// than 1 a try whose verdicts match and whose faults all fired matches even
// if the variant's assertions missed, but only when every miss is a measured
// time out of its range (scenario.ErrTiming, logged): the servers' own
// timers are not scaled with the test. Any other missed assertion (a story
// event not seen, a write not rejected) is a miss at every scale.
func (s suite) liveTries(v scenario.Variant, cfg live.Config) (string, error) {
	problem := ""
	for try := 1; try <= liveTries; try++ {
		o, err := live.Repro(context.Background(), v, cfg)
		if err != nil {
			return "", err
		}
		if o.Match() {
			s.cfg.Logf("%s: %s/%s: matched live in try %d of at most %d (scale %g)", LiveParity, s.system, v.Name, try, liveTries, cfg.Scale)
			return "", nil
		}
		problem = strings.Join(o.Mismatches, "; ")
		if cfg.Scale != 1 && v.Assert != nil && scenario.OnlyTiming(v.Assert(o.Result)) {
			unasserted := v
			unasserted.Assert = nil
			same := func(scenario.Test) (scenario.Result, error) { return o.Result, nil }
			if u, err := harness.ReproWith(unasserted, same); err == nil && u.Match() {
				s.cfg.Logf("%s: %s/%s: matched live in try %d of at most %d (scale %g), its verdicts and faults; only its measured times, not held to their range at this scale, missed: %s",
					LiveParity, s.system, v.Name, try, liveTries, cfg.Scale, problem)
				return "", nil
			}
		}
		s.cfg.Logf("%s: %s/%s: live try %d of %d missed: %s", LiveParity, s.system, v.Name, try, liveTries, problem)
	}
	return problem, nil
}

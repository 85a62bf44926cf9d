package guide

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// Config is one guided search.
type Config struct {
	// Hunt is the target when Target is nil: its variant's system and
	// workload, and the kind of violation that ends the search (HuntTarget).
	Hunt harness.Hunt
	// Target, when set, is the target instead of Hunt: any base test, a
	// fault family and a stop predicate (a cell of the safety matrix).
	Target *Target
	// Seed drives every choice of the search (the parents, the mutations,
	// when to draw afresh).
	Seed uint64
	// Start is the seed of the first fresh draw; the k-th fresh draw is the
	// hunt's test of seed Start+k, as a swarm sweep from Start would run
	// them. So the fresh draws of a guided search are a swarm sweep's runs,
	// in order, with mutations interleaved: run side by side with that sweep
	// (explore --compare), both meet the same luck, and the difference is
	// what the mutations add.
	Start uint64
	// MaxRuns bounds the runs. Default 1000.
	MaxRuns int
	// Fresh is the number of plain swarm-random runs the search starts with
	// (the seed corpus). After them, the share of fresh draws falls as the
	// corpus grows: Fresh/runs, down to 1/FreshEvery. Default 4: a hunt
	// swarm random finds within 4 runs is found by both at the same run,
	// and a harder one gets mutations early.
	Fresh int
	// FreshEvery: at length, one run in FreshEvery is a fresh random draw
	// rather than a mutation. Default 8.
	FreshEvery int
	// OnRun, when set, is told of every run the search makes, the stopping
	// one included, in order: the test with the schedule that ran made
	// explicit, and its result. The result is valid only during the call
	// (the search hands its storage to the next run); copy what is kept.
	OnRun func(t scenario.Test, r scenario.Result)
}

// Target is what a search aims at: a base test per seed, a fault family the
// search stays within, and the runs that end it.
type Target struct {
	// Name names the target in errors ("redis · unfenced × pause").
	Name string
	// Test is the base test of a seed: the k-th fresh draw is Test(Start+k).
	// Its Nemesis should be the family's random nemesis (the family's kind,
	// or "random"), so that fresh draws stay within the family.
	Test func(seed uint64) (scenario.Test, error)
	// Family is a fault kind (nemesis.Kinds) or "random" (every kind; ""
	// means the same): mutations only add, retarget, place or splice faults
	// of that kind, and placements are the attacks made of it (pause the
	// holder beyond its lease, cut off or crash a granter, move a clock,
	// delay a write).
	Family string
	// Kind, when set, is the kind of violation (scenario.ViolationKinds) the
	// placements are directed at (Directed); else they are directed at the
	// family's attacks (none for "random": every attack alike).
	Kind string
	// Stop reports whether a run ends the search (Outcome.Found).
	Stop func(scenario.Result) bool
}

// HuntTarget is the target of a catalog hunt: the hunt's test of each seed
// (swarm-random faults of every kind), directed at and stopped by the
// hunt's kind of violation.
func HuntTarget(h harness.Hunt) Target {
	return Target{Name: h.Name, Test: h.Test, Family: "random", Kind: h.Kind, Stop: func(r scenario.Result) bool {
		return r.Overall == models.Invalid && slices.Contains(scenario.ViolationKinds(r.Events), h.Kind)
	}}
}

// Families are the fault families a Target may name: each fault kind alone,
// then every kind.
func Families() []string {
	var out []string
	for _, k := range nemesis.Kinds {
		out = append(out, string(k))
	}
	return append(out, "random")
}

// familyKinds are the fault kinds of a family: nil for every kind.
func familyKinds(family string) ([]nemesis.Kind, error) {
	switch family {
	case "", "random":
		return nil, nil
	}
	if !slices.Contains(nemesis.Kinds, nemesis.Kind(family)) {
		return nil, fmt.Errorf("fault family %q: want one of %s", family, strings.Join(Families(), ", "))
	}
	return []nemesis.Kind{nemesis.Kind(family)}, nil
}

// familyAttacks are, for each fault kind, the targeted placements made of
// it (the "random" attack draws a fault of the family too).
var familyAttacks = map[nemesis.Kind][]string{
	nemesis.Pause:      {"pause-holder", "pause-granter"},
	nemesis.Partition:  {"isolate-holder", "isolate-granter"},
	nemesis.Delay:      {"delay-holder-storage"},
	nemesis.Crash:      {"crash-granter"},
	nemesis.ClockJump:  {"clock-holder", "clock-granter", "clock-server"},
	nemesis.ClockDrift: {"clock-holder", "clock-granter", "clock-server"},
}

func (c Config) withDefaults() Config {
	if c.MaxRuns <= 0 {
		c.MaxRuns = 1000
	}
	if c.Fresh <= 0 {
		c.Fresh = 4
	}
	if c.FreshEvery <= 0 {
		c.FreshEvery = 8
	}
	return c
}

// Entry is a test in the corpus and what it covered first.
type Entry struct {
	Test scenario.Test
	// New are the features no earlier run had reached.
	New []string
	// Cov is every feature the run covered.
	Cov []string
	// holds are the run's holdings, where placement mutations anchor faults.
	holds []hold
}

// hold is one time a client held the lock in a corpus entry's run: from its
// acquire's ok to the end of the holding, and the servers that granted it.
type hold struct {
	node       string
	start, end int64
	// invoke is when the acquire that granted the hold was invoked.
	invoke   int64
	granters []string
	bare     bool
	// lease is the time from the grant to the lease's deadline (0: no lease).
	lease time.Duration
	// steps are the holder's protocol steps during the hold, in order: the
	// acquire's ok first, then each invocation and ok of its reads, writes,
	// renewals and its release. Placements anchor on them.
	steps []step
}

// step is one event of a holder's protocol: its function, its type, when it
// happened, and which of the holder's events of that function and type
// since the acquire's ok it is (1: the first), for a trigger.
type step struct {
	f   string
	typ history.Type
	at  int64
	nth int
}

// beforeLastOp are the hold's steps before the invocation of its last
// storage operation (read, write, append): where an attack on the holder
// still has an operation to make late. All of them when it has none.
func (h hold) beforeLastOp() []step {
	for i := len(h.steps) - 1; i >= 0; i-- {
		st := h.steps[i]
		if st.typ == history.Invoke && (st.f == history.FRead || st.f == history.FWrite || st.f == history.FAppend) {
			if i == 0 {
				break
			}
			return h.steps[:i]
		}
	}
	return h.steps
}

// quickest is one of the holdings whose acquire took at most 10 ms more
// than the quickest one's, at random: an acquire that was a single attempt,
// its invocation right before its grant.
func (m mutator) quickest(holds []hold) hold {
	least := holds[0].start - holds[0].invoke
	for _, x := range holds[1:] {
		least = min(least, x.start-x.invoke)
	}
	var quick []hold
	for _, x := range holds {
		if x.start-x.invoke <= least+int64(10*time.Millisecond) {
			quick = append(quick, x)
		}
	}
	return quick[m.rng.IntN(len(quick))]
}

// holdsOf are the holdings of a history, as placement anchors.
func holdsOf(ev []history.Event) []hold {
	var out []hold
	byNode := map[string][]history.Event{}
	for _, e := range ev {
		if e.Process != history.NemesisProcess {
			byNode[e.Node] = append(byNode[e.Node], e)
		}
	}
	for _, h := range models.Holdings(ev) {
		if h.Acquired.F != history.FAcquire || h.Acquired.Type != history.OK {
			continue
		}
		var granters []string
		if _, list, ok := strings.Cut(h.Acquired.Detail, "granted by "); ok {
			list, _, _ = strings.Cut(list, " ")
			granters = strings.Split(strings.TrimSuffix(list, ","), ",")
		}
		x := hold{node: h.Node, start: h.Start, end: h.End, invoke: h.Start, granters: granters, bare: bareQuorum(h.Acquired.Detail)}
		if h.Deadline != nil && *h.Deadline > h.Start {
			x.lease = time.Duration(*h.Deadline - h.Start)
		}
		nev := byNode[h.Node]
		i, _ := slices.BinarySearchFunc(nev, h.Start, func(e history.Event, t int64) int { return cmp.Compare(e.Time, t) })
		for j := i - 1; j >= 0; j-- {
			if nev[j].F == history.FAcquire && nev[j].Type == history.Invoke {
				x.invoke = nev[j].Time
				break
			}
		}
		seen := map[string]int{}
		for _, e := range nev[i:] {
			if e.Time > max(h.End, h.Start) {
				break
			}
			if e.Type != history.OK && e.Type != history.Invoke {
				continue
			}
			k := e.F + "/" + string(e.Type)
			seen[k]++
			x.steps = append(x.steps, step{f: e.F, typ: e.Type, at: e.Time, nth: seen[k]})
		}
		out = append(out, x)
	}
	return out
}

// Outcome is what a guided search found.
type Outcome struct {
	// Runs counts the simulated runs, the finding one included; NoFault
	// those in which no fault fired.
	Runs, NoFault int
	// Found reports whether a run showed the hunt's violation; Test is that run.
	Found bool
	Test  scenario.Test
	// Corpus are the tests kept for new coverage, in the order they were found.
	Corpus []Entry
	// Features is the number of features covered.
	Features int
	// Wall is the machine time the search took.
	Wall time.Duration
}

// Search runs a guided search: a seed corpus of swarm-random runs, then
// runs that mutate a corpus entry (chosen with a weight that grows with the
// new coverage it brought) or, now and then, fresh random draws; every run
// that reaches new coverage joins the corpus. It stops at the first run that
// fails a check with a violation of the hunt's kind. Every run is a full
// simulated run of the hunt's length. progress, when set, is called after
// every run.
func Search(cfg Config, progress func()) (Outcome, error) {
	began := time.Now()
	cfg = cfg.withDefaults()
	tg := HuntTarget(cfg.Hunt)
	if cfg.Target != nil {
		tg = *cfg.Target
	}
	if tg.Test == nil || tg.Stop == nil {
		return Outcome{}, fmt.Errorf("guided %s: the target has no base test or no stop predicate", tg.Name)
	}
	kinds, err := familyKinds(tg.Family)
	if err != nil {
		return Outcome{}, fmt.Errorf("guided %s: %w", tg.Name, err)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	base, err := tg.Test(0)
	if err != nil {
		return Outcome{}, err
	}
	targets, err := targetsOf(base)
	if err != nil {
		return Outcome{}, err
	}
	m := mutator{rng: rng, targets: targets, time: base.WithDefaults().Time, directed: Directed[tg.Kind], timeout: timeoutOf(base.WithDefaults()),
		kinds: kinds}
	if len(kinds) == 1 {
		m.attacks = append(slices.Clone(familyAttacks[kinds[0]]), "random")
		if tg.Kind == "" {
			m.directed = familyAttacks[kinds[0]]
		}
	}
	hits := map[string]int{} // feature -> runs that covered it
	var out Outcome
	refused := 0
	fresh := uint64(0) // fresh draws so far
	for out.Runs < cfg.MaxRuns && refused < 10*cfg.MaxRuns {
		var cand scenario.Test
		// Fresh draws: every run of the start, then a share that falls as
		// the corpus grows (Fresh/runs), to one in FreshEvery.
		if out.Runs < cfg.Fresh || len(out.Corpus) == 0 || rng.Float64() < max(1/float64(cfg.FreshEvery), float64(cfg.Fresh)/float64(out.Runs+1)) {
			if cand, err = tg.Test(cfg.Start + fresh); err != nil {
				return out, err
			}
			fresh++
		} else {
			parent := out.Corpus[pickByRarity(rng, out.Corpus, hits)]
			cand = m.mutate(parent, out.Corpus, hits, 1+rng.IntN(3))
		}
		r, err := harness.Run(cand)
		if err != nil {
			// A mutation the harness refuses (a trigger on a client the
			// system has not, say) is not a run.
			if cand.Schedule != nil {
				refused++
				continue
			}
			return out, fmt.Errorf("guided %s: %w", tg.Name, err)
		}
		out.Runs++
		if judge.FaultsOf(r).NoneFired {
			out.NoFault++
		}
		if progress != nil {
			progress()
		}
		if cfg.OnRun != nil {
			cfg.OnRun(explicit(cand, r), r)
		}
		if tg.Stop(r) {
			out.Found, out.Test = true, explicit(cand, r)
			break
		}
		cov := Coverage(r)
		var novel []string
		for _, f := range cov {
			if hits[f] == 0 {
				novel = append(novel, f)
			}
			hits[f]++
		}
		if len(novel) > 0 {
			out.Corpus = append(out.Corpus, Entry{Test: explicit(cand, r), New: novel, Cov: cov, holds: holdsOf(r.Events)})
		}
	}
	out.Features = len(hits)
	out.Wall = time.Since(began)
	return out, nil
}

// explicit is the test with the schedule that ran made explicit.
func explicit(t scenario.Test, r scenario.Result) scenario.Test {
	t.Schedule = &nemesis.Schedule{Faults: slices.Clone(r.Schedule.Faults)}
	return t
}

// targetsOf names the nodes a mutation may aim at: the test's clients, the
// system's servers and roles, and the storage.
func targetsOf(t scenario.Test) (nemesis.Targets, error) {
	p, err := harness.Prepare(t)
	if err != nil {
		return nemesis.Targets{}, err
	}
	defer p.World.Close()
	tg := nemesis.Targets{Clients: p.Test.ClientNames(), Storage: "storage", Roles: p.Deployment.Roles}
	for _, s := range p.Deployment.Servers {
		tg.Servers = append(tg.Servers, s.Name())
	}
	return tg, nil
}

// timeoutOf is a test's time scale (mutator.timeout): the sum of its
// system's duration options, defaults included, and of its workload's
// duration options, that are 500 ms or more and at most half the run.
func timeoutOf(t scenario.Test) time.Duration {
	sum, _ := TimeScale(t)
	return sum
}

// TimeScale is the time scale a search draws durations around when a grant
// has no lease (see Search): the sum of the test's system's duration options,
// defaults included, and of its workload's duration options given, that are
// 500 ms or more and at most half the run; and that sum in words
// ("session-timeout 10s + election-timeout 1s"), "" when there is none.
func TimeScale(t scenario.Test) (time.Duration, string) {
	var sum time.Duration
	var parts []string
	add := func(name, v string) {
		if d, err := time.ParseDuration(v); err == nil && d >= 500*time.Millisecond && d <= t.Time/2 {
			sum += d
			parts = append(parts, name+" "+d.String())
		}
	}
	if sys, err := system.Find(t.System); err == nil && sys.Options != nil {
		if settings, err := sys.Options.Effective(t.SystemOptions); err == nil {
			for _, s := range settings {
				add(s.Name, s.Value)
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(t.WorkloadOptions)) {
		add(k, t.WorkloadOptions[k])
	}
	return sum, strings.Join(parts, " + ")
}

// pickByRarity draws a corpus entry with a probability proportional to its
// energy: the sum, over the features its run covered, of 1/(runs that covered
// the feature). An entry that reached what few runs reach is mutated more
// often than one whose features every run shows (a rarity power schedule, as
// in AFL's successors), so the search spends its runs near the edge of what
// it has seen.
func pickByRarity(r *rand.Rand, corpus []Entry, hits map[string]int) int {
	weights := make([]float64, len(corpus))
	for i, e := range corpus {
		for _, f := range e.Cov {
			weights[i] += 1 / float64(max(hits[f], 1))
		}
	}
	return sim.Weighted(r, weights)
}

// mutator changes schedules: it adds, drops, moves, retargets, lengthens
// or shortens a fault, places a fault right after a client's protocol step
// (a trigger), or changes the seed of the rest of the world.
type mutator struct {
	rng     *rand.Rand
	targets nemesis.Targets
	time    time.Duration
	// directed are the attacks that can cause the hunt's kind of violation
	// (Directed); nil: none known.
	directed []string
	// timeout is the system's time scale: the sum of its duration options
	// (defaults included) of 500 ms or more, each at most half the run
	// (session timeout, lock-delay, failover timing); 0: none.
	timeout time.Duration
	// kinds are the fault kinds of the target's family (nil: every kind):
	// the only kinds the mutator adds or places.
	kinds []nemesis.Kind
	// attacks are the placements drawn from: a family's (nil: every attack).
	attacks []string
}

// allows reports whether the target's family has faults of kind k.
func (m mutator) allows(k nemesis.Kind) bool { return m.kinds == nil || slices.Contains(m.kinds, k) }

// mutations, by name, in the order mutate draws them from; a placement is
// drawn three times as often as any other.
var mutations = []string{"add", "drop", "move", "retarget", "scale", "trigger", "reseed", "splice", "place", "place", "place"}

// mutate applies n mutations to parent's schedule; splice takes a fault of
// another corpus entry (drawn like a parent).
func (m mutator) mutate(parent Entry, corpus []Entry, hits map[string]int, n int) scenario.Test {
	t := parent.Test
	faults := slices.Clone(t.Schedule.Faults)
	// Half the mutations (three in four when the hunt's kind has directed
	// attacks) are one placement alone: the parent's run is then the same up
	// to the placed fault's anchor. Three in four of those also drop the parent's
	// faults that would start after the anchor, so that what the placed
	// fault sets off plays out undisturbed (the run is still the parent's up
	// to the anchor).
	single := m.rng.IntN(2) == 0 || (len(m.directed) > 0 && m.rng.IntN(2) == 0)
	if single {
		if fs, anchor, ok := m.place(parent.holds); ok {
			if m.rng.IntN(4) > 0 {
				faults = slices.DeleteFunc(faults, func(f nemesis.Fault) bool { return time.Duration(f.At) > anchor })
			}
			t.Schedule = &nemesis.Schedule{Faults: append(faults, fs...)}
			return t
		}
	}
	for range n {
		op := mutations[m.rng.IntN(len(mutations))]
		if len(faults) == 0 && op != "place" && op != "splice" {
			op = "add"
		}
		switch op {
		case "add":
			if f, ok := m.draw(); ok {
				faults = append(faults, f)
			}
		case "drop":
			if len(faults) == 0 {
				continue
			}
			i := m.rng.IntN(len(faults))
			faults = slices.Delete(faults, i, i+1)
		case "move":
			i := m.rng.IntN(len(faults))
			shift := time.Duration(m.rng.Int64N(int64(20*time.Second))) - 10*time.Second
			faults[i].At = nemesis.Duration(min(max(time.Duration(faults[i].At)+shift, 0), m.time-time.Second).Round(time.Millisecond))
		case "retarget":
			i := m.rng.IntN(len(faults))
			faults[i] = m.retarget(faults[i])
		case "scale":
			i := m.rng.IntN(len(faults))
			faults[i] = m.scale(faults[i])
		case "trigger":
			i := m.rng.IntN(len(faults))
			faults[i] = m.trigger(faults[i])
		case "reseed":
			t.Seed = m.rng.Uint64() >> 1
		case "splice":
			if other := corpus[pickByRarity(m.rng, corpus, hits)].Test.Schedule.Faults; len(other) > 0 {
				faults = append(faults, other[m.rng.IntN(len(other))])
			}
		case "place":
			if fs, _, ok := m.place(parent.holds); ok {
				faults = append(faults, fs...)
			}
		}
	}
	t.Schedule = &nemesis.Schedule{Faults: faults}
	return t
}

// draw is a random fault of a random kind at a random time.
func (m mutator) draw() (nemesis.Fault, bool) {
	kinds := nemesis.Kinds
	if m.kinds != nil {
		kinds = m.kinds
	}
	k := kinds[m.rng.IntN(len(kinds))]
	at := time.Duration(m.rng.Int64N(int64(m.time - time.Second))).Round(time.Millisecond)
	f, ok := nemesis.DrawFault(m.rng, nemesis.RandomConfig{}, m.targets, k, at)
	if ok && f.Duration > 0 {
		f.Duration = nemesis.Duration(min(time.Duration(f.Duration), m.time-at))
	}
	return f, ok
}

// retarget aims a fault with targets at another node of the same sort: a
// client or server for a pause or a clock, a server for a crash.
func (m mutator) retarget(f nemesis.Fault) nemesis.Fault {
	if len(f.Targets) != 1 {
		return f
	}
	pool := slices.Concat(m.targets.Clients, m.targets.Servers, m.targets.Roles)
	if f.Kind == nemesis.Crash {
		pool = slices.Concat(m.targets.Servers, m.targets.Roles)
	}
	if len(pool) == 0 {
		return f
	}
	f.Targets = []string{pool[m.rng.IntN(len(pool))]}
	return f
}

// scale lengthens or shortens a fault: its duration and amount times a
// factor in [1/8, 4).
func (m mutator) scale(f nemesis.Fault) nemesis.Fault {
	factor := []float64{0.125, 0.25, 0.5, 2, 3, 4}[m.rng.IntN(6)]
	if f.Duration > 0 {
		d := time.Duration(float64(f.Duration) * factor).Round(time.Millisecond)
		f.Duration = nemesis.Duration(min(max(d, time.Millisecond), m.time))
	}
	if f.Amount != 0 {
		a := time.Duration(float64(f.Amount) * factor).Round(time.Millisecond)
		if a == 0 {
			a = time.Millisecond
		}
		f.Amount = nemesis.Duration(a)
	}
	return f
}

// trigger places a fault right after a step of a client's protocol: the
// Nth ok (or invocation) of its acquire, read, write or release. A fault
// on a client mostly follows that client's own steps.
func (m mutator) trigger(f nemesis.Fault) nemesis.Fault {
	cs := m.targets.Clients
	if len(cs) == 0 {
		return f
	}
	node := cs[m.rng.IntN(len(cs))]
	if len(f.Targets) == 1 && slices.Contains(cs, f.Targets[0]) && m.rng.IntN(3) > 0 {
		node = f.Targets[0]
	}
	fns := []string{history.FAcquire, history.FRead, history.FWrite, history.FRelease}
	tr := &nemesis.Trigger{Node: node, F: fns[m.rng.IntN(len(fns))], Nth: 1 + m.rng.IntN(3)}
	if m.rng.IntN(4) == 0 {
		tr.Type = string(history.Invoke)
		tr.Delay = nemesis.Duration(time.Duration(1+m.rng.IntN(10)) * 100 * time.Microsecond)
	}
	f.After = tr
	f.At = nemesis.Duration(time.Duration(m.rng.Int64N(int64(m.time / 2))).Round(time.Millisecond))
	return f
}

// storageWrite is the message type of a write to the storage node, which
// every system's tests share.
const storageWrite = "storage.WriteReq"

// attacks are the targeted placements, in the lock's own terms: what to do
// to whom while a client holds the lock.
var attacks = []string{
	"pause-holder",         // a long pause (GC, stop-the-world) of the holder
	"isolate-holder",       // the holder cut off from the lock's servers (or every node)
	"delay-holder-storage", // the holder's messages to the storage delayed
	"clock-holder",         // the holder's own clock jumped or drifting
	"crash-granter",        // a server that granted the hold crashes, restarts empty
	"clock-granter",        // a granter's clock jumps forward or runs fast
	"isolate-granter",      // a granter cut off (a primary: failover)
	"pause-granter",        // a granter paused
	"clock-server",         // another server's clock set ahead (a future leader)
	"random",               // a random fault
}

// Directed are, for each kind of violation (scenario.ViolationKinds), the
// attacks whose fault, in the phase the attack places it, is what the kind's
// rule names as the cause: a gc-pause is a holder paused across its lease
// deadline, a restart-regrant a granter that restarted empty and granted
// again, and so on. Three placements in four of a search for a kind are drawn
// from its attacks (directed greybox fuzzing: the target steers the search),
// the others from all of them; an attack listed several times is drawn
// more often (the cut-off of a failover, which drops the replication in flight;
// the pause of a session's holder, which also stops its client from
// noticing the expiry). A new system's hunts use them through the kind they
// declare.
var Directed = map[string][]string{
	scenario.KindGCPause:          {"pause-holder"},
	scenario.KindClockJump:        {"clock-granter"},
	scenario.KindFailover:         {"isolate-granter", "isolate-granter", "isolate-granter", "pause-granter"},
	scenario.KindRestartRegrant:   {"crash-granter"},
	scenario.KindNonOwnerRelease:  {"pause-holder", "isolate-holder"},
	scenario.KindLeaderClockAhead: {"clock-server", "clock-granter"},
	scenario.KindHolderClock:      {"clock-holder"},
	scenario.KindSessionExpiry:    {"pause-holder", "pause-holder", "isolate-holder"},
	scenario.KindDelayedWrite:     {"delay-holder-storage"},
}

// logUniform is a duration between lo and hi, uniform on a log scale, to
// the millisecond.
func (m mutator) logUniform(lo, hi time.Duration) time.Duration {
	if hi <= lo {
		return lo
	}
	x := math.Exp(math.Log(float64(lo)) + m.rng.Float64()*(math.Log(float64(hi))-math.Log(float64(lo))))
	return max(time.Duration(x).Round(time.Millisecond), time.Millisecond)
}

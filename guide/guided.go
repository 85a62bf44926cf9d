package guide

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
)

// Config is one guided search.
type Config struct {
	// Hunt is the target: its variant's system and workload, and the kind of
	// violation that ends the search.
	Hunt harness.Hunt
	// Seed drives every choice of the search (the fresh draws, the parents,
	// the mutations).
	Seed uint64
	// MaxRuns bounds the runs. Default 1000.
	MaxRuns int
	// Fresh is the number of plain swarm-random runs the search starts with
	// (the seed corpus). Default 10.
	Fresh int
	// FreshEvery: after the start, one run in FreshEvery is a fresh random
	// draw rather than a mutation. Default 8.
	FreshEvery int
}

func (c Config) withDefaults() Config {
	if c.MaxRuns <= 0 {
		c.MaxRuns = 1000
	}
	if c.Fresh <= 0 {
		c.Fresh = 10
	}
	if c.FreshEvery <= 0 {
		c.FreshEvery = 8
	}
	return c
}

// Entry is a test in the corpus and what it covered first.
type Entry struct {
	Test harness.Test
	// New are the features no earlier run had reached.
	New []string
}

// Outcome is what a guided search found.
type Outcome struct {
	// Runs counts the simulated runs, the finding one included.
	Runs int
	// Found reports whether a run showed the hunt's violation; Test is that run.
	Found bool
	Test  harness.Test
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
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x9e3779b97f4a7c15))
	base, err := cfg.Hunt.Test(0)
	if err != nil {
		return Outcome{}, err
	}
	targets, err := targetsOf(base)
	if err != nil {
		return Outcome{}, err
	}
	m := mutator{rng: rng, targets: targets, time: base.WithDefaults().Time}
	covered := map[string]bool{}
	var out Outcome
	var weights []int
	refused := 0
	for out.Runs < cfg.MaxRuns && refused < 10*cfg.MaxRuns {
		var cand harness.Test
		if out.Runs < cfg.Fresh || len(out.Corpus) == 0 || rng.IntN(cfg.FreshEvery) == 0 {
			if cand, err = cfg.Hunt.Test(rng.Uint64() >> 1); err != nil {
				return out, err
			}
		} else {
			parent := out.Corpus[pickWeighted(rng, weights)].Test
			cand = m.mutate(parent, 1+rng.IntN(3))
		}
		r, err := harness.Run(cand)
		if err != nil {
			// A mutation the harness refuses (a trigger on a client the
			// system has not, say) is not a run.
			if cand.Schedule != nil {
				refused++
				continue
			}
			return out, fmt.Errorf("guided %s: %w", cfg.Hunt.Name, err)
		}
		out.Runs++
		if progress != nil {
			progress()
		}
		if r.Overall == models.Invalid && slices.Contains(harness.ViolationKinds(r.Events), cfg.Hunt.Kind) {
			out.Found, out.Test = true, explicit(cand, r)
			break
		}
		var fresh []string
		for _, f := range Coverage(r) {
			if !covered[f] {
				covered[f] = true
				fresh = append(fresh, f)
			}
		}
		if len(fresh) > 0 {
			out.Corpus = append(out.Corpus, Entry{Test: explicit(cand, r), New: fresh})
			weights = append(weights, 1+len(fresh))
		}
	}
	out.Features = len(covered)
	out.Wall = time.Since(began)
	return out, nil
}

// explicit is the test with the schedule that ran made explicit.
func explicit(t harness.Test, r harness.Result) harness.Test {
	t.Schedule = &nemesis.Schedule{Faults: slices.Clone(r.Schedule.Faults)}
	return t
}

// targetsOf names the nodes a mutation may aim at: the test's clients, the
// system's servers and roles, and the storage.
func targetsOf(t harness.Test) (nemesis.Targets, error) {
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

// pickWeighted draws an index with probability proportional to its weight.
func pickWeighted(r *rand.Rand, weights []int) int {
	total := 0
	for _, w := range weights {
		total += w
	}
	x := r.IntN(total)
	for i, w := range weights {
		if x < w {
			return i
		}
		x -= w
	}
	return len(weights) - 1
}

// mutator changes schedules: it adds, drops, moves, retargets, lengthens
// or shortens a fault, places a fault right after a client's protocol step
// (a trigger), or changes the seed of the rest of the world.
type mutator struct {
	rng     *rand.Rand
	targets nemesis.Targets
	time    time.Duration
}

// mutations, by name, in the order mutate draws them from.
var mutations = []string{"add", "drop", "move", "retarget", "scale", "trigger", "reseed"}

func (m mutator) mutate(t harness.Test, n int) harness.Test {
	faults := slices.Clone(t.Schedule.Faults)
	for range n {
		op := mutations[m.rng.IntN(len(mutations))]
		if len(faults) == 0 {
			op = "add"
		}
		switch op {
		case "add":
			if f, ok := m.draw(); ok {
				faults = append(faults, f)
			}
		case "drop":
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
		}
	}
	t.Schedule = &nemesis.Schedule{Faults: faults}
	return t
}

// draw is a random fault of a random kind at a random time.
func (m mutator) draw() (nemesis.Fault, bool) {
	k := nemesis.Kinds[m.rng.IntN(len(nemesis.Kinds))]
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

package models

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// histGen builds random but well-formed histories: clients take random steps
// in a random order, against a real counter and a real lock that can be
// switched off.
type histGen struct {
	r      *rand.Rand
	events []history.Event
	next   int // next process number
}

func (g *histGen) add(e history.Event) {
	e.Index = len(g.events)
	e.Time = int64(len(g.events)) * 1000
	g.events = append(g.events, e)
}

// counterHistory: clients run read -> write sections on one counter, with or
// without mutual exclusion; writes are applied, rejected or of unknown
// outcome (applied now, later, or never); a few reads are corrupted.
func counterHistory(r *rand.Rand, clients, steps int) []history.Event {
	g := &histGen{r: r}
	exclusive := r.IntN(2) == 0
	type client struct {
		node           string
		proc, state    int
		read, wrote    int64
		holdsExclusive bool
	}
	cs := make([]*client, clients)
	for i := range cs {
		cs[i] = &client{node: fmt.Sprintf("c%d", i+1), proc: g.next}
		g.next++
	}
	var counter int64
	var late []int64
	busy := false
	for range steps {
		if len(late) > 0 && r.IntN(6) == 0 {
			counter, late = late[0], late[1:]
		}
		c := cs[r.IntN(len(cs))]
		ev := history.Event{Process: c.proc, Node: c.node, Key: "k"}
		switch c.state {
		case 0: // idle -> invoke read
			if exclusive && busy {
				continue
			}
			busy, c.holdsExclusive = true, true
			ev.Type, ev.F = history.Invoke, history.FRead
			c.state = 1
		case 1: // complete the read
			ev.Type, ev.F, c.read = history.OK, history.FRead, counter
			if r.IntN(25) == 0 {
				c.read += int64(r.IntN(3)) - 1
			}
			ev.Value = history.Ptr(c.read)
			c.state = 2
		case 2: // write, or end a read-only section
			if r.IntN(5) == 0 {
				c.state, busy = 0, false
				continue
			}
			c.wrote = c.read + 1
			ev.Type, ev.F, ev.Value = history.Invoke, history.FWrite, history.Ptr(c.wrote)
			c.state = 3
		case 3: // complete the write
			ev.F, ev.Value = history.FWrite, history.Ptr(c.wrote)
			switch x := r.IntN(10); {
			case x < 6:
				ev.Type, counter = history.OK, c.wrote
			case x < 7:
				ev.Type = history.Fail
			default:
				ev.Type = history.Info
				switch r.IntN(3) {
				case 0:
					counter = c.wrote
				case 1:
					late = append(late, c.wrote)
				}
			}
			g.add(ev)
			if ev.Type == history.Info {
				c.proc = g.next
				g.next++
			}
			c.state, busy = 0, false
			continue
		}
		g.add(ev)
	}
	return g.events
}

// withBatches runs f with the given batch target.
func withBatches(target int, f func()) {
	old := batchTarget
	batchTarget = target
	defer func() { batchTarget = old }()
	f()
}

// TestBatchedSearchAgreesWithOneSearch: cutting a history at quiescent points
// and carrying the state across the cuts gives the verdict of one Porcupine
// search over the whole history, on thousands of random histories.
func TestBatchedSearchAgreesWithOneSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	counts := map[Result]int{}
	for i := range 3000 {
		events := counterHistory(r, 1+r.IntN(4), 10+r.IntN(60))
		require.NoError(t, history.Validate(events))
		secs, _ := extractSections(history.PairRecorded(events).Ops(), newInterner())
		var ops []linOp
		for j := range secs {
			ops = append(ops, secs[j].linOps()...)
		}
		initial := regState{vals: values{number(0)}}
		if i%3 == 0 {
			initial = regState{any: true}
		}
		var cut, whole keyOutcome
		withBatches(1, func() { cut = search(sectionSpec("counter", ops), initial, ops, Budget{Steps: -1}) })
		withBatches(1<<30, func() { whole = search(sectionSpec("counter", ops), initial, ops, Budget{Steps: -1}) })
		require.Equal(t, whole.result, cut.result, "history %d:\n%s", i, dump(events))
		counts[whole.result]++
		if cut.batches > 2 {
			counts["cut"]++
		}
		if whole.result == Valid {
			assert.Greater(t, cut.batches, 0)
		}
	}
	t.Logf("verdicts: %v", counts)
	assert.Greater(t, counts[Valid], 300, "the generator makes valid histories")
	assert.Greater(t, counts[Invalid], 300, "the generator makes invalid histories")
	assert.Greater(t, counts["cut"], 1000, "the histories are cut into batches")
}

// lockHistory: clients acquire and release one key through a lock that
// honours mutual exclusion, or not; leases may run out; releases may have an
// unknown outcome; owners are unique per acquisition, or reused (reentrant).
func lockHistory(r *rand.Rand, clients, steps int, leases bool) []history.Event {
	g := &histGen{r: r}
	broken := r.IntN(3) == 0
	reuse := r.IntN(2) == 0
	type client struct {
		node        string
		proc, state int
		owner       string
		seq         int
	}
	cs := make([]*client, clients)
	for i := range cs {
		cs[i] = &client{node: fmt.Sprintf("c%d", i+1), proc: g.next}
		g.next++
	}
	holder, count := "", 0
	var deadline int64
	for range steps {
		c := cs[r.IntN(len(cs))]
		now := int64(len(g.events)) * 1000
		ev := history.Event{Process: c.proc, Node: c.node, Key: "k"}
		switch c.state {
		case 0:
			ev.Type, ev.F, c.state = history.Invoke, history.FAcquire, 1
		case 1:
			c.seq++
			c.owner = fmt.Sprintf("%s-%d", c.node, c.seq)
			if reuse {
				c.owner = c.node
			}
			expired := leases && holder != "" && now >= deadline
			free := holder == "" || holder == c.owner || expired || broken
			ev.F = history.FAcquire
			if !free {
				ev.Type, c.state = history.Fail, 0
				break
			}
			if holder == c.owner && !expired {
				count++
			} else {
				holder, count = c.owner, 1
			}
			ev.Type, ev.Owner, c.state = history.OK, c.owner, 2
			if leases {
				deadline = now + int64(1+r.IntN(8))*1000
				ev.Deadline = history.Ptr(deadline)
			}
		case 2:
			ev.Type, ev.F, ev.Owner, c.state = history.Invoke, history.FRelease, c.owner, 3
		case 3:
			ev.F, ev.Owner = history.FRelease, c.owner
			mine := holder == c.owner
			switch x := r.IntN(10); {
			case x < 7 && mine:
				ev.Type = history.OK
				if count--; count == 0 {
					holder = ""
				}
			case x < 8 || !mine:
				ev.Type = history.Fail
			default:
				ev.Type = history.Info
				if mine && r.IntN(2) == 0 {
					if count--; count == 0 {
						holder = ""
					}
				}
			}
			c.state = 0
			g.add(ev)
			if ev.Type == history.Info {
				c.proc = g.next
				g.next++
			}
			continue
		}
		g.add(ev)
	}
	return g.events
}

var lockRuns = 3000

func TestBatchedLockSearchAgreesWithOneSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	counts := map[string]int{}
	for i := range lockRuns {
		leases := i%2 == 0
		events := lockHistory(r, 1+r.IntN(4), 10+r.IntN(60), leases)
		require.NoError(t, history.Validate(events))
		c := LockService{Leases: leases}
		byKey := map[string][]op{}
		for _, o := range history.PairRecorded(events).Ops() {
			if c.relevant(o) {
				byKey[o.Invoke.Key] = append(byKey[o.Invoke.Key], o)
			}
		}
		ops := c.lockOps(byKey["k"])
		var cut, whole keyOutcome
		withBatches(1, func() { cut = search(c.spec(ops), []any{lockState{}}, ops, Budget{Steps: -1}) })
		withBatches(1<<30, func() { whole = search(c.spec(ops), []any{lockState{}}, ops, Budget{Steps: -1}) })
		require.Equal(t, whole.result, cut.result, "history %d (%s):\n%s", i, c.Name(), dump(events))
		counts[c.Name()+" "+string(whole.result)]++
		if cut.batches > 2 {
			counts["cut"]++
		}
	}
	t.Logf("verdicts: %v", counts)
	for _, k := range []string{"mutex valid", "mutex invalid", "lease valid", "lease invalid", "cut"} {
		assert.Greater(t, counts[k], 100, k)
	}
}

// TestFencingSweepAgreesWithPorcupine: the sweep that finds the two
// operations of a counterexample decides the same as the Porcupine model.
func TestFencingSweepAgreesWithPorcupine(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	counts := map[bool]int{}
	for i := range 3000 {
		strict := i%2 == 0
		var tops []tokenOp
		n := 1 + r.IntN(8)
		for j := range n {
			call := int(r.IntN(40))
			ret := call + 1 + r.IntN(10)
			tok := uint64(j*2 + r.IntN(6))
			inv := history.Event{Index: call*2 + j%2, Node: fmt.Sprintf("c%d", j), Owner: fmt.Sprintf("o%d", j)}
			comp := history.Event{Index: ret*2 + j%2, Owner: inv.Owner}
			tops = append(tops, tokenOp{token: tok, strict: strict, o: op{Invoke: &inv, Completion: &comp}})
		}
		// Indexes must be distinct: spread them.
		for j := range tops {
			tops[j].o.Invoke.Index = tops[j].o.Invoke.Index*100 + j
			tops[j].o.Completion.Index = tops[j].o.Completion.Index*100 + j
		}
		lops := make([]linOp, len(tops))
		for j := range tops {
			t := &tops[j]
			lops[j] = linOp{call: int64(t.o.Invoke.Index), ret: int64(t.o.Completion.Index), forcing: true, input: t}
		}
		out := search(tokenSpec("granted"), tokenState{}, lops, Budget{Steps: -1})
		a, _ := tokenInversion(tops)
		require.Equal(t, out.result == Invalid, a != nil, "case %d: %+v", i, tops)
		counts[a != nil]++
	}
	assert.Greater(t, counts[true], 300)
	assert.Greater(t, counts[false], 300)
}

func TestStepBudgetIsDeterministicAndSaysUnknown(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	events := counterHistory(r, 4, 400)
	c := CriticalSections{Initial: history.Ptr(int64(0)), Budget: Budget{Steps: 3}}
	v := Run(c, events)
	assert.Equal(t, Unknown, v.Result)
	assert.Equal(t, "steps", v.Exhausted)
	assert.Contains(t, v.Reason, "ran out of its budget of 3 steps")
	assert.Equal(t, v, Run(c, events), "the same budget gives the same verdict")
}

func TestTimeBudgetSaysItDependsOnTheMachine(t *testing.T) {
	events := synth{ops: 2000, seed: 9}.events()
	v := Run(CriticalSections{Initial: history.Ptr(int64(0)), Budget: Budget{Time: time.Nanosecond}}, events)
	assert.Equal(t, Unknown, v.Result)
	assert.Equal(t, "time", v.Exhausted)
	assert.Contains(t, v.Reason, "depends on the machine")
	assert.Equal(t, Valid, Run(CriticalSections{Initial: history.Ptr(int64(0))}, events).Result)
}

func TestAPanickingModelIsUnknown(t *testing.T) {
	spec := searchSpec{model: registerModel("counter", true)}
	spec.model.Step = func(state, input, output any) (bool, any) { panic("model bug") }
	out := search(spec, regState{any: true}, []linOp{{call: 0, ret: 1, forcing: true, input: &secStep{}}}, Budget{})
	assert.Equal(t, Unknown, out.result)
	assert.Contains(t, out.reason, "model bug")
}

func dump(events []history.Event) string {
	s := ""
	for _, e := range events {
		s += e.String() + "\n"
	}
	return s
}

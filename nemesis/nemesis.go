package nemesis

import (
	"fmt"
	"slices"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/sim"
)

// Resolver maps a target name in a schedule to nodes, at the moment the fault
// starts (so a name such as "primary" can follow the system's state). It
// returns an error naming what is known for an unknown name.
type Resolver func(name string) ([]*sim.Node, error)

// Env is what a schedule is checked against when it is installed: the names
// the system knows.
type Env struct {
	// Resolve maps target names to nodes.
	Resolve Resolver
	// Clients are the nodes whose history events a trigger can follow ("c1",
	// ...); nil: any name Resolve knows.
	Clients []string
	// Messages are the names of the message types the system's nodes send
	// ("storage.WriteReq", the %T of a message body): a delay's match must
	// name one. nil: match is not checked.
	Messages []string
}

// Nemesis runs one schedule in one world and records its faults in the log.
type Nemesis struct {
	w       *sim.World
	log     *history.Log
	resolve Resolver
	faults  []Fault
	tallies []Tally               // what happened to each fault, by index
	blocked map[[2]sim.NodeID]int // reference counts of cut links
	paused  map[sim.NodeID]int    // reference counts of overlapping pauses
	crashed map[sim.NodeID]int    // reference counts of overlapping crashes
	drifts  map[sim.NodeID][]*driftFault
}

// driftFault is an active clock-drift fault on a node; the most recent active
// one decides the node's drift, and base is the drift before any of them.
type driftFault struct {
	drift float64
	base  float64
}

// Install checks every name in s against env (an unknown target, a trigger on
// a node that is not a client, a match that names no message type of the
// system are *Errors naming the fault and field) and schedules the faults.
func Install(w *sim.World, log *history.Log, s Schedule, env Env) (*Nemesis, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	if err := s.check(env); err != nil {
		return nil, err
	}
	n := &Nemesis{w: w, log: log, resolve: env.Resolve, faults: s.Faults, tallies: make([]Tally, len(s.Faults)),
		blocked: map[[2]sim.NodeID]int{}, paused: map[sim.NodeID]int{}, crashed: map[sim.NodeID]int{},
		drifts: map[sim.NodeID][]*driftFault{}}
	for i, f := range s.Faults {
		if f.After != nil {
			n.arm(i)
		} else {
			w.At(time.Duration(f.At), func() { n.start(i) })
		}
		if f.Until != nil {
			n.log.Observe(f.EndObserver(&n.tallies[i], nil, n.w.After))
		}
	}
	return n, nil
}

// check checks the names of s against env.
func (s Schedule) check(env Env) error {
	return s.CheckNames(func(name string) error {
		_, err := env.Resolve(name)
		return err
	}, env.Clients, env.Messages)
}

// arm starts fault i right after its trigger event is recorded: inside the
// recording client's own step, so the fault takes hold before the client does
// anything else (a pause right after acquire returns stops it before its next
// request).
func (n *Nemesis) arm(i int) {
	n.log.Observe(n.faults[i].Observer(&n.tallies[i], nil, n.w.Now, n.w.After, func() { n.start(i) }))
}

func (n *Nemesis) nodes(names []string) []*sim.Node {
	out, err := Resolve(names, n.resolve)
	if err != nil {
		panic("nemesis: " + err.Error())
	}
	return out
}

func nodeNames(ns []*sim.Node) []string {
	out := make([]string, len(ns))
	for i, x := range ns {
		out[i] = x.Name()
	}
	return out
}

func (n *Nemesis) record(t history.Type, k Kind, targets []string, detail string) {
	n.log.Append(history.Event{Time: int64(n.w.Now()), Process: history.NemesisProcess, Type: t, F: string(k),
		Targets: targets, Detail: detail})
}

// window records the window of fault kind k (see Window).
func (n *Nemesis) window(k Kind, targets []string, detail string, d time.Duration, open bool, undo func()) func() {
	return Window(func(t history.Type) { n.record(t, k, targets, detail) }, n.w.After, d, open, undo)
}

func (n *Nemesis) start(i int) {
	tl := &n.tallies[i]
	tl.Started, tl.StartAt, tl.FromIndex = true, n.w.Now(), n.log.Len()
	tl.Missed, tl.Delay, tl.Stop = Start[*sim.Node](simFaults{n}, n.faults[i])
}

// simFaults performs faults in the simulator (see Performer). Overlapping
// pauses, crashes, cuts and drifts of a node are counted: the last to end
// undoes them.
type simFaults struct{ n *Nemesis }

func (s simFaults) Now() time.Duration               { return s.n.w.Now() }
func (s simFaults) Nodes(names []string) []*sim.Node { return s.n.nodes(names) }
func (s simFaults) All() []*sim.Node                 { return s.n.w.Nodes() }
func (s simFaults) Name(x *sim.Node) string          { return x.Name() }

func (s simFaults) Window(k Kind, targets []string, detail string, d time.Duration, open bool, undo func()) func() {
	return s.n.window(k, targets, detail, d, open, undo)
}

func (s simFaults) Pause(ns []*sim.Node) func() {
	hold(s.n.paused, ns, (*sim.Node).Pause)
	return func() { release(s.n.paused, ns, (*sim.Node).Resume) }
}

func (s simFaults) Crash(ns []*sim.Node) func() {
	hold(s.n.crashed, ns, (*sim.Node).Crash)
	return func() { release(s.n.crashed, ns, (*sim.Node).Restart) }
}

func (s simFaults) JumpClock(ns []*sim.Node, amount time.Duration) func() {
	for _, x := range ns {
		x.JumpClock(amount)
	}
	return func() {
		for _, x := range ns {
			x.JumpClock(-amount)
		}
	}
}

func (s simFaults) SetDrift(ns []*sim.Node, drift float64) func() {
	n := s.n
	df := make([]*driftFault, len(ns))
	for i, x := range ns {
		stack := n.drifts[x.ID()]
		base := x.Drift()
		if len(stack) > 0 {
			base = stack[0].base
		}
		df[i] = &driftFault{drift: drift, base: base}
		n.drifts[x.ID()] = append(stack, df[i])
		x.SetDrift(drift)
	}
	return func() {
		for i, x := range ns {
			stack := slices.DeleteFunc(n.drifts[x.ID()], func(a *driftFault) bool { return a == df[i] })
			n.drifts[x.ID()] = stack
			if len(stack) == 0 {
				delete(n.drifts, x.ID())
				x.SetDrift(df[i].base)
			} else {
				x.SetDrift(stack[len(stack)-1].drift)
			}
		}
	}
}

func (s simFaults) Cut(links [][2]*sim.Node, lossy bool) func() {
	n := s.n
	net := n.w.Network()
	for _, l := range links {
		k := [2]sim.NodeID{l[0].ID(), l[1].ID()}
		n.blocked[k]++
		if lossy {
			net.BlockLossy(l[0], l[1])
		} else {
			net.Block(l[0], l[1])
		}
	}
	return func() {
		for _, l := range links {
			k := [2]sim.NodeID{l[0].ID(), l[1].ID()}
			n.blocked[k]--
			if n.blocked[k] == 0 {
				delete(n.blocked, k)
				net.Unblock(l[0], l[1])
			}
		}
	}
}

func (s simFaults) Delay(f Fault, from, to []*sim.Node) *DelayTally {
	var until time.Duration
	if f.Duration > 0 {
		until = s.n.w.Now() + time.Duration(f.Duration)
	}
	tl := &DelayTally{From: nodeNames(from), To: nodeNames(to), Until: until}
	// The network asks a rule's match only while the rule is live (before its
	// count and its end), so counting the matches counts the messages delayed.
	match := func(m sim.Message) bool {
		if f.Match != "" && fmt.Sprintf("%T", m.Body) != f.Match {
			return false
		}
		tl.Matched++
		return true
	}
	for _, a := range from {
		for _, b := range to {
			s.n.w.Network().AddRule(sim.Rule{From: a, To: b, Match: match, Delay: time.Duration(f.Amount), Count: f.Count, Until: until})
		}
	}
	return tl
}

// hold does fault to each of ns, counting in holds the faults of its kind
// that hold each node (pauses and crashes overlap).
func hold(holds map[sim.NodeID]int, ns []*sim.Node, fault func(*sim.Node)) {
	for _, x := range ns {
		holds[x.ID()]++
		fault(x)
	}
}

// release ends one hold of each of ns, undoing the fault of a node when no
// other fault of its kind still holds it.
func release(holds map[sim.NodeID]int, ns []*sim.Node, undo func(*sim.Node)) {
	for _, x := range ns {
		if holds[x.ID()]--; holds[x.ID()] == 0 {
			delete(holds, x.ID())
			undo(x)
		}
	}
}

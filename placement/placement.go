// Package placement enumerates the single faults of a fault family over a
// stated, bounded set of placements: every start anchored at a protocol step
// of a client (its acquire or its read, in each of its first sections),
// every end anchored at another client's step a few milliseconds either way
// or lasting just short of, just past and well past every timeout the design
// declares. A search that runs every placement and finds nothing can say
// exactly what it covered ("all 212 single pauses within this bound"),
// which a random draw cannot: the faults that corrupt data are narrow (a
// pause must end between the new holder's read and its write, a window of a
// few milliseconds at the end of one of many seconds), and a drawn duration
// hits them in well under 1% of runs.
//
// The package knows fault schedules and history functions only; it runs
// nothing.
package placement

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/nemesis"
)

// Timeout is a duration the design declares (an option such as "ttl 10s"),
// or a chain of two ("lease 12s + lock-delay 1m0s").
type Timeout struct {
	Name string
	D    time.Duration
}

// Topology is what faults can name: the clients, the lock service's nodes,
// the roles that follow its state ("primary") and the storage node.
type Topology struct {
	Clients, Servers, Roles []string
	Storage                 string
}

// Bound is how far the enumeration goes.
type Bound struct {
	// Sections is how many of each client's first critical sections anchor
	// a fault's start (K). Default 2.
	Sections int
	// Deltas are the offsets after an end anchor the fault ends at. Default
	// 0, 1 ms, 5 ms, 20 ms, 50 ms: a holder's read-to-write time is about
	// 5-100 ms in the designs modelled.
	Deltas []time.Duration
	// Timeouts are the design's timeouts and chains; each fault's length
	// (a duration, a clock jump, a delay) straddles each of them.
	Timeouts []Timeout
	// RunTime is the runs' simulated length (a clock drift's rate is chosen
	// so that it adds up past each timeout within it).
	RunTime time.Duration
}

// withDefaults fills the zero fields.
func (b Bound) withDefaults() Bound {
	if b.Sections <= 0 {
		b.Sections = 2
	}
	if b.Deltas == nil {
		b.Deltas = []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond}
	}
	return b
}

// Set is the enumeration of one family: its faults, in a fixed order, and
// the bound in words.
type Set struct {
	Family string
	Faults []nemesis.Fault
	// Words say what was enumerated ("pauses of one client from its acquire
	// or read in its first 2 sections, ended by ...").
	Words string
}

// Families are the fault families Enumerate knows: one kind each. The swarm
// family ("random") has no enumeration of its own: its single faults are
// the other families'.
var Families = []nemesis.Kind{nemesis.Pause, nemesis.Partition, nemesis.Crash, nemesis.ClockJump, nemesis.ClockDrift, nemesis.Delay}

// Enumerate lists every single fault of family within bound b on topology
// top. An unknown family, or "random", gives an empty set.
func Enumerate(family string, top Topology, b Bound) Set {
	b = b.withDefaults()
	e := enumerator{top: top, b: b, lengths: lengths(b.Timeouts)}
	s := Set{Family: family}
	switch nemesis.Kind(family) {
	case nemesis.Pause:
		s.Faults, s.Words = e.holds(nemesis.Pause, "pauses")
	case nemesis.Partition:
		s.Faults, s.Words = e.holds(nemesis.Partition, "cuts isolating one node")
	case nemesis.Crash:
		s.Faults, s.Words = e.crashes()
	case nemesis.ClockJump:
		s.Faults, s.Words = e.jumps()
	case nemesis.ClockDrift:
		s.Faults, s.Words = e.drifts()
	case nemesis.Delay:
		s.Faults, s.Words = e.delays()
	}
	s.Faults = dedupe(s.Faults)
	return s
}

// lengths are the fault lengths that straddle each timeout: just short of
// it, just past it, and well past it (1.5x), in increasing order without
// repeats.
func lengths(ts []Timeout) []time.Duration {
	var out []time.Duration
	for _, t := range ts {
		out = append(out, t.D-10*time.Millisecond, t.D+10*time.Millisecond, t.D*3/2)
	}
	slices.Sort(out)
	return slices.Compact(slices.DeleteFunc(out, func(d time.Duration) bool { return d <= 0 }))
}

type enumerator struct {
	top     Topology
	b       Bound
	lengths []time.Duration
}

// startSteps are the protocol steps a fault's start is anchored after: a
// client's grant and its read of the protected data.
var startSteps = []string{history.FAcquire, history.FRead}

// starts are the start anchors: each of steps of each client, in each of
// its first sections (Sections of them; 1 when first).
func (e enumerator) starts(steps []string, first bool) []*nemesis.Trigger {
	sections := e.b.Sections
	if first {
		sections = 1
	}
	var out []*nemesis.Trigger
	for _, c := range e.top.Clients {
		for n := 1; n <= sections; n++ {
			for _, f := range steps {
				out = append(out, &nemesis.Trigger{Node: c, F: f, Nth: n})
			}
		}
	}
	return out
}

// ends are the end anchors of a fault that hurts client c: another
// client's grant, its read (invoked, Deltas after it; and answered), and
// its write answered.
func (e enumerator) ends(c string) []*nemesis.Trigger {
	var out []*nemesis.Trigger
	for _, o := range e.top.Clients {
		if o == c {
			continue
		}
		out = append(out, &nemesis.Trigger{Node: o, F: history.FAcquire})
		for _, d := range e.b.Deltas {
			out = append(out, &nemesis.Trigger{Node: o, F: history.FRead, Type: string(history.Invoke), Delay: nemesis.Duration(d)})
		}
		out = append(out, &nemesis.Trigger{Node: o, F: history.FRead}, &nemesis.Trigger{Node: o, F: history.FWrite})
	}
	return out
}

// servers are the lock service's nodes and roles.
func (e enumerator) servers() []string { return slices.Concat(e.top.Servers, e.top.Roles) }

// holds enumerates a fault that holds a node (a pause, or a cut isolating
// it): a client from each start anchor of its own, ended by each end anchor
// or lasting each length; a server from each client's grant, lasting each
// length or until another client's grant.
func (e enumerator) holds(k nemesis.Kind, what string) ([]nemesis.Fault, string) {
	var out []nemesis.Fault
	for _, a := range e.starts(startSteps, false) {
		for _, u := range e.ends(a.Node) {
			out = append(out, nemesis.Fault{Kind: k, Targets: []string{a.Node}, After: a, Until: u})
		}
		for _, d := range e.lengths {
			out = append(out, nemesis.Fault{Kind: k, Targets: []string{a.Node}, After: a, Duration: nemesis.Duration(d)})
		}
	}
	for _, s := range e.servers() {
		for _, a := range e.starts([]string{history.FAcquire}, true) {
			for _, d := range e.lengths {
				out = append(out, nemesis.Fault{Kind: k, Targets: []string{s}, After: a, Duration: nemesis.Duration(d)})
			}
			for _, u := range e.grantsOfOthers(a.Node) {
				out = append(out, nemesis.Fault{Kind: k, Targets: []string{s}, After: a, Until: u})
			}
		}
	}
	words := fmt.Sprintf("%s of each client after its acquire or read in each of its first %d sections, ending %s, or %s; of each server and role after each client's first acquire, %s or until another client's acquire",
		what, e.b.Sections, e.endWords(), e.lengthWords(), e.lengthWords())
	if k == nemesis.Partition && len(e.top.Servers) > 1 {
		out = append(out, e.partialCuts()...)
		words += "; and a cut between one client and one server after the client's read in each of its first sections, " +
			e.lengthWords() + ", until another client's acquire or to the end of the run"
	}
	return out, words
}

// partialCuts enumerates a cut between one client and one server (the
// client still reaches the others: a bare majority, a stale member), from
// the client's read in each of its first sections, lasting each length,
// until another client's grant, or to the end of the run.
func (e enumerator) partialCuts() []nemesis.Fault {
	var out []nemesis.Fault
	for _, a := range e.starts([]string{history.FRead}, false) {
		for _, s := range e.top.Servers {
			cut := nemesis.Fault{Kind: nemesis.Partition, Groups: [][]string{{a.Node}, {s}}, After: a}
			for _, d := range e.lengths {
				f := cut
				f.Duration = nemesis.Duration(d)
				out = append(out, f)
			}
			for _, u := range e.grantsOfOthers(a.Node) {
				f := cut
				f.Until = u
				out = append(out, f)
			}
			out = append(out, cut) // never healed: the client is left with the others
		}
	}
	return out
}

// grantsOfOthers are the end anchors "another client's grant".
func (e enumerator) grantsOfOthers(c string) []*nemesis.Trigger {
	var out []*nemesis.Trigger
	for _, o := range e.top.Clients {
		if o != c {
			out = append(out, &nemesis.Trigger{Node: o, F: history.FAcquire})
		}
	}
	return out
}

// quickRestarts are the restarts of a crash that comes back before the
// crashed server's grant has reached its client, or just after: a server
// without persistence forgets the grant and its token counter at once.
var quickRestarts = []time.Duration{time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond}

// crashes enumerates a crash of each server and role from each client's
// grant, restarting after each length or at another client's grant, and
// one that never restarts.
func (e enumerator) crashes() ([]nemesis.Fault, string) {
	var out []nemesis.Fault
	for _, s := range e.servers() {
		for _, a := range e.starts([]string{history.FAcquire}, true) {
			for _, d := range quickRestarts {
				out = append(out, nemesis.Fault{Kind: nemesis.Crash, Targets: []string{s}, After: a, Duration: nemesis.Duration(d)})
			}
			for _, d := range e.lengths {
				out = append(out, nemesis.Fault{Kind: nemesis.Crash, Targets: []string{s}, After: a, Duration: nemesis.Duration(d)})
			}
			for _, u := range e.grantsOfOthers(a.Node) {
				out = append(out, nemesis.Fault{Kind: nemesis.Crash, Targets: []string{s}, After: a, Until: u})
			}
			out = append(out, nemesis.Fault{Kind: nemesis.Crash, Targets: []string{s}, After: a})
		}
	}
	words := fmt.Sprintf("crashes of each server and role after each client's first acquire, restarting after 1ms, 10ms or 100ms (while the grant is still on its way), %s, at another client's acquire, or never",
		strings.TrimPrefix(e.lengthWords(), "lasting "))
	return out, words
}

// jumps enumerates a clock jump of each node, forwards and backwards by
// each length, from each client's grant, staying.
func (e enumerator) jumps() ([]nemesis.Fault, string) {
	var out []nemesis.Fault
	for _, n := range slices.Concat(e.top.Clients, e.servers()) {
		for _, a := range e.starts([]string{history.FAcquire}, true) {
			for _, d := range e.lengths {
				for _, sign := range []time.Duration{1, -1} {
					out = append(out, nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{n}, After: a, Amount: nemesis.Duration(sign * d)})
				}
			}
		}
	}
	words := fmt.Sprintf("clock jumps of each node, forwards and backwards by just short of, just past or 1.5x each declared timeout, after each client's first acquire, staying")
	return out, words
}

// driftRates are the drift rates that add up past each timeout within the
// run (1.5x the timeout over the run, at most 0.9), both ways, and the
// random nemesis's largest (0.5).
func (e enumerator) driftRates() []float64 {
	rates := []float64{0.5}
	if e.b.RunTime > 0 {
		for _, t := range e.b.Timeouts {
			r := min(1.5*float64(t.D)/float64(e.b.RunTime), 0.9)
			rates = append(rates, float64(int(r*1000))/1000)
		}
	}
	slices.Sort(rates)
	rates = slices.Compact(rates)
	var out []float64
	for _, r := range rates {
		if r > 0 {
			out = append(out, r, -r)
		}
	}
	return out
}

// drifts enumerates a clock drift of each node from each client's first
// grant, to the end of the run.
func (e enumerator) drifts() ([]nemesis.Fault, string) {
	var out []nemesis.Fault
	rates := e.driftRates()
	for _, n := range slices.Concat(e.top.Clients, e.servers()) {
		for _, c := range e.top.Clients {
			a := &nemesis.Trigger{Node: c, F: history.FAcquire}
			for _, r := range rates {
				out = append(out, nemesis.Fault{Kind: nemesis.ClockDrift, Targets: []string{n}, After: a, Drift: r})
			}
		}
	}
	var rs []string
	for _, r := range rates {
		rs = append(rs, fmt.Sprintf("%+.1f%%", 100*r))
	}
	words := fmt.Sprintf("clock drifts of each node at %s after each client's first acquire, to the end of the run", strings.Join(rs, ", "))
	return out, words
}

// delays enumerates a delay of the next message of a client to each server
// and to the storage, after its acquire or read in each of its first
// sections, by each length.
func (e enumerator) delays() ([]nemesis.Fault, string) {
	var out []nemesis.Fault
	var tos [][]string
	if len(e.top.Servers) > 0 {
		tos = append(tos, e.top.Servers)
	}
	if e.top.Storage != "" {
		tos = append(tos, []string{e.top.Storage})
	}
	for _, a := range e.starts(startSteps, false) {
		for _, to := range tos {
			for _, d := range e.lengths {
				out = append(out, nemesis.Fault{Kind: nemesis.Delay, From: []string{a.Node}, To: to, After: a,
					Amount: nemesis.Duration(d), Count: 1})
			}
		}
	}
	words := fmt.Sprintf("delays of a client's next message to the lock's servers, or to the storage, after its acquire or read in each of its first %d sections, by just short of, just past or 1.5x each declared timeout",
		e.b.Sections)
	return out, words
}

// endWords say the end anchors.
func (e enumerator) endWords() string {
	var ds []string
	for _, d := range e.b.Deltas {
		ds = append(ds, d.String())
	}
	return "at another client's acquire, read (invoked, +" + strings.Join(ds, "/") + "; answered) or write"
}

// lengthWords say the lengths; the timeouts they straddle are the row's
// (Bound.Timeouts), named once where the row is.
func (e enumerator) lengthWords() string {
	if len(e.b.Timeouts) == 0 {
		return "no length (the design declares no timeout)"
	}
	return "lasting just short of, just past or 1.5x each declared timeout"
}

// dedupe drops repeated faults (two timeouts of one length), keeping the
// first.
func dedupe(fs []nemesis.Fault) []nemesis.Fault {
	seen := map[string]bool{}
	var out []nemesis.Fault
	for _, f := range fs {
		k := key(f)
		if !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	return out
}

// key identifies a fault by its schedule form.
func key(f nemesis.Fault) string {
	return string(nemesis.Schedule{Faults: []nemesis.Fault{f}}.JSON())
}

// Chained is the two longest of ts, longest first, and their chain (a
// pause that must outlast a lease and then a lock-delay): the timeouts a
// fault's length straddles. The shorter ones (election timeouts, request
// timeouts, retry budgets of a second or so) are reached by every length
// past these.
func Chained(ts []Timeout) []Timeout {
	sorted := slices.Clone(ts)
	slices.SortStableFunc(sorted, func(a, b Timeout) int { return cmp.Compare(b.D, a.D) })
	if len(sorted) < 2 {
		return sorted
	}
	a, b := sorted[0], sorted[1]
	return []Timeout{a, b, {Name: a.Name + " + " + b.Name, D: a.D + b.D}}
}

// ChainedAs is the two longest of ts, longest first, and the chains a
// design declares (a session lease and then a lock-delay); without declared
// chains it is Chained(ts).
func ChainedAs(ts, chains []Timeout) []Timeout {
	if len(chains) == 0 {
		return Chained(ts)
	}
	sorted := slices.Clone(ts)
	slices.SortStableFunc(sorted, func(a, b Timeout) int { return cmp.Compare(b.D, a.D) })
	return append(sorted[:min(2, len(sorted))], chains...)
}

// Longest is the longest of ts (0 when there is none).
func Longest(ts []Timeout) time.Duration {
	var d time.Duration
	for _, t := range ts {
		d = max(d, t.D)
	}
	return d
}

package guide

import (
	"fmt"
	"slices"
	"strings"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

// Coverage is the abstraction of a run that guides the search: a sorted set
// of features, each a short string in the lock's own terms.
//
// Fault features, "fault:<kind>:<role>:<phase>", one per node a fault hit
// when it started:
//
//   - role of a client: holder (it believed it held the lock), waiter (its
//     acquire was in flight) or idle; of a server: granter (it granted a
//     lock a client still holds, by the grant's "granted by" detail), or
//     server; the storage: storage.
//   - phase of a client: the step of its protocol it was in: acquiring,
//     held (acquired, nothing done yet), read (read under the lock, write not
//     sent), writing (write in flight), written (write done, not released),
//     releasing, renewing, or idle. Of a server or the storage: held (some
//     client held the lock) or free.
//
// Lock-level features, "lock:<event>", for what the lock and the storage did:
// op-after-lease (a client used the storage after its lease deadline),
// grant-after-crash (a grant by a server that had crashed and restarted),
// grant-after-failover (a grant by a promoted replica), grant-by-skewed-clock
// (a grant by a server whose clock was jumped or drifting), stale-rejected
// (the fenced storage refused a write), write-unknown, acquire-unknown,
// release-failed, release-unknown, grant-bare-quorum (a grant that rests on
// the smallest majority of several servers: Redlock's 3 of 5),
// granter-restarted-while-held and granter-clock-moved-while-held (a server
// a holder's grant rests on restarted empty, or had its clock moved, while
// that holder still held the lock: the step before a second grant), and
// "overlap:<kind>" for each kind of violation the run shows
// (scenario.ViolationKinds).
//
// Fault features say where faults landed in the protocol; lock features say
// what they did to it. A schedule that reaches a feature no earlier run
// reached is kept in the corpus and mutated further.
func Coverage(r scenario.Result) []string {
	ev := r.Events
	set := map[string]bool{}
	st := newTracker(ev)
	for _, e := range ev {
		if e.Process == history.NemesisProcess && e.Type == history.Start {
			for _, n := range e.Targets {
				role, phase := st.roleAndPhase(n)
				set[fmt.Sprintf("fault:%s:%s:%s", e.F, role, phase)] = true
			}
		}
		st.step(e)
		for _, f := range st.lockFeatures(e) {
			set["lock:"+f] = true
		}
	}
	for _, h := range models.Holdings(ev) {
		if h.Deadline != nil && h.End > *h.Deadline {
			set["lock:op-after-lease"] = true
		}
	}
	for _, k := range scenario.ViolationKinds(ev) {
		set["lock:overlap:"+k] = true
	}
	out := make([]string, 0, len(set))
	for f := range set {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}

// tracker follows each client's protocol phase and which servers granted the
// locks held, event by event.
type tracker struct {
	clients map[string]bool
	phase   map[string]string // client -> phase
	granter map[string]string // client -> "granted by" list of its current hold
	crashed map[string]bool   // server -> crashed and restarted before
	failed  map[string]bool   // node -> promoted by a failover
	skewed  map[string]bool   // node -> clock jumped or drifting
}

func newTracker(ev []history.Event) *tracker {
	t := &tracker{clients: map[string]bool{}, phase: map[string]string{}, granter: map[string]string{},
		crashed: map[string]bool{}, failed: map[string]bool{}, skewed: map[string]bool{}}
	for _, e := range ev {
		if e.Process != history.NemesisProcess {
			t.clients[e.Node] = true
		}
	}
	return t
}

// holding reports whether some client holds the lock.
func (t *tracker) holding() bool {
	for _, p := range t.phase {
		if isHeld(p) {
			return true
		}
	}
	return false
}

func isHeld(phase string) bool {
	switch phase {
	case "held", "read", "writing", "written", "releasing", "renewing":
		return true
	}
	return false
}

func (t *tracker) roleAndPhase(node string) (role, phase string) {
	if t.clients[node] {
		p := t.phase[node]
		if p == "" {
			p = "idle"
		}
		switch {
		case isHeld(p):
			return "holder", p
		case p == "acquiring":
			return "waiter", p
		}
		return "idle", p
	}
	phase = "free"
	if t.holding() {
		phase = "held"
	}
	if node == "storage" {
		return "storage", phase
	}
	if t.grantsCurrentHold(node) {
		return "granter", phase
	}
	return "server", phase
}

// grantorsInclude reports whether a "granted by a,b,c ..." detail names node.
func grantorsInclude(detail, node string) bool {
	_, list, ok := strings.Cut(detail, "granted by ")
	if !ok {
		return false
	}
	list, _, _ = strings.Cut(list, " ")
	return slices.Contains(strings.Split(strings.TrimSuffix(list, ","), ","), node)
}

// step advances the phases by one event.
func (t *tracker) step(e history.Event) {
	if e.Process == history.NemesisProcess {
		for _, n := range e.Targets {
			switch {
			case e.F == "crash" && e.Type == history.Stop:
				t.crashed[n] = true
			case e.F == "failover" && e.Type == history.Start && len(e.Targets) > 0 && n == e.Targets[0]:
				t.failed[n] = true
			case (e.F == "clock-jump" || e.F == "clock-drift") && e.Type == history.Start:
				t.skewed[n] = true
			}
		}
		return
	}
	n, held := e.Node, isHeld(t.phase[e.Node])
	switch {
	case e.F == history.FAcquire && e.Type == history.Invoke:
		t.phase[n] = "acquiring"
	case e.F == history.FAcquire && e.Type == history.OK:
		t.phase[n], t.granter[n] = "held", e.Detail
	case e.F == history.FAcquire:
		t.phase[n] = "idle"
	case e.F == history.FRelease && e.Type == history.Invoke:
		t.phase[n] = "releasing"
	case e.F == history.FRelease:
		t.phase[n] = "idle"
		delete(t.granter, n)
	case e.F == history.FRenew && e.Type == history.Invoke && held:
		t.phase[n] = "renewing"
	case e.F == history.FRenew && held:
		t.phase[n] = "held"
	case e.F == history.FRead && e.Type.IsCompletion() && held:
		t.phase[n] = "read"
	case (e.F == history.FWrite || e.F == history.FAppend) && e.Type == history.Invoke && held:
		t.phase[n] = "writing"
	case (e.F == history.FWrite || e.F == history.FAppend) && held:
		t.phase[n] = "written"
	}
}

// lockFeatures are the lock-level features of one event.
func (t *tracker) lockFeatures(e history.Event) []string {
	var out []string
	if e.Process == history.NemesisProcess {
		// A server a holder's grant rests on restarted (state lost) or had
		// its clock moved while that holder still held the lock: the step
		// before a second grant of the same key.
		for _, n := range e.Targets {
			if !t.grantsCurrentHold(n) {
				continue
			}
			switch {
			case e.F == "crash" && e.Type == history.Stop:
				out = append(out, "granter-restarted-while-held")
			case (e.F == "clock-jump" || e.F == "clock-drift") && e.Type == history.Start:
				out = append(out, "granter-clock-moved-while-held")
			}
		}
		return out
	}
	switch {
	case e.F == history.FAcquire && e.Type == history.OK:
		if bareQuorum(e.Detail) {
			out = append(out, "grant-bare-quorum")
		}
		_, list, _ := strings.Cut(e.Detail, "granted by ")
		list, _, _ = strings.Cut(list, " ")
		for _, n := range strings.Split(strings.TrimSuffix(list, ","), ",") {
			switch {
			case t.crashed[n]:
				out = append(out, "grant-after-crash")
			case t.failed[n]:
				out = append(out, "grant-after-failover")
			case t.skewed[n]:
				out = append(out, "grant-by-skewed-clock")
			}
		}
	case e.F == history.FAcquire && e.Type == history.Info:
		out = append(out, "acquire-unknown")
	case (e.F == history.FWrite || e.F == history.FAppend) && e.Type == history.Fail:
		out = append(out, "stale-rejected")
	case (e.F == history.FWrite || e.F == history.FAppend) && e.Type == history.Info:
		out = append(out, "write-unknown")
	case e.F == history.FRelease && e.Type == history.Fail:
		out = append(out, "release-failed")
	case e.F == history.FRelease && e.Type == history.Info:
		out = append(out, "release-unknown")
	}
	return out
}

// grantsCurrentHold reports whether node is among the servers that granted a
// lock some client still holds.
func (t *tracker) grantsCurrentHold(node string) bool {
	for c, g := range t.granter {
		if isHeld(t.phase[c]) && grantorsInclude(g, node) {
			return true
		}
	}
	return false
}

// bareQuorum reports whether a grant's detail says it rests on the smallest
// majority of several servers ("granted by a,b,c (3/5)"): one server fewer
// and there would have been no grant, so losing one of them (a restart, a
// clock jump) can let another client gather a majority too.
func bareQuorum(detail string) bool {
	_, rest, ok := strings.Cut(detail, " (")
	if !ok {
		return false
	}
	var k, n int
	if _, err := fmt.Sscanf(rest, "%d/%d)", &k, &n); err != nil {
		return false
	}
	return n >= 3 && k == n/2+1
}

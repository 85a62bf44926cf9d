package harness

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// Random exploration: can the random nemesis rediscover a catalog
// counterexample without being told its schedule, and how many seeds does it
// take?

// Kinds of violation, by what made two clients hold the lock at once.
const (
	// KindGCPause: the earlier holder was paused across its own lease deadline.
	KindGCPause = "gc-pause"
	// KindClockJump: a server's clock jumped or drifted, and the later holder's
	// grant came from that server.
	KindClockJump = "clock-jump"
	// KindFailover: a replica was promoted, and the later holder's grant came
	// from it.
	KindFailover = "failover"
	// KindSessionExpiry: the service expired the earlier holder's session
	// (ZooKeeper: the leader, on its clock) and granted the lock to another
	// client while the earlier holder still believed it held it.
	KindSessionExpiry = "session-expiry"
)

// Hunt is one exploration target: the unsafe variant of a catalog scenario,
// run with random faults (swarm style) instead of its schedule, and the kind
// of violation it must rediscover.
type Hunt struct {
	// Name is the hunt's name ("redis+gc-pause").
	Name string
	// Scenario and Variant name the catalog counterexample.
	Scenario, Variant string
	// Kind is the kind of violation that counts.
	Kind string
	// Time is the simulated duration of each seed's run. Default 60 s.
	Time time.Duration
}

// Hunts are the exploration targets of the Redis family.
var Hunts = []Hunt{
	{Name: "redis+gc-pause", Scenario: "kleppmann-gc-pause", Variant: "redis-unsafe", Kind: KindGCPause},
	{Name: "redlock+clock-jump", Scenario: "redlock-clock-jump", Variant: "unsafe", Kind: KindClockJump},
	{Name: "redis-failover", Scenario: "redis-failover", Variant: "unsafe", Kind: KindFailover},
	{Name: "redlock+gc-pause", Scenario: "redlock-gc-pause", Variant: "unsafe", Kind: KindGCPause},
	{Name: "zookeeper+session-expiry", Scenario: "zk-session-expiry", Variant: "unsafe", Kind: KindSessionExpiry},
	{Name: "chubby+lock-delay", Scenario: "chubby-lock-delay", Variant: "unsafe", Kind: KindSessionExpiry},
}

// FindHunt returns the hunt called name.
func FindHunt(name string) (Hunt, error) {
	var names []string
	for _, h := range Hunts {
		if h.Name == name {
			return h, nil
		}
		names = append(names, h.Name)
	}
	return Hunt{}, fmt.Errorf("unknown hunt %q (known: %s)", name, strings.Join(names, ", "))
}

// Test is the hunt's run for one seed: the variant's system, options,
// workload and storage, with random faults drawn from the seed.
func (h Hunt) Test(seed uint64) (Test, error) {
	s, err := FindScenario(h.Scenario)
	if err != nil {
		return Test{}, err
	}
	v, err := s.FindVariant(h.Variant)
	if err != nil {
		return Test{}, err
	}
	t := v.Test
	t.Schedule, t.Nemesis, t.Seed = nil, "random", seed
	t.Time = h.Time
	if t.Time == 0 {
		t.Time = 60 * time.Second
	}
	return t, nil
}

// ViolationKinds classifies every time two clients held a lock at once by
// what caused it (KindGCPause, KindClockJump, KindFailover), sorted, each kind
// once. An overlap no rule explains is "other".
func ViolationKinds(events []history.Event) []string {
	windows := faultWindowsOf(events)
	var kinds []string
	for _, o := range models.Overlaps(models.Holdings(events)) {
		found := causes(o, windows)
		if len(found) == 0 {
			found = []string{"other"}
		}
		kinds = append(kinds, found...)
	}
	slices.Sort(kinds)
	return slices.Compact(kinds)
}

// window is a fault (or system event) from its start to its stop.
type window struct {
	kind        string
	targets     []string
	start, stop int64
}

func faultWindowsOf(events []history.Event) []window {
	var out []window
	open := map[string]int{} // kind+detail+targets -> index in out
	for _, e := range events {
		key := e.F + "\x00" + e.Detail + "\x00" + strings.Join(e.Targets, ",")
		switch e.Type {
		case history.Start:
			open[key] = len(out)
			out = append(out, window{kind: e.F, targets: e.Targets, start: e.Time, stop: -1})
		case history.Stop:
			if i, ok := open[key]; ok {
				out[i].stop = e.Time
				delete(open, key)
			}
		}
	}
	end := int64(0)
	if len(events) > 0 {
		end = events[len(events)-1].Time
	}
	for i := range out {
		if out[i].stop < 0 {
			out[i].stop = end
		}
	}
	return out
}

// causes lists the kinds that explain overlap o, A being the earlier holder.
// If B was granted the lock before A's own lease deadline, the service broke
// its lease: by a server clock that jumped or ran fast while holding A's key
// (a server that granted both), or by a failover to the node that granted B.
// If B came after A's deadline, A outlived its lease: by a pause across it.
func causes(o models.Overlap, windows []window) []string {
	var out []string
	if o.A.Deadline == nil {
		return nil
	}
	deadline := *o.A.Deadline
	early := o.B.Start < deadline
	for _, w := range windows {
		switch {
		case !early && w.kind == "pause" && slices.Contains(w.targets, o.A.Node) && w.start <= deadline && w.stop >= deadline:
			out = append(out, KindGCPause)
		case early && (w.kind == "clock-jump" || w.kind == "clock-drift") && w.start <= o.B.Start && w.stop >= o.A.Start &&
			grantedBy(o.A.Acquired.Detail, w.targets) && grantedBy(o.B.Acquired.Detail, w.targets):
			out = append(out, KindClockJump)
		case w.kind == "session-expired" && slices.Contains(w.targets, o.A.Node) && w.start >= o.A.Start && w.start <= o.B.Start:
			out = append(out, KindSessionExpiry)
		case early && w.kind == "failover" && w.start >= o.A.Start && w.start <= o.B.Start && grantedBy(o.B.Acquired.Detail, w.targets[:1]):
			out = append(out, KindFailover)
		}
	}
	return out
}

// grantedBy reports whether a grant's detail names one of the nodes.
func grantedBy(detail string, nodes []string) bool {
	_, list, found := strings.Cut(detail, "granted by ")
	if !found {
		return false
	}
	list, _, _ = strings.Cut(list, " ")
	list = strings.TrimSuffix(list, ",")
	for _, n := range strings.Split(list, ",") {
		if slices.Contains(nodes, n) {
			return true
		}
	}
	return false
}

// Sweep is one sequential search from a starting seed.
type Sweep struct {
	// Start is the first seed tried.
	Start uint64 `json:"start"`
	// Seeds is how many seeds ran (the finding one included).
	Seeds int `json:"seeds"`
	// Found reports whether a violation of the hunt's kind turned up; Seed is
	// the seed that showed it.
	Found bool   `json:"found"`
	Seed  uint64 `json:"seed,omitempty"`
	// Wall is the machine time the sweep took.
	Wall time.Duration `json:"wall"`
}

// Sweep runs seeds start, start+1, ... until one shows a violation of the
// hunt's kind, at most maxSeeds of them; progress, when set, is called after
// every seed.
func (h Hunt) Sweep(start uint64, maxSeeds int, progress func()) (Sweep, error) {
	sw := Sweep{Start: start}
	began := time.Now()
	defer func() { sw.Wall = time.Since(began) }()
	for i := range maxSeeds {
		seed := start + uint64(i)
		t, err := h.Test(seed)
		if err != nil {
			return sw, err
		}
		r, err := Run(t)
		if err != nil {
			return sw, fmt.Errorf("%s seed %d: %w", h.Name, seed, err)
		}
		sw.Seeds++
		if progress != nil {
			progress()
		}
		if r.Overall == models.Invalid && slices.Contains(ViolationKinds(r.Events), h.Kind) {
			sw.Found, sw.Seed = true, seed
			sw.Wall = time.Since(began)
			return sw, nil
		}
	}
	sw.Wall = time.Since(began)
	return sw, nil
}

// Exploration is the outcome of several sweeps of one hunt.
type Exploration struct {
	Hunt   Hunt    `json:"hunt"`
	Sweeps []Sweep `json:"sweeps"`
}

// MedianSeeds is the median number of seeds the sweeps needed; a sweep that
// found nothing counts as its number of seeds (so the median is a lower bound
// when some did not find).
func (e Exploration) MedianSeeds() float64 {
	n := make([]int, len(e.Sweeps))
	for i, s := range e.Sweeps {
		n[i] = s.Seeds
	}
	slices.Sort(n)
	switch {
	case len(n) == 0:
		return 0
	case len(n)%2 == 1:
		return float64(n[len(n)/2])
	}
	return float64(n[len(n)/2-1]+n[len(n)/2]) / 2
}

// Found counts the sweeps that found a violation.
func (e Exploration) Found() int {
	c := 0
	for _, s := range e.Sweeps {
		if s.Found {
			c++
		}
	}
	return c
}

// WallPerSeed is the mean machine time per seed.
func (e Exploration) WallPerSeed() time.Duration {
	var wall time.Duration
	seeds := 0
	for _, s := range e.Sweeps {
		wall += s.Wall
		seeds += s.Seeds
	}
	if seeds == 0 {
		return 0
	}
	return wall / time.Duration(seeds)
}

// Explore sweeps the hunt from each starting seed in turn.
func Explore(h Hunt, starts []uint64, maxSeeds int, progress func()) (Exploration, error) {
	e := Exploration{Hunt: h}
	for _, s := range starts {
		sw, err := h.Sweep(s, maxSeeds, progress)
		if err != nil {
			return e, err
		}
		e.Sweeps = append(e.Sweeps, sw)
	}
	return e, nil
}

package nemesis

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/internal/suggest"
	"github.com/locklab/locklab/sim"
)

// RandomConfig configures the random fault generator. Zero fields take the
// documented defaults.
type RandomConfig struct {
	// Kinds are the fault kinds drawn from. Default: every kind.
	Kinds []Kind
	// Swarm makes each seed also draw which of Kinds are on (each with
	// probability 1/2, at least one), a weight in [0.2, 1] for each kind that is
	// on (its share of the faults), and a factor in [0.5, 2] for Interval
	// (swarm testing).
	Swarm bool
	// Interval is the mean time between fault starts (exponential). Default 5 s.
	Interval time.Duration
	// MinDuration and MaxDuration bound fault durations. Default 500 ms and 15 s.
	MinDuration, MaxDuration time.Duration
	// ClockJumpMax bounds clock jumps (either way). Default 30 s.
	ClockJumpMax time.Duration
	// DriftMax bounds clock drift (either way). Default 0.5.
	DriftMax float64
	// DelayMax bounds message delays. Default 15 s.
	DelayMax time.Duration
	// Quiet is a fault-free stretch at the start and at the end of the run.
	// Default 1 s.
	Quiet time.Duration
}

// Targets names the nodes a random schedule may act on.
type Targets struct {
	// Clients are the client nodes.
	Clients []string
	// Servers are the lock service's nodes.
	Servers []string
	// Storage is the protected storage's node (only message delays touch it).
	Storage string
	// Roles are names the system resolves when a fault starts ("primary",
	// "replicas"): the generator aims at them as well as at plain nodes, so a
	// random schedule can hit whatever instance is primary at the time.
	Roles []string
}

func (c RandomConfig) withDefaults() RandomConfig {
	if len(c.Kinds) == 0 {
		c.Kinds = Kinds
	}
	if c.Interval == 0 {
		c.Interval = 5 * time.Second
	}
	if c.MinDuration == 0 {
		c.MinDuration = 500 * time.Millisecond
	}
	if c.MaxDuration == 0 {
		c.MaxDuration = 15 * time.Second
	}
	if c.ClockJumpMax == 0 {
		c.ClockJumpMax = 30 * time.Second
	}
	if c.DriftMax == 0 {
		c.DriftMax = 0.5
	}
	if c.DelayMax == 0 {
		c.DelayMax = 15 * time.Second
	}
	if c.Quiet == 0 {
		c.Quiet = time.Second
	}
	return c
}

// ParseKinds reads a comma-separated list of fault kinds; "clock" means both
// clock kinds and "all" every kind. An unknown kind is a
// *suggest.UnknownError naming the kinds it was probably meant to be.
func ParseKinds(s string) ([]Kind, error) {
	var out []Kind
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		switch part {
		case "all":
			out = append(out, Kinds...)
		case "clock":
			out = append(out, ClockJump, ClockDrift)
		default:
			if !slices.Contains(Kinds, Kind(part)) {
				var known []string
				for _, k := range Kinds {
					known = append(known, string(k))
				}
				err := suggest.Unknown("fault kind", part, append(known, "clock", "all"))
				err.Want = fmt.Sprintf("want a comma-separated list of %v, clock or all", Kinds)
				return nil, err
			}
			out = append(out, Kind(part))
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// Random draws a schedule for a run of length runTime from r.
func Random(r *rand.Rand, cfg RandomConfig, t Targets, runTime time.Duration) Schedule {
	cfg = cfg.withDefaults()
	kinds := slices.Clone(cfg.Kinds)
	weights := make([]float64, len(kinds))
	for i := range weights {
		weights[i] = 1
	}
	interval := cfg.Interval
	if cfg.Swarm {
		kinds, weights = swarm(r, kinds)
		interval = time.Duration(float64(interval) * (0.5 + 1.5*r.Float64()))
	}
	g := generator{r: r, cfg: cfg, t: t}
	var s Schedule
	at := cfg.Quiet
	for {
		at += time.Duration(-math.Log(1-r.Float64()) * float64(interval))
		if at >= runTime-cfg.Quiet {
			break
		}
		f, ok := g.fault(kinds[sim.Weighted(r, weights)], at)
		if !ok {
			continue
		}
		// Faults end before the quiet tail so that the run can recover.
		if end := at + time.Duration(f.Duration); f.Duration > 0 && end > runTime-cfg.Quiet {
			f.Duration = Duration(max(runTime-cfg.Quiet-at, time.Millisecond))
		}
		s.Faults = append(s.Faults, f)
	}
	return s
}

// swarm draws which kinds are on (each with probability 1/2, at least one)
// and a weight for each.
func swarm(r *rand.Rand, kinds []Kind) ([]Kind, []float64) {
	var on []Kind
	for _, k := range kinds {
		if r.IntN(2) == 0 {
			on = append(on, k)
		}
	}
	if len(on) == 0 {
		on = []Kind{kinds[r.IntN(len(kinds))]}
	}
	weights := make([]float64, len(on))
	for i := range weights {
		weights[i] = 0.2 + 0.8*r.Float64()
	}
	return on, weights
}

type generator struct {
	r   *rand.Rand
	cfg RandomConfig
	t   Targets
}

// duration draws a duration in [lo, hi), to the millisecond so that drawn
// schedules read well.
func (g generator) duration(lo, hi time.Duration) Duration {
	if hi <= lo {
		return Duration(lo)
	}
	d := lo + time.Duration(g.r.Int64N(int64(hi-lo)))
	if r := d.Round(time.Millisecond); r >= lo && r < hi {
		d = r
	}
	return Duration(d)
}

func (g generator) pick(names []string) string { return names[g.r.IntN(len(names))] }

func (g generator) nodes() []string { return append(slices.Clone(g.t.Clients), g.t.Servers...) }

// anyNode is a client or a server, or now and then one of the system's roles.
func (g generator) anyNode() string {
	if len(g.t.Roles) > 0 && g.r.IntN(4) == 0 {
		return g.pick(g.t.Roles)
	}
	return g.pick(g.nodes())
}

// anyServer is a server, or now and then one of the system's roles.
func (g generator) anyServer() string {
	if len(g.t.Roles) > 0 && g.r.IntN(3) == 0 {
		return g.pick(g.t.Roles)
	}
	return g.pick(g.t.Servers)
}

func (g generator) fault(k Kind, at time.Duration) (Fault, bool) {
	f := Fault{Kind: k, At: Duration(at), Duration: g.duration(g.cfg.MinDuration, g.cfg.MaxDuration)}
	switch k {
	case Pause:
		f.Targets = []string{g.anyNode()}
	case Crash:
		if len(g.t.Servers) == 0 {
			return Fault{}, false
		}
		f.Targets = []string{g.anyServer()}
	case ClockJump:
		f.Targets = []string{g.anyNode()}
		f.Amount = g.duration(-g.cfg.ClockJumpMax, g.cfg.ClockJumpMax)
		if f.Amount == 0 {
			f.Amount = Duration(time.Second)
		}
		if g.r.IntN(2) == 0 {
			f.Duration = 0 // a step that stays
		}
	case ClockDrift:
		f.Targets = []string{g.anyNode()}
		f.Drift = math.Round((2*g.r.Float64()-1)*g.cfg.DriftMax*1000) / 1000
	case Partition:
		g.partitionShape(&f)
	case Delay:
		return g.delay(f)
	}
	return f, true
}

// delay draws a message delay on one link: client to storage, client to
// server, or server to server (replication, say).
func (g generator) delay(f Fault) (Fault, bool) {
	var from, to string
	switch shape := g.r.IntN(3); {
	case shape == 2 && len(g.t.Servers)+len(g.t.Roles) > 1:
		from, to = g.anyServer(), g.anyServer()
		if from == to {
			return Fault{}, false
		}
	case shape == 1 && len(g.t.Servers) > 0 && len(g.t.Clients) > 0:
		from, to = g.pick(g.t.Clients), g.anyServer()
	case g.t.Storage != "" && len(g.t.Clients) > 0:
		from, to = g.pick(g.t.Clients), g.t.Storage
	default:
		return Fault{}, false
	}
	f.From, f.To = []string{from}, []string{to}
	f.Amount = g.duration(100*time.Millisecond, g.cfg.DelayMax)
	return f, true
}

// partitionShape draws one of: isolate a node; split every node into two
// random halves; a one-way cut between two nodes; cut one client off from
// some of the servers (so that it reaches a bare majority, say).
func (g generator) partitionShape(f *Fault) {
	all := g.nodes()
	switch g.r.IntN(4) {
	case 0:
		f.Targets = []string{g.anyNode()}
	case 1:
		var a, b []string
		for _, n := range all {
			if g.r.IntN(2) == 0 {
				a = append(a, n)
			} else {
				b = append(b, n)
			}
		}
		if len(a) == 0 || len(b) == 0 {
			f.Targets = []string{g.anyNode()}
			return
		}
		f.Groups = [][]string{a, b}
	case 2:
		from := g.pick(all)
		to := g.pick(all)
		if from == to {
			f.Targets = []string{from}
			return
		}
		f.From, f.To = []string{from}, []string{to}
	default:
		if len(g.t.Clients) == 0 || len(g.t.Servers) < 2 {
			f.Targets = []string{g.anyNode()}
			return
		}
		servers := slices.Clone(g.t.Servers)
		g.r.Shuffle(len(servers), func(i, j int) { servers[i], servers[j] = servers[j], servers[i] })
		cut := servers[:1+g.r.IntN(len(servers)/2)]
		slices.Sort(cut)
		f.Groups = [][]string{{g.pick(g.t.Clients)}, cut}
	}
}

// DrawFault draws one fault of kind k starting at at, as Random draws its
// faults (targets, durations and amounts from cfg's bounds); ok is false when
// the targets allow no fault of that kind (a crash without servers, say).
func DrawFault(r *rand.Rand, cfg RandomConfig, t Targets, k Kind, at time.Duration) (Fault, bool) {
	g := generator{r: r, cfg: cfg.withDefaults(), t: t}
	return g.fault(k, at)
}

package harness

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/workloads"
)

// ErrCrash marks a failure of the harness itself (a panic inside the
// simulation), as opposed to a bad test or a verdict.
var ErrCrash = errors.New("harness crashed")

// Prepared is a world built from a test, ready to run.
type Prepared struct {
	Test     scenario.Test
	World    *sim.World
	Log      *history.Log
	Schedule nemesis.Schedule
	Storage  *storage.Server
	// Initial are the storage cells' values before the run (nil: all 0).
	Initial map[string]int64
	// Deployment is the lock system as deployed.
	Deployment system.Deployment
	// Nemesis runs the schedule.
	Nemesis *nemesis.Nemesis
	// grantsAsked: a caller asked for the servers' record (RecordGrants).
	grantsAsked bool
	// Writes is the record of the writes the protected resource the clients
	// write to applied (the storage node's, or the system's own resource's:
	// Deployment.Writes, nil when the system keeps none), the ground truth
	// of the data. It records only after RecordWrites.
	Writes *lockapi.WriteLog
}

// Prepare builds the world of a test without running it.
func Prepare(t scenario.Test) (*Prepared, error) {
	t = t.WithDefaults()
	if err := t.Validate(); err != nil {
		return nil, err
	}
	sys, _ := system.Find(t.System)
	wlEntry, _ := workloads.Find(t.Workload)
	wl, err := wlEntry.New(t.WorkloadOptions)
	if err != nil {
		return nil, err
	}
	cuts, _ := t.CutMode() // validated
	w := sim.NewWorld(sim.Config{Seed: t.Seed, Cuts: cuts})
	log := history.NewLog()
	dep, err := sys.Deploy(w, t.SystemOptions)
	if err != nil {
		return nil, err
	}
	if dep.Record != nil {
		dep.Record(log)
	}
	// The servers keep their record of grants when the liveness check reads
	// it (a wedged lock, judgedGrants) or a caller asks for the ground truth
	// (RecordGrants).
	dep.Grants.Record(livenessMayRun(t))
	if t.Storage == storage.Fenced && !dep.HasTokens {
		return nil, fmt.Errorf("storage fenced: system %s grants no fencing tokens with these options (%s)", t.System,
			strings.Join(system.FencingFlags(), "; "))
	}
	var initial map[string]int64
	if in, ok := wl.(workloads.Initializer); ok {
		initial = in.Initial()
	}
	if dep.InitialData != nil && initial != nil {
		dep.InitialData(initial)
	}
	if t.Storage == storage.Check && dep.Check == nil {
		return nil, fmt.Errorf("storage check: system %s has no CheckSequencer (%s has)", t.System, strings.Join(system.Sequencers(), ", "))
	}
	dep.Writes.Record(false) // until a caller asks for the ground truth (RecordWrites)
	writes := dep.Writes
	stWrites := lockapi.NewWriteLog()
	if dep.NewStorage == nil { // the clients write to the storage node
		writes = stWrites
	}
	st := storage.NewServer(storage.Options{Mode: t.Storage, FenceReads: t.FenceReads, Initial: initial, Checker: dep.Check,
		Writes: stWrites})
	stNode := w.AddNode("storage", sim.NodeOptions{Handler: st})
	for _, name := range t.ClientNames() {
		w.AddNode(name, sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
			c := workloads.Client{
				Env:   p,
				Lock:  dep.NewLock(p),
				Store: &storage.Client{P: p, Server: stNode.ID(), Timeout: storageTimeout(t.Storage)},
				Rec:   log.NewRecorder(p.Node().Name(), system.Clock(p.Node())),
			}
			if dep.NewStorage != nil {
				c.Store = dep.NewStorage(p, c.Lock)
			}
			wl.Run(c)
		})})
	}
	schedule, err := scheduleFor(t, w, dep)
	if err != nil {
		return nil, err
	}
	// A mistake in the schedule is a *nemesis.Error that names the file (or
	// "schedule"), the line, the fault and the field.
	nem, err := nemesis.Install(w, log, schedule, nemesis.Env{Resolve: resolver(w, t, dep),
		Clients: t.ClientNames(), Messages: messageNames(dep.Messages)})
	if err != nil {
		return nil, err
	}
	return &Prepared{Test: t, World: w, Log: log, Schedule: schedule, Storage: st, Initial: initial, Deployment: dep,
		Nemesis: nem, Writes: writes}, nil
}

// storageTimeout is the storage client's request timeout: a storage in
// check mode makes a round trip to the lock service for each write, so its
// clients wait longer (30 s) than the default.
func storageTimeout(m storage.Mode) time.Duration {
	if m == storage.Check {
		return 30 * time.Second
	}
	return 0
}

// messageNames are the names a delay's match may use: the %T of the system's
// message types and the storage's, sorted.
func messageNames(system []any) []string {
	var out []string
	for _, m := range append(slices.Clone(system), storage.MessageTypes()...) {
		out = append(out, reflect.TypeOf(m).String()) // what %T prints, without fmt's allocations
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func scheduleFor(t scenario.Test, w *sim.World, dep system.Deployment) (nemesis.Schedule, error) {
	if t.Schedule != nil {
		return *t.Schedule, nil
	}
	kinds, err := t.RandomKinds()
	if err != nil || len(kinds) == 0 {
		return nemesis.Schedule{}, err
	}
	if t.Nemesis == "random" && t.LiveComparable {
		// The kinds a live run of the test draws from: one seed, one
		// schedule in both worlds.
		if kinds, _, err = liveform.RandomKinds(t); err != nil {
			return nemesis.Schedule{}, fmt.Errorf("--live-comparable: %w", err)
		}
	}
	cfg := t.Random
	cfg.Kinds = kinds
	cfg.Swarm = cfg.Swarm || t.Nemesis == "random"
	targets := nemesis.Targets{Clients: t.ClientNames(), Storage: "storage", Roles: dep.Roles}
	for _, s := range dep.Servers {
		targets.Servers = append(targets.Servers, s.Name())
	}
	return nemesis.Random(w.Rand("nemesis"), cfg, targets, t.Time), nil
}

// resolver resolves schedule names: node names, "clients", "servers", and the
// system's own names.
func resolver(w *sim.World, t scenario.Test, dep system.Deployment) nemesis.Resolver {
	return func(name string) ([]*sim.Node, error) {
		switch name {
		case "clients":
			var out []*sim.Node
			for _, c := range t.ClientNames() {
				out = append(out, w.Node(c))
			}
			return out, nil
		case "servers":
			return slices.Clone(dep.Servers), nil
		}
		if dep.Resolve != nil {
			if ns, ok := dep.Resolve(name); ok {
				return ns, nil
			}
		}
		if n := w.Node(name); n != nil {
			return []*sim.Node{n}, nil
		}
		var known []string
		for _, n := range w.Nodes() {
			known = append(known, n.Name())
		}
		known = append(known, "clients", "servers")
		known = append(known, dep.Roles...)
		return nil, fmt.Errorf("unknown node %q (known: %s)", name, strings.Join(known, ", "))
	}
}

// Run runs a test and checks its history.
func Run(t scenario.Test) (scenario.Result, error) {
	p, err := Prepare(t)
	if err != nil {
		return scenario.Result{}, err
	}
	return p.Run()
}

// Run executes the prepared world for the test's duration and checks it.
func (p *Prepared) Run() (res scenario.Result, err error) { return p.RunWatched(Watch{}) }

// RunWatched is Run reporting progress to w. A history that would exceed the
// test's MaxHistoryEvents stops the run with ErrTooLarge (see simulate).
func (p *Prepared) RunWatched(w Watch) (res scenario.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w (seed %d): %v", ErrCrash, p.Test.Seed, r)
		}
		p.World.Close()
	}()
	if err := p.simulate(w); err != nil {
		return scenario.Result{}, err
	}
	p.World.Close()
	res, err = p.judge(p.Log.Events())
	res.Attach(p.Log, p.Deployment.Release)
	if p.grantsAsked {
		res.Grants = p.Deployment.Grants
	}
	if p.Writes.Recording() {
		res.Writes = p.Writes
	}
	return res, err
}

// RecordGrants makes the servers keep their record of the grants they make
// (Deployment.Grants), the ground truth a test checks verdicts against and
// the run's report shows (Result.Grants). Call it before Run. Without it the
// servers keep the record only when the liveness check runs (it judges a
// wedged lock by it), and the result does not carry it.
func (p *Prepared) RecordGrants() {
	p.Deployment.Grants.Record(true)
	p.grantsAsked = true
}

// livenessMayRun reports whether the test's selection of checks may run the
// liveness check, which reads the servers' record of grants.
func livenessMayRun(t scenario.Test) bool {
	sel, err := t.SelectChecks()
	if err != nil || sel.NoHistory {
		return false
	}
	for _, n := range sel.History {
		if !strings.HasPrefix(n, "+") {
			return slices.Contains(sel.History, "liveness")
		}
	}
	return true // the default selection, with or without additions
}

// judgedGrants is the servers' record as the liveness check reads it (nil
// when the servers did not keep it).
func judgedGrants(l *lockapi.GrantLog) []models.ServerGrant {
	if !l.Recording() {
		return nil
	}
	gs := l.Grants()
	out := make([]models.ServerGrant, 0, len(gs))
	for _, g := range gs {
		out = append(out, models.ServerGrant{Key: g.Key, Owner: g.Owner, Client: g.Client, Server: g.Server,
			At: int64(g.At), Lease: g.Until > 0, Standing: g.Until == 0 && g.Released == 0 && g.RemovedBy == "",
			Ended: int64(grantEnded(g)), Holds: holdCounts(g.Holds)})
	}
	return out
}

// holdCounts are a grant's hold counts as the checks read them.
func holdCounts(hs []lockapi.HoldCount) []models.HoldCount {
	if len(hs) == 0 {
		return nil
	}
	out := make([]models.HoldCount, len(hs))
	for i, h := range hs {
		out[i] = models.HoldCount{At: int64(h.At), Holds: h.Holds}
	}
	return out
}

// grantEnded is when g stopped holding its lock for its owner: its lease
// ran out, or it was released, removed or revoked (0: never).
func grantEnded(g lockapi.Grant) time.Duration {
	var end time.Duration
	for _, t := range []time.Duration{g.Until, g.Released, g.Removed} {
		if t > 0 && (end == 0 || t < end) {
			end = t
		}
	}
	return end
}

// maxDisagreements is how many grants of acquires recorded as fail a run's
// notes tell one by one.
const maxDisagreements = 3

// RecordRecords makes the run keep both records of the ground truth, the
// servers' grants (RecordGrants) and the storage's applied writes
// (RecordWrites), for its report and results.json.
func (p *Prepared) RecordRecords() {
	p.RecordGrants()
	p.RecordWrites()
}

// RecordWrites makes the protected resource keep its record of the writes it
// applies and the reads it serves (Writes), the ground truth a test checks
// the data's verdicts against. Call it before Run. It is off by default: no
// verdict reads it.
func (p *Prepared) RecordWrites() { p.Writes.Record(true) }

// judge checks the history of a run that has finished (events, its log's
// events) and gathers its result.
func (p *Prepared) judge(events []history.Event) (scenario.Result, error) {
	sel, err := p.Test.SelectChecks()
	if err != nil {
		return scenario.Result{}, err
	}
	// The history is paired once, for every check and the summary, in
	// memory that goes to the next run with the log's (Result.Release).
	h, pairErr := p.Log.Pair()
	if pairErr != nil {
		h = history.PairRecorded(events)
	}
	var checked judge.Checked
	grants := judgedGrants(p.Deployment.Grants)
	if !sel.NoHistory {
		cfg := judge.CheckConfig(p.Test, p.Initial)
		cfg.Grants = grants
		if checked, err = judge.CheckPaired(cfg, sel.History, events, h, pairErr); err != nil {
			return scenario.Result{}, err
		}
	}
	verdicts := checked.Verdicts
	if p.Deployment.Audit != nil && slices.Contains(sel.Audits, p.Deployment.Audit.Name()) {
		verdicts = append(verdicts, models.Run(p.Deployment.Audit, events))
	}
	var figures map[string]any
	if p.Deployment.Figures != nil {
		figures = p.Deployment.Figures()
	}
	res := scenario.Result{
		SystemFigures: figures,
		Test:          p.Test,
		Schedule:      p.Schedule,
		FaultOutcomes: p.Nemesis.Outcomes(p.Test.Time),
		Events:        events,
		Verdicts:      verdicts,
		Skipped:       checked.Skipped,
		Overall:       models.Overall(verdicts),
		Summary:       models.SummarizePaired(h),
		Network:       p.World.Network().Stats(),
		KernelEvents:  p.World.Processed(),
	}
	if p.Deployment.Notes != nil {
		res.Notes = append(res.Notes, p.Deployment.Notes()...)
	}
	if p.Deployment.NewStorage == nil { // the clients wrote to the storage node
		res.Notes = append(res.Notes, storage.LateWriteNotes(p.Storage.LateWrites(), 0, p.Test.Time)...)
	}
	res.Notes = append(res.Notes, models.GrantDisagreements(h, grants, p.Deployment.Grants.Quorum(), maxDisagreements)...)
	res.Mark(h.Marks())
	return res, nil
}

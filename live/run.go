package live

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/faultnet"
	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/storage"
	store "github.com/locklab/locklab/storage/live"
	"github.com/locklab/locklab/workloads"
)

// Config tunes a live run.
type Config struct {
	// Scale multiplies every duration of the test (see Scale); 0 or 1: none.
	Scale float64
	// Setup bounds the start of the system (a first leader). Default 10 s.
	Setup time.Duration
	// Drain bounds the wait for the clients' goroutines after the run
	// stopped. Default 10 s.
	Drain time.Duration
	// Options override system options after scaling (hashicorp/raft's
	// timing shortened in tests, say).
	Options map[string]string
	// Dir is where real servers keep their data directories and logs. Empty:
	// a temporary directory, removed after the run.
	Dir string
}

// NotReplayable is what a live report says about replaying it.
const NotReplayable = "a live run is not replayable byte for byte: the seed fixes locklab's choices " +
	"(workload randomness, random fault schedules), not goroutine scheduling or the library's own timers and randomness"

// ErrInterrupted marks a run stopped by its context (Ctrl-C) before its time.
var ErrInterrupted = errors.New("live run interrupted")

// run is one live run in progress.
type run struct {
	net      *faultnet.Net
	sys      *liveform.Deployed
	log      *history.Log
	clients  []string
	messages []string
	start    time.Duration // net time at which the workload started
	done     atomic.Bool
	errMu    sync.Mutex
	err      error
	failed   chan struct{}
}

func (r *run) now() time.Duration { return r.net.Now() - r.start }
func (r *run) stopped() bool      { return r.done.Load() }

// fail stops the run with err (the first error wins).
func (r *run) fail(err error) {
	r.errMu.Lock()
	defer r.errMu.Unlock()
	if r.err == nil {
		r.err = err
		close(r.failed)
	}
}

func (r *run) isRole(name string) bool {
	return name == "clients" || name == "servers" || slices.Contains(r.sys.Roles, name)
}

// allNodes are every node of the run: servers, clients, the storage.
func (r *run) allNodes() []string {
	out := slices.Clone(r.sys.Servers)
	out = append(out, r.clients...)
	return append(out, store.Name)
}

// resolve maps a schedule name to node names.
func (r *run) resolve(name string) ([]string, error) {
	switch name {
	case "clients":
		return slices.Clone(r.clients), nil
	case "servers":
		return slices.Clone(r.sys.Servers), nil
	}
	if ns, ok := r.sys.Resolve(name); ok {
		return ns, nil
	}
	if slices.Contains(r.allNodes(), name) {
		return []string{name}, nil
	}
	known := append(r.allNodes(), "clients", "servers")
	return nil, fmt.Errorf("unknown node %q (known: %s)", name, strings.Join(append(known, r.sys.Roles...), ", "))
}

// Prepared is a validated live test, not yet started.
type Prepared struct {
	Test     scenario.Test
	Schedule nemesis.Schedule
	cfg      Config
}

// Prepare scales and validates a test for a live run: the system must have a
// live form, its options must be valid live, and every fault of its
// schedule must be one the live system can perform. Nothing is started.
func Prepare(t scenario.Test, cfg Config) (*Prepared, error) {
	t = t.WithDefaults()
	var drawn *nemesis.Schedule
	if t.Schedule == nil && t.Nemesis != "none" {
		// A random schedule is drawn for the test as given (the simulated
		// run's schedule), then scaled with it: its faults keep their
		// proportions to the run.
		_, s, err := describe(t)
		if err != nil {
			return nil, err
		}
		drawn = &s
		if cfg.Scale != 0 && cfg.Scale != 1 {
			t.Schedule = &s
		}
	}
	t = Scale(t, cfg.Scale)
	if len(cfg.Options) > 0 {
		o := maps.Clone(t.SystemOptions)
		if o == nil {
			o = map[string]string{}
		}
		maps.Copy(o, cfg.Options)
		t.SystemOptions = o
	}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	dep, ok := liveform.Find(t.System)
	if !ok {
		return nil, liveform.Unknown(t.System)
	}
	desc, err := dep.Describe(t)
	if err != nil {
		return nil, err
	}
	schedule := nemesis.Schedule{}
	switch {
	case t.Schedule != nil:
		schedule = *t.Schedule
	case drawn != nil:
		schedule = *drawn
	}
	// Names are checked against the system's description without starting it.
	dry := &run{sys: &liveform.Deployed{Description: desc}, clients: t.ClientNames(), messages: messageNames(desc.Messages)}
	if err := dry.checkSchedule(schedule); err != nil {
		return nil, err
	}
	if cfg.Setup == 0 {
		cfg.Setup = 10 * time.Second
	}
	if cfg.Drain == 0 {
		cfg.Drain = 10 * time.Second
	}
	return &Prepared{Test: t, Schedule: schedule, cfg: cfg}, nil
}

// describe is the description of t's live system and t's schedule (drawn
// for that system when t gives none).
func describe(t scenario.Test) (liveform.Description, nemesis.Schedule, error) {
	dep, ok := liveform.Find(t.System)
	if !ok {
		return liveform.Description{}, nemesis.Schedule{}, liveform.Unknown(t.System)
	}
	desc, err := dep.Describe(t)
	if err != nil {
		return liveform.Description{}, nemesis.Schedule{}, err
	}
	schedule, err := scheduleOf(t, desc)
	if err != nil {
		return liveform.Description{}, nemesis.Schedule{}, err
	}
	return desc, schedule, nil
}

func messageNames(system []any) []string {
	var out []string
	for _, m := range append(slices.Clone(system), storage.MessageTypes()...) {
		out = append(out, faultnet.TypeName(m))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// scheduleOf is the test's schedule, or the one the simulator draws for it
// from its seed: the same faults in both worlds. A list of kinds is refused
// when the live system cannot perform one of them; "random" draws from the
// kinds the live system can perform (liveform.RandomKinds), as a simulated
// run with LiveComparable does.
func scheduleOf(t scenario.Test, desc liveform.Description) (nemesis.Schedule, error) {
	if t.Schedule != nil {
		return *t.Schedule, nil
	}
	switch t.Nemesis {
	case "none", "":
		return nemesis.Schedule{}, nil
	case "random":
	default:
		kinds, err := nemesis.ParseKinds(t.Nemesis)
		if err != nil {
			return nemesis.Schedule{}, err
		}
		for _, k := range kinds {
			if why := refusal(desc, k); why != "" {
				return nemesis.Schedule{}, fmt.Errorf("nemesis %s: %s", k, why)
			}
		}
	}
	t.LiveComparable = true
	p, err := harness.Prepare(t)
	if err != nil {
		return nemesis.Schedule{}, fmt.Errorf("the simulated run's schedule: %w", err)
	}
	p.World.Close() // built only to draw the schedule
	return p.Schedule, nil
}

// Run runs a test live (see Prepare) and judges its history.
func Run(ctx context.Context, t scenario.Test, cfg Config) (scenario.Result, error) {
	p, err := Prepare(t, cfg)
	if err != nil {
		return scenario.Result{}, err
	}
	return p.Run(ctx)
}

// storageTimeout is the storage client's request timeout, the simulated
// run's (harness: 30 s in check mode, which asks the lock service before each
// write), before scaling.
func storageTimeout(m storage.Mode) time.Duration {
	if m == storage.Check {
		return 30 * time.Second
	}
	return storage.DefaultTimeout
}

// scaled is d multiplied by the run's scale, as Scale does the test's
// durations.
func (p *Prepared) scaled(d time.Duration) time.Duration {
	if p.cfg.Scale == 0 || p.cfg.Scale == 1 {
		return d
	}
	return time.Duration(float64(d) * p.cfg.Scale)
}

// Run starts the system, runs the clients and the faults for the test's
// time (or until ctx is done, or an error), stops everything, and checks the
// history. A run cut short by ctx returns its result with ErrInterrupted.
func (p *Prepared) Run(ctx context.Context) (scenario.Result, error) {
	t := p.Test
	wlEntry, _ := workloads.Find(t.Workload)
	wl, err := wlEntry.New(t.WorkloadOptions)
	if err != nil {
		return scenario.Result{}, err
	}
	net := faultnet.New()
	defer net.Close()
	cuts, err := t.CutMode()
	if err != nil {
		return scenario.Result{}, err
	}
	if cuts == sim.CutHolds {
		// The clients talk to the storage over TCP, as in the simulator
		// (--cuts hold, the default): a cut holds their requests until the
		// heal, or until the connection resets.
		net.HoldCuts(store.Name, p.scaled(sim.DefaultConnTimeout))
	}
	dir, cleanup, err := p.serversDir()
	if err != nil {
		return scenario.Result{}, err
	}
	defer cleanup()
	form, _ := liveform.Find(t.System)
	sys, err := form.Deploy(liveform.Deployment{Ctx: ctx, Net: net, Test: t, Setup: p.cfg.Setup, Dir: dir})
	if err != nil {
		return scenario.Result{}, err
	}
	defer sys.Close()
	if t.Storage == storage.Fenced && !sys.Tokens {
		return scenario.Result{}, fmt.Errorf("storage fenced: system %s grants no fencing tokens", t.System)
	}
	var initial map[string]int64
	if in, ok := wl.(workloads.Initializer); ok {
		initial = in.Initial()
	}
	if sys.Preset != nil && initial != nil {
		if err := sys.Preset(initial); err != nil {
			return scenario.Result{}, err
		}
	}
	st := store.NewServer(storage.Options{Mode: t.Storage, FenceReads: t.FenceReads, Initial: initial})
	r := &run{net: net, sys: sys, log: history.NewLog(), clients: t.ClientNames(), failed: make(chan struct{}),
		messages: messageNames(sys.Messages)}
	if err := r.checkSchedule(p.Schedule); err != nil {
		return scenario.Result{}, err
	}
	r.start = net.Now()
	if sys.Events != nil {
		sys.Events(r.systemEvent)
	}
	fs := r.installFaults(p.Schedule)
	var wg sync.WaitGroup
	for _, name := range r.clients {
		c := r.client(name, t.Seed, &store.Client{Net: net, Node: name, Server: st, Timeout: p.scaled(storageTimeout(t.Storage))})
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if v := recover(); v != nil {
					r.fail(fmt.Errorf("%w: client %s: %v", harness.ErrCrash, name, v))
					runtime.Goexit()
				}
			}()
			wl.Run(c)
		}()
	}
	stopErr := r.waitEnd(ctx, t.Time)
	end := min(r.now(), t.Time)
	r.done.Store(true)
	fs.stop()
	net.Close()
	if err := drain(&wg, p.cfg.Drain); err != nil {
		return scenario.Result{}, err
	}
	sys.Close()
	r.errMu.Lock()
	runErr := r.err
	r.errMu.Unlock()
	if runErr != nil {
		return scenario.Result{}, runErr
	}
	events := upTo(r.log.Events(), end)
	checked, err := harness.Judge(t, initial, events)
	if err != nil {
		return scenario.Result{}, err
	}
	figures := sys.Figures(r.start)
	figures["live"] = map[string]any{"replayable": NotReplayable, "versions": Versions(sys), "wall_time": end.Round(time.Millisecond).String(),
		"scale": p.cfg.Scale, "network": net.Stats()}
	res := scenario.Result{Test: t, Schedule: p.Schedule, FaultOutcomes: fs.outcomes(end), Events: events,
		Verdicts: checked.Verdicts, Skipped: checked.Skipped, Overall: models.Overall(checked.Verdicts),
		Summary: models.Summarize(events), SystemFigures: figures, Notes: lateWriteNotes(st.LateWrites(), r.start, end)}
	if end < t.Time {
		res.Ended = end // cut short: the faults due after it did not fire because of that
	}
	return res, stopErr
}

// waitEnd waits for the run's time d to pass, ctx to be done (the run is
// interrupted: ErrInterrupted) or the run to fail.
func (r *run) waitEnd(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-ctx.Done():
		return fmt.Errorf("%w after %v of %v", ErrInterrupted, r.now().Round(time.Millisecond), d)
	case <-r.failed:
	}
	return nil
}

// drain waits up to within for the client goroutines of wg to end: one
// still running then is a crash of the harness.
func drain(wg *sync.WaitGroup, within time.Duration) error {
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	select {
	case <-drained:
		return nil
	case <-time.After(within):
		return fmt.Errorf("%w: client goroutines still running %v after the run stopped", harness.ErrCrash, within)
	}
}

// serversDir is the directory the live servers run in: the run's (made
// absolute: their paths must not depend on the harness's working
// directory), or a temporary one that cleanup removes.
func (p *Prepared) serversDir() (dir string, cleanup func(), err error) {
	if p.cfg.Dir != "" {
		abs, err := filepath.Abs(p.cfg.Dir)
		if err != nil {
			return "", nil, fmt.Errorf("live servers' directory: %w", err)
		}
		return abs, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "locklab-live-")
	if err != nil {
		return "", nil, fmt.Errorf("live servers' directory: %w", err)
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// client is the workload's client name: its environment (seeded from seed),
// the system's lock (forking environments for its watchdogs), and the
// storage (stor, or the system's own), both gated by the run's stop.
func (r *run) client(name string, seed uint64, stor lockapi.Storage) workloads.Client {
	e := &env{r: r, name: name, rnd: sim.NewRand(seed, "client/"+name)}
	forks := 0
	var forkMu sync.Mutex
	fork := func() lockapi.Env {
		forkMu.Lock()
		defer forkMu.Unlock()
		forks++
		return &env{r: r, name: name, rnd: sim.NewRand(seed, fmt.Sprintf("client/%s/watchdog%d", name, forks))}
	}
	lock := r.sys.NewLock(liveform.Client{Env: e, Fork: fork,
		NewRecorder: func() *history.Recorder { return r.log.NewRecorder(name, clock{r}) },
		Stopped:     r.stopped})
	if r.sys.Storage != nil {
		stor = r.sys.Storage(lock)
	}
	return workloads.Client{Env: e, Lock: gatedLock{lock, e}, Store: gatedStorage{stor, e},
		Rec: r.log.NewRecorder(name, clock{r})}
}

// upTo keeps the events recorded up to end (a completion that came after the
// run stopped leaves its operation pending, as in the simulator), renumbered.
func upTo(events []history.Event, end time.Duration) []history.Event {
	out := make([]history.Event, 0, len(events))
	for _, e := range events {
		if time.Duration(e.Time) > end {
			continue
		}
		e.Index = len(out)
		out = append(out, e)
	}
	return out
}

// Versions are the versions of the libraries and servers a live system ran.
func Versions(sys *liveform.Deployed) map[string]string {
	out := map[string]string{"go": runtime.Version()}
	for k, v := range sys.Versions {
		out[k] = v
	}
	return out
}

// Repro runs a scenario variant live and compares its verdicts with the
// variant's expectations (and its assertions, which may measure times: with
// a Scale they see scaled times).
func Repro(ctx context.Context, v scenario.Variant, cfg Config) (harness.Outcome, error) {
	return harness.ReproWith(v, func(t scenario.Test) (scenario.Result, error) { return Run(ctx, t, cfg) })
}

// systemSpec is the live option table of a system (nil if none).
func systemSpec(name string) opt.Spec {
	form, _ := liveform.Find(name)
	return form.Options
}

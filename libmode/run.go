package libmode

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/cryptotest"
	"testing/synctest"
	"time"

	"github.com/locklab/locklab/backends/redis/engine"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
)

// PauseNote is what a pause means in library mode, written in every
// result: the client's connections and its critical section are frozen,
// but the library's own goroutines and timers (its retry tickers, its
// go-redis read timeouts, a watchdog that renews) keep running in virtual
// time, unlike a real stop-the-world pause.
const PauseNote = "a pause in library mode freezes the client's connections and its critical section; " +
	"the library's own goroutines and timers keep running (not a stop-the-world pause)"

// Result is one finished run of a library: the history the clients
// recorded, the verdicts of the project's checks on it, and the servers'
// record of grants and of the storage's writes behind them.
type Result struct {
	// Seed is the run's seed; Faults its faults in words.
	Seed   uint64
	Faults string
	// Config is the run's configuration, defaults filled in: what Shrink
	// and Replay run again.
	Config Config
	// Schedule is the run's faults in the schedule form (package nemesis's
	// JSON, what a schedule file holds), a PauseInCriticalSection written
	// for the client it paused; ScheduleErr says why a fault has none (a
	// rejecting cut, a crash with persistence), and Schedule then leaves
	// that fault out.
	Schedule    nemesis.Schedule
	ScheduleErr string
	// Events is the history the clients recorded, in canonical order.
	Events []history.Event
	// Verdicts are the project's checks on Events.
	Verdicts []models.Verdict
	// Grants is the instances' record of grants, in true time; Breaches
	// the promises it shows broken (two owners at once).
	Grants   []lockapi.Grant
	Breaches []lockapi.Breach
	// Writes is the storage's record; LostUpdates the writes that
	// overwrote a write their read had not seen.
	Writes      []lockapi.AppliedWrite
	LostUpdates []lockapi.LostUpdate
	// Outlived are the lost updates the servers' record explains: the
	// writer's holding had ended and another client's begun before its
	// write landed.
	Outlived []Outlived
	// JumpBreaches are the breaches a clock jump of an instance explains.
	JumpBreaches []JumpBreach
	// Kinds classify every overlap of two holders (scenario.KindGCPause, ...).
	Kinds []string
	// Virtual is the simulated time the run took; Wall the real time.
	Virtual, Wall time.Duration
	// Note is PauseNote when the run paused a client.
	Note string
}

// Verdict is the result of the named check ("critical-sections",
// "mutual-exclusion", ...), or "" when it did not run.
func (r Result) Verdict(check string) models.Result {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return v.Result
		}
	}
	return ""
}

// Summary renders the result for a person: seed, faults, verdicts, and
// the servers' record behind an invalid one.
func (r Result) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "library mode, seed %d, %v simulated in %v\n", r.Seed, r.Virtual, r.Wall.Round(time.Millisecond))
	if r.Faults != "" {
		fmt.Fprintf(&b, "faults: %s\n", r.Faults)
	}
	if r.Note != "" {
		fmt.Fprintf(&b, "note: %s\n", r.Note)
	}
	for _, v := range r.Verdicts {
		fmt.Fprintf(&b, "  %-18s %s", v.Check, v.Result)
		if v.Reason != "" && v.Result != models.Valid {
			fmt.Fprintf(&b, ": %s", firstLine(v.Reason))
		}
		b.WriteString("\n")
	}
	if len(r.Kinds) > 0 {
		fmt.Fprintf(&b, "kinds: %s\n", strings.Join(r.Kinds, ", "))
	}
	for i, br := range r.Breaches {
		if i == 3 {
			fmt.Fprintf(&b, "  ... %d more breaches\n", len(r.Breaches)-i)
			break
		}
		fmt.Fprintf(&b, "servers' record: %s\n", br)
	}
	for _, j := range r.JumpBreaches {
		fmt.Fprintf(&b, "servers' record: %s\n", j)
	}
	for i, o := range r.Outlived {
		if i == 3 {
			fmt.Fprintf(&b, "  ... %d more\n", len(r.Outlived)-i)
			break
		}
		fmt.Fprintf(&b, "servers' record: %s\n", o)
	}
	for i, u := range r.LostUpdates {
		if i == 3 {
			fmt.Fprintf(&b, "  ... %d more lost updates\n", len(r.LostUpdates)-i)
			break
		}
		fmt.Fprintf(&b, "storage's record: %s\n", u)
	}
	return b.String()
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// WriteHistory writes the history as JSON Lines to path (atomically:
// a temporary file renamed), for `locklab check` and the report.
func (r Result) WriteHistory(path string) error {
	var buf bytes.Buffer
	if err := history.Write(&buf, r.Events); err != nil {
		return fmt.Errorf("libmode: encode the history: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".history-*")
	if err != nil {
		return fmt.Errorf("libmode: write %s: %w", path, err)
	}
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fmt.Errorf("libmode: write %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("libmode: write %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("libmode: write %s: %w", path, err)
	}
	return nil
}

// Run runs cfg: a synctest bubble in which the instances, the storage and
// the network are the kernel's goroutine and each client runs the
// workload as goroutines of its own, calling the user's lock. It fails t
// for a configuration it cannot run, and reports (panicking with the
// goroutines and their calls) a run that stops making progress because
// something blocks outside the bubble. t must not be parallel: Run seeds
// crypto/rand for the whole process (testing/cryptotest).
func Run(t *testing.T, cfg Config) Result {
	t.Helper()
	cfg, err := cfg.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	cryptotest.SetGlobalRandom(t, cfg.Seed)
	if cfg.Prepare != nil {
		cfg.Prepare(cfg.Seed)
	}
	wd := startWatchdog(cfg.StuckAfter)
	defer wd.stop()
	began := time.Now()
	var res Result
	synctest.Test(t, func(t *testing.T) { res = runBubble(t, cfg, wd) })
	res.Wall = time.Since(began)
	return res
}

// runBubble is the run, inside the bubble.
func runBubble(t *testing.T, cfg Config, wd *watchdog) Result {
	w := &world{cfg: &cfg, start: time.Now(), wake: make(chan struct{}, 1), over: make(chan struct{}),
		dials: map[string]int{}, paused: map[string]*pause{}, storeSq: map[string]uint64{},
		cells: storage.NewCells(storage.Options{Mode: cfg.Storage, FenceReads: cfg.FenceReads}), grants: lockapi.NewGrantLog(cfg.Instances/2 + 1),
		writes: lockapi.NewWriteLog(), rec: newRecorder()}
	w.writes.Record(true)
	w.lanes = map[string]int64{}
	for i, name := range clientNames(cfg.Clients) {
		w.lanes[name] = int64(i + 1)
	}
	for _, name := range instanceNames(cfg.Instances) {
		w.servers = append(w.servers, &server{w: w, name: name, addr: fmt.Sprintf("10.0.0.%d:6379", len(w.servers)+1), db: engine.New()})
	}
	w.mu.Lock()
	for i, f := range cfg.Faults {
		f.install(w, i)
	}
	w.mu.Unlock()
	stop := make(chan struct{})
	kernelDone := make(chan struct{})
	wd.attach(w)
	go func() {
		defer close(kernelDone)
		w.run(stop)
	}()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	locks := make([]Lock, cfg.Clients)
	for i, name := range clientNames(cfg.Clients) {
		lc := &Client{w: w, name: name, Ctx: ctx}
		l, err := cfg.NewLock(lc)
		if err != nil {
			cancel()
			if cfg.Close != nil {
				for _, l := range locks[:i] {
					_ = cfg.Close(l)
				}
			}
			w.mu.Lock()
			w.stopped = true
			close(w.over)
			w.mu.Unlock()
			close(stop)
			<-kernelDone
			wg.Wait()
			t.Fatalf("libmode: build the lock of %s: %v", name, err)
		}
		locks[i] = l
		c := &client{w: w, name: name, process: i, lock: l,
			rnd: rand.New(rand.NewPCG(cfg.Seed, uint64(i+1)))}
		wg.Go(func() { c.loop(ctx) })
	}
	time.Sleep(cfg.Duration)
	cancel()
	drained := make(chan struct{})
	go func() { wg.Wait(); close(drained) }()
	drainTimer := time.NewTimer(cfg.Drain)
	select {
	case <-drained:
		drainTimer.Stop()
	case <-drainTimer.C:
		t.Errorf("libmode: %v of virtual time after the run ended, clients still had not returned "+
			"(a library that ignores its context or waits forever inside the bubble):\n%s",
			cfg.Drain, bubbleStacks(false))
	}
	if cfg.Close != nil {
		for _, l := range locks {
			if err := cfg.Close(l); err != nil {
				t.Logf("libmode: close a lock: %v", err)
			}
		}
	}
	w.mu.Lock()
	w.stopped = true
	close(w.over)
	w.mu.Unlock()
	close(stop)
	<-kernelDone
	wd.attach(nil) // the checks take the time they take: not a stuck run
	res := w.result(cfg)
	wd.attach(w)
	// The libraries' background goroutines (go-redis dials a pool's
	// connections in goroutines of its own, and backs off between tries on
	// timers) end on their own once every dial fails: virtual time keeps
	// running for them until Drain, then the bubble ends; synctest reports
	// any goroutine still blocked.
	time.Sleep(cfg.Drain)
	if left := leftovers(); left != "" {
		t.Errorf("libmode: goroutines of the bubble are still blocked after the run, so the bubble cannot end "+
			"(a library's background goroutines: close its clients in Config.Close):\n%s", left)
	}
	return res
}

// leftovers are the stacks of the bubble's goroutines still blocked at
// the end, but for the root and synctest's own.
func leftovers() string {
	var out []string
	for _, g := range strings.Split(bubbleStacks(false), "\n\n") {
		header, _, _ := strings.Cut(g, "\n")
		if strings.Contains(header, "[running") || strings.Contains(g, "testing/synctest.testingSynctestTest(") || strings.Contains(header, "[synctest.Run") ||
			strings.HasPrefix(g, "(no goroutine") {
			continue
		}
		out = append(out, g)
	}
	return strings.Join(out, "\n\n")
}

// result checks the history and gathers the record.
func (w *world) result(cfg Config) Result {
	events := w.rec.history()
	res := Result{Seed: cfg.Seed, Faults: faultList(cfg.Faults), Events: events, Virtual: w.elapsed(),
		Grants: w.grants.Grants(), Breaches: w.grants.Breaches(), Writes: w.writes.Writes(),
		LostUpdates: w.writes.LostUpdates()}
	hit := map[int]string{}
	for _, p := range w.holderPauses {
		if p.fired {
			hit[p.index] = p.client
		}
	}
	res.Config = cfg
	var err error
	if res.Schedule, err = ToSchedule(cfg, cfg.Faults, hit); err != nil {
		res.ScheduleErr = err.Error()
	}
	res.Outlived = outlived(cfg.Key, w.grants.Holdings(), res.LostUpdates)
	res.JumpBreaches = jumpBreaches(res.Breaches, res.Grants, cfg.Faults)
	for _, f := range cfg.Faults {
		switch f.(type) {
		case PauseClient, PauseInCriticalSection:
			res.Note = PauseNote
		}
	}
	mc := models.Config{InitialKnown: true, StorageFenced: cfg.Storage == storage.Fenced}
	checks, _, err := mc.Select(nil, events)
	if err != nil {
		res.Verdicts = []models.Verdict{{Check: "select", Result: models.Unknown, Reason: err.Error()}}
		return res
	}
	res.Verdicts = models.RunAll(checks, events)
	res.Kinds = scenario.ViolationKinds(events)
	return res
}

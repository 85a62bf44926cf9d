package scenario

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/workloads"
)

// Test is one run: everything that determines its history.
type Test struct {
	// System is the lock system's name (see system.All). Default "redis".
	System string `json:"system"`
	// SystemOptions are the system's options as key=value pairs.
	SystemOptions map[string]string `json:"system_options,omitempty"`
	// Workload is the workload's name (see workloads.All). Default "fenced-counter".
	Workload string `json:"workload"`
	// WorkloadOptions are the workload's options as key=value pairs.
	WorkloadOptions map[string]string `json:"workload_options,omitempty"`
	// Clients is the number of client nodes (c1, c2, ...). Default 5.
	Clients int `json:"clients"`
	// Storage is the storage mode. Default unfenced.
	Storage storage.Mode `json:"storage"`
	// FenceReads fences reads as well as writes (fenced storage only).
	FenceReads bool `json:"fence_reads,omitempty"`
	// Nemesis is "none", a comma-separated list of fault kinds (pause,
	// partition, clock, crash, delay, ...) drawn at random, or "random" (every
	// kind, swarm style). Ignored when Schedule is set. Default "none".
	Nemesis string `json:"nemesis"`
	// LiveComparable makes Nemesis "random" draw only the fault kinds the
	// system's live form can perform (liveform.RandomKinds), as a live run
	// does, so that a simulated run and a live run of one seed draw one
	// schedule. A live run always draws so.
	LiveComparable bool `json:"live_comparable,omitempty"`
	// Random tunes the random fault generator.
	Random nemesis.RandomConfig `json:"-"`
	// Schedule is an explicit fault schedule (a file or a scenario).
	Schedule *nemesis.Schedule `json:"schedule,omitempty"`
	// Seed drives every random choice.
	Seed uint64 `json:"seed"`
	// Time is the simulated duration. Default 60 s.
	Time time.Duration `json:"time"`
	// Checks are the checks to run, by name; empty means every check that
	// applies to the history (see models.Config.Select).
	Checks []string `json:"checks,omitempty"`
	// CheckBudget bounds the wall-clock time of each key's search in the
	// search-based checks. Default 60 s; Unbounded (negative) removes the
	// bound. A verdict that runs out of it depends on the machine.
	CheckBudget time.Duration `json:"check_budget"`
	// CheckSteps bounds each key's search in model steps, deterministically.
	// Default 0: models.DefaultSteps; -1: unbounded.
	CheckSteps int64 `json:"check_steps,omitempty"`
	// Liveness tunes the liveness check; zero fields take its defaults.
	Liveness Liveness `json:"liveness,omitzero"`
	// MaxHistoryEvents bounds the history a run may record (and so its
	// memory). Default 0: DefaultMaxHistoryEvents. See Prepared.RunWatched.
	MaxHistoryEvents int64 `json:"max_history_events,omitempty"`
	// Cuts is what a partition does with the messages it catches: "drop"
	// them (datagram semantics, sim.CutDrops) or "hold" them until the heal
	// (connection semantics, sim.CutHolds: a TCP connection across the cut,
	// reset if the cut outlasts sim.DefaultConnTimeout). Default "" is
	// "hold": every client modelled here talks over TCP. A single lossy
	// cut is a partition fault with Lossy set.
	Cuts string `json:"cuts,omitempty"`
}

// CutMode is the simulator's mode for Cuts.
func (t Test) CutMode() (sim.CutMode, error) {
	switch t.Cuts {
	case "drop":
		return sim.CutDrops, nil
	case "", "hold":
		return sim.CutHolds, nil
	}
	return 0, fmt.Errorf("cuts: %q is neither drop nor hold", t.Cuts)
}

// Unbounded is the CheckBudget that lets search-based checks run to the end.
const Unbounded time.Duration = -1

// WithDefaults fills in the documented defaults: a zero field means "not
// given" (the zero Test is the default test). A caller that takes typed values
// (the command line) rejects a typed zero before: it is never replaced.
func (t Test) WithDefaults() Test {
	if t.System == "" {
		t.System = "redis"
	}
	if t.Workload == "" {
		t.Workload = "fenced-counter"
	}
	if t.Clients == 0 {
		t.Clients = 5
	}
	if t.Storage == "" {
		t.Storage = storage.Unfenced
	}
	if t.Nemesis == "" {
		t.Nemesis = "none"
	}
	if t.Time == 0 {
		t.Time = 60 * time.Second
	}
	if t.CheckBudget == 0 {
		t.CheckBudget = 60 * time.Second
	}
	return t
}

// Validate reports a test that cannot run, naming the offending field.
func (t Test) Validate() error {
	if _, err := system.Find(t.System); err != nil {
		return err
	}
	if _, err := workloads.Find(t.Workload); err != nil {
		return err
	}
	if t.Clients < 1 || t.Clients > 1000 {
		return fmt.Errorf("clients: %d is out of range (1..1000)", t.Clients)
	}
	if _, err := storage.ParseMode(string(t.Storage)); err != nil {
		return err
	}
	if t.Time <= 0 {
		return fmt.Errorf("time: must be positive, got %v", t.Time)
	}
	if t.Schedule == nil {
		if _, err := t.RandomKinds(); err != nil {
			return fmt.Errorf("nemesis: %w", err)
		}
	}
	if t.CheckBudget < 0 && t.CheckBudget != Unbounded {
		return fmt.Errorf("check_budget: %v is negative (Unbounded removes the bound)", t.CheckBudget)
	}
	if t.CheckSteps < -1 {
		return fmt.Errorf("check_steps: %d is not a step budget (positive; 0: the default; -1: unbounded)", t.CheckSteps)
	}
	if t.FenceReads && t.Storage != storage.Fenced {
		return fmt.Errorf("fence_reads: only a fenced storage fences reads (storage is %s)", t.Storage)
	}
	if _, err := t.SelectChecks(); err != nil {
		return err
	}
	if err := t.Liveness.Validate(); err != nil {
		return err
	}
	if t.MaxHistoryEvents < 0 {
		return fmt.Errorf("max history events: must be positive, got %d", t.MaxHistoryEvents)
	}
	if _, err := t.CutMode(); err != nil {
		return err
	}
	return nil
}

// RandomKinds parses Nemesis: nil for "none".
func (t Test) RandomKinds() ([]nemesis.Kind, error) {
	switch t.Nemesis {
	case "none", "":
		return nil, nil
	case "random":
		return nemesis.Kinds, nil
	}
	return nemesis.ParseKinds(t.Nemesis)
}

// ClientNames are the names of the client nodes.
func (t Test) ClientNames() []string {
	out := make([]string, t.Clients)
	for i := range out {
		out[i] = fmt.Sprintf("c%d", i+1)
	}
	return out
}

// Args renders the test as `locklab run` flags (without --nemesis-file, which
// the caller adds when the schedule came from a file).
func (t Test) Args() []string {
	args := []string{"--system", t.System, "--workload", t.Workload, "--clients", fmt.Sprint(t.Clients),
		"--time", t.Time.String(), "--seed", fmt.Sprint(t.Seed), "--storage", string(t.Storage)}
	if t.FenceReads {
		args = append(args, "--fence-reads")
	}
	if t.Cuts == "drop" {
		args = append(args, "--cuts", "drop")
	}
	if t.Schedule == nil {
		args = append(args, "--nemesis", t.Nemesis)
		if t.LiveComparable {
			args = append(args, "--live-comparable")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(t.SystemOptions)) {
		args = append(args, "-o", k+"="+t.SystemOptions[k])
	}
	for _, k := range slices.Sorted(maps.Keys(t.WorkloadOptions)) {
		args = append(args, "-w", k+"="+t.WorkloadOptions[k])
	}
	if len(t.Checks) > 0 {
		args = append(args, "--checks", strings.Join(t.Checks, ","))
	}
	switch {
	case t.CheckBudget < 0:
		args = append(args, "--check-budget", "0")
	case t.CheckBudget != 60*time.Second:
		args = append(args, "--check-budget", t.CheckBudget.String())
	}
	if t.CheckSteps != 0 && t.CheckSteps != models.DefaultSteps {
		args = append(args, "--check-steps", fmt.Sprint(t.CheckSteps))
	}
	args = append(args, t.Liveness.Args()...)
	if t.MaxHistoryEvents != 0 {
		args = append(args, "--max-history-events", fmt.Sprint(t.MaxHistoryEvents))
	}
	return args
}

// MarshalJSON writes a test with its durations in Go's notation ("1m0s"), as
// schedule files write theirs, so that results.json and the report's
// configuration read as durations rather than raw nanoseconds; an unbounded
// check budget is "unbounded".
func (t Test) MarshalJSON() ([]byte, error) {
	type plain Test // without this method
	budget := t.CheckBudget.String()
	if t.CheckBudget == Unbounded {
		budget = "unbounded"
	}
	return json.Marshal(struct {
		plain
		Time        string `json:"time"`
		CheckBudget string `json:"check_budget"`
	}{plain(t), t.Time.String(), budget})
}

// Clone is t with its own copies of its maps and slices (not of its
// schedule: hunts run without one).
func (t Test) Clone() Test {
	t.SystemOptions = maps.Clone(t.SystemOptions)
	t.WorkloadOptions = maps.Clone(t.WorkloadOptions)
	t.Checks = slices.Clone(t.Checks)
	t.Random.Kinds = slices.Clone(t.Random.Kinds)
	return t
}

// DefaultMaxHistoryEvents is the default bound on a run's history: about 4
// hours of the default test (5 clients, fenced-counter, 68 events a simulated
// second) and 1.8 GB of memory at BytesPerEvent.
const DefaultMaxHistoryEvents = 1_000_000

// HistoryLimit is the bound on the run's history: MaxHistoryEvents, or
// DefaultMaxHistoryEvents when it is 0.
func (t Test) HistoryLimit() int64 {
	if t.MaxHistoryEvents > 0 {
		return t.MaxHistoryEvents
	}
	return DefaultMaxHistoryEvents
}

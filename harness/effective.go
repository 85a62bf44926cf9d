package harness

import (
	"maps"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
)

// Effective is the configuration a run used with every value spelled out,
// defaults included: what results.json records as "config", so that a run
// directory says what ran without knowing this version's defaults.
type Effective struct {
	System string `json:"system"`
	// SystemOptions are every option of the system, given or default.
	SystemOptions map[string]string `json:"system_options"`
	Workload      string            `json:"workload"`
	// WorkloadOptions are every option of the workload, given or default.
	WorkloadOptions map[string]string `json:"workload_options"`
	Clients         int               `json:"clients"`
	// Time is the simulated duration ("1m0s").
	Time       string `json:"time"`
	Seed       uint64 `json:"seed"`
	Storage    string `json:"storage"`
	FenceReads bool   `json:"fence_reads"`
	// Nemesis is "none", "random", the fault kinds drawn at random, or
	// "schedule" for an explicit schedule (a file or a scenario's), given in
	// Schedule.
	Nemesis  string            `json:"nemesis"`
	Schedule *nemesis.Schedule `json:"schedule,omitempty"`
	// Checks are the checks as asked ("default": every one that applies).
	Checks []string `json:"checks"`
	// CheckSteps is the step budget of each key's search (-1: unbounded).
	CheckSteps int64 `json:"check_steps"`
	// CheckBudget is the wall-clock budget of each key's search ("1m0s", or
	// "unbounded").
	CheckBudget string `json:"check_budget"`
}

// Effective returns the configuration of test t with every default filled in.
func (t Test) Effective() Effective {
	t = t.WithDefaults()
	e := Effective{
		System:          t.System,
		SystemOptions:   withDefaults(systemOptionDefaults[t.System], t.SystemOptions),
		Workload:        t.Workload,
		WorkloadOptions: withDefaults(workloadOptionDefaults[t.Workload], t.WorkloadOptions),
		Clients:         t.Clients,
		Time:            t.Time.String(),
		Seed:            t.Seed,
		Storage:         string(t.Storage),
		FenceReads:      t.FenceReads,
		Nemesis:         t.Nemesis,
		Checks:          t.Checks,
		CheckSteps:      t.CheckSteps,
		CheckBudget:     "unbounded",
	}
	if t.Schedule != nil {
		e.Nemesis, e.Schedule = "schedule", t.Schedule
	}
	if len(e.Checks) == 0 {
		e.Checks = []string{"default"}
	}
	switch {
	case e.CheckSteps == 0:
		e.CheckSteps = models.DefaultSteps
	case e.CheckSteps < 0:
		e.CheckSteps = -1
	}
	if t.CheckBudget > 0 {
		e.CheckBudget = t.CheckBudget.String()
	}
	return e
}

// withDefaults is defaults overlaid with the given options.
func withDefaults(defaults, given map[string]string) map[string]string {
	out := maps.Clone(defaults)
	if out == nil {
		out = map[string]string{}
	}
	maps.Copy(out, given)
	return out
}

// systemOptionDefaults are the defaults of every system option in the form
// -o takes. TestOptionDefaultsAreTheCodesDefaults proves them equal to each
// backend's DefaultOptions.
var systemOptionDefaults = map[string]map[string]string{
	"control": {},
	"redis": {
		"ttl": "10s", "release": "lua", "watchdog": "false", "fencing": "false", "reentrancy": "none",
		"budget-clock": "mono", "request-timeout": "200ms", "backoff-max": "100ms", "persistence": "none",
		"expiry-clock": "wall", "restart-delay": "0s", "replicas": "0", "down-after": "3s", "wait": "0",
		"wait-timeout": "1s",
	},
	"redlock": {
		"ttl": "10s", "instances": "5", "request-timeout": "50ms", "drift-factor": "0.01", "elapsed-clock": "mono",
		"token": "value", "fanout": "parallel", "backoff-max": "100ms", "persistence": "none", "expiry-clock": "wall",
		"restart-delay": "0s",
	},
	"raftkv": {
		"nodes": "3", "lease": "10s", "watchdog": "true", "stamp": "leader", "unlock": "count", "tick": "50ms",
		"heartbeat-ticks": "2", "election-timeout": "1s", "prevote": "true", "initial-leader": "", "fsync": "always",
		"fsync-interval": "1s", "request-timeout": "500ms", "retry-budget": "3s", "backoff-max": "100ms",
	},
}

// counterDefaults are the options the counter-like workloads share.
var counterDefaults = map[string]string{"keys": "1", "hold": "100ms", "think": "100ms", "wait": "5s"}

// workloadOptionDefaults are the defaults of every workload option in the
// form -w takes (proved by TestOptionDefaultsAreTheCodesDefaults).
var workloadOptionDefaults = map[string]map[string]string{
	"fenced-counter": counterDefaults,
	"list-append":    withDefaults(counterDefaults, map[string]string{"max": "8"}),
	"reentrant":      withDefaults(counterDefaults, map[string]string{"depth": "2"}),
	"stock": {"items": "4", "quantities": "3,2", "stagger": "10ms", "hold": "100ms", "think": "100ms",
		"wait": "5s"},
}

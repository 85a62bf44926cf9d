package scenario

import (
	"maps"

	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/workloads"
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
		SystemOptions:   effectiveOptions(t.SystemOptions, SystemOptionTable(t.System)),
		Workload:        t.Workload,
		WorkloadOptions: effectiveOptions(t.WorkloadOptions, WorkloadOptionTable(t.Workload)),
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

// effectiveOptions is every option of a table with its value, defaults
// included, after setting given. A system or workload that is not registered,
// or options its table refuses (a test that did not validate), leave the
// given options as they are: the record never invents a value.
func effectiveOptions(given map[string]string, table func() (opt.Spec, error)) map[string]string {
	out := maps.Clone(given)
	if out == nil {
		out = map[string]string{}
	}
	settings, ok := tableSettings(table, given)
	if !ok {
		return out
	}
	for _, s := range settings {
		out[s.Name] = s.Value
	}
	return out
}

// tableSettings is every option of a table with its value after setting
// given; ok is false when the system or workload is not registered or its
// table refuses given.
func tableSettings(table func() (opt.Spec, error), given map[string]string) (settings []opt.Setting, ok bool) {
	spec, err := table()
	if err != nil || spec == nil {
		return nil, false
	}
	settings, err = spec.Effective(given)
	return settings, err == nil
}

// NonDefault is the options of given whose value differs from the table's
// default (all of them when the table is unknown, nil when none differs): a
// configuration named the same whichever way it was written.
func NonDefault(given map[string]string, table func() (opt.Spec, error)) map[string]string {
	defaults, ok := tableSettings(table, nil)
	if !ok {
		return given
	}
	out := maps.Clone(given)
	for _, s := range defaults {
		if v, ok := out[s.Name]; ok && v == s.Value {
			delete(out, s.Name)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// SystemOptionTable looks up the option table of the system called name, for
// NonDefault.
func SystemOptionTable(name string) func() (opt.Spec, error) {
	return func() (opt.Spec, error) { s, err := system.Find(name); return s.Options, err }
}

// WorkloadOptionTable looks up the option table of the workload called
// name, for NonDefault.
func WorkloadOptionTable(name string) func() (opt.Spec, error) {
	return func() (opt.Spec, error) { w, err := workloads.Find(name); return w.Options, err }
}

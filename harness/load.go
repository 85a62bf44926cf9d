package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/locklab/locklab/internal/jsonerr"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
)

// LoadTest reads the test a run directory ran: its configuration from
// results.json ("config", the effective configuration) and its faults from
// schedule.json. The schedule that ran is the test's schedule, whether it was
// drawn at random or given, so the loaded test replays the run without
// drawing again. Options equal to their defaults are left out, so that the
// test's command line names only what differs.
func LoadTest(dir string) (scenario.Test, error) {
	path := filepath.Join(dir, reports.ResultsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return scenario.Test{}, fmt.Errorf("read run directory: %w", err)
	}
	var res struct {
		Format string             `json:"format"`
		Config scenario.Effective `json:"config"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		return scenario.Test{}, fmt.Errorf("%s: %w", path, jsonerr.Plain(err))
	}
	if res.Format != "locklab-results" {
		return scenario.Test{}, fmt.Errorf("%s: field \"format\" is %q, want \"locklab-results\"", path, res.Format)
	}
	e := res.Config
	t := scenario.Test{System: e.System, Workload: e.Workload, Clients: e.Clients, Seed: e.Seed, Storage: storage.Mode(e.Storage),
		FenceReads: e.FenceReads, Nemesis: e.Nemesis, CheckSteps: e.CheckSteps}
	if t.Time, err = time.ParseDuration(e.Time); err != nil {
		return scenario.Test{}, fmt.Errorf("%s: config.time %q: not a duration", path, e.Time)
	}
	switch e.CheckBudget {
	case "unbounded":
		t.CheckBudget = scenario.Unbounded
	default:
		if t.CheckBudget, err = time.ParseDuration(e.CheckBudget); err != nil {
			return scenario.Test{}, fmt.Errorf("%s: config.check_budget %q: not a duration", path, e.CheckBudget)
		}
	}
	if !(len(e.Checks) == 1 && e.Checks[0] == "default") {
		t.Checks = e.Checks
	}
	t.SystemOptions = scenario.NonDefault(e.SystemOptions, scenario.SystemOptionTable(t.System))
	t.WorkloadOptions = scenario.NonDefault(e.WorkloadOptions, scenario.WorkloadOptionTable(t.Workload))
	if e.Nemesis != "none" {
		s, err := nemesis.ReadFile(filepath.Join(dir, reports.ScheduleFile))
		if err != nil {
			return scenario.Test{}, err
		}
		t.Schedule = &s
	}
	return t.WithDefaults(), nil
}

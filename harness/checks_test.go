package harness

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
)

func checksOf(r scenario.Result) (ran []string, skipped map[string]string) {
	skipped = map[string]string{}
	for _, v := range r.Verdicts {
		ran = append(ran, v.Check)
	}
	for _, s := range r.Skipped {
		skipped[s.Check] = s.Reason
	}
	return ran, skipped
}

func TestDefaultChecksAreTheOnesThatApply(t *testing.T) {
	tests := []struct {
		name    string
		test    scenario.Test
		ran     []string
		skipped []string
	}{
		{"redis without tokens", scenario.Test{System: "redis", Seed: 1, Time: 5 * time.Second},
			[]string{"critical-sections", "mutual-exclusion", "lease", "liveness"}, []string{"mutex", "fencing-tokens"}},
		{"redis with tokens and fenced storage", scenario.Test{System: "redis", SystemOptions: map[string]string{"fencing": "true"},
			Storage: storage.Fenced, Seed: 1, Time: 5 * time.Second},
			[]string{"critical-sections", "mutual-exclusion", "lease", "fencing-tokens", "liveness"}, []string{"mutex"}},
		{"control lock without leases", scenario.Test{System: "control", Seed: 1, Time: 2 * time.Second},
			[]string{"critical-sections", "mutual-exclusion", "mutex", "liveness"}, []string{"lease", "fencing-tokens"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Run(tc.test)
			require.NoError(t, err)
			ran, skipped := checksOf(r)
			assert.Equal(t, tc.ran, ran)
			for _, s := range tc.skipped {
				assert.NotEmpty(t, skipped[s], "%s is skipped with a reason", s)
			}
			assert.NotEqual(t, models.Unknown, r.Overall, "a default run is not unknown because a check had nothing to look at")
		})
	}
}

func TestNamedChecksRunEvenWhenTheyCannotDecide(t *testing.T) {
	r, err := Run(scenario.Test{System: "redis", Seed: 1, Time: 3 * time.Second, Checks: []string{"fencing-tokens", "mutex"}})
	require.NoError(t, err)
	require.Len(t, r.Verdicts, 2)
	assert.Equal(t, models.Unknown, r.Verdicts[0].Result)
	assert.Contains(t, r.Verdicts[0].Reason, "no acquire was granted a fencing token")
	assert.Equal(t, judge.ExitUnknown, judge.ExitCode(r.Verdicts))
	_, err = Run(scenario.Test{System: "redis", Seed: 1, Time: time.Second, Checks: []string{"vibes"}})
	assert.ErrorContains(t, err, `unknown check "vibes"`)
}

func TestCheckConfigFollowsTheTest(t *testing.T) {
	cfg := judge.CheckConfig(scenario.Test{Workload: "stock", Storage: storage.Fenced, FenceReads: true, CheckSteps: 7, CheckBudget: time.Second},
		map[string]int64{"item": 4})
	assert.Equal(t, models.ResourceStock, cfg.Resource)
	assert.True(t, cfg.StorageFenced)
	assert.True(t, cfg.ReadsFenced)
	assert.Equal(t, models.Budget{Steps: 7, Time: time.Second}, cfg.Budget)
	assert.True(t, cfg.InitialKnown, "the simulator's storage starts at known values")
	assert.Equal(t, int64(4), cfg.Initial["item"])
	assert.Equal(t, time.Duration(0), judge.CheckConfig(scenario.Test{CheckBudget: scenario.Unbounded}, nil).Budget.Time)
}

func TestInvalidRunsAttachTheirVisualization(t *testing.T) {
	r, err := Run(scenario.Test{System: "control", Seed: 1, Time: 2 * time.Second})
	require.NoError(t, err)
	run := judge.Report(r, "locklab run ...")
	var labels []string
	for _, a := range run.Attachments {
		labels = append(labels, a.Label)
		var buf bytes.Buffer
		require.NoError(t, a.Write(&buf))
		assert.Contains(t, buf.String(), "<html")
	}
	assert.Equal(t, []string{"porcupine:critical-sections", "porcupine:mutex"}, labels)
	rec := run.Extra["checks"].(judge.ChecksRecord)
	assert.Equal(t, []string{"critical-sections", "mutual-exclusion", "mutex", "liveness"}, rec.Ran)
	assert.Contains(t, rec.Budget, "steps")
}

func TestListAppendIsJudgedAsAList(t *testing.T) {
	pause, err := nemesis.Parse([]byte(`{"faults": [{"kind": "pause", "targets": ["c1"], "duration": "15s", "after": {"node": "c1", "f": "read"}}]}`), "gc.json")
	require.NoError(t, err)
	tests := []struct {
		name string
		test scenario.Test
		want map[string]models.Result
	}{
		{"control lock loses appends", scenario.Test{System: "control", Workload: "list-append", Seed: 1, Time: 5 * time.Second},
			map[string]models.Result{"critical-sections": models.Invalid}},
		{"redis without faults", scenario.Test{System: "redis", Workload: "list-append", Seed: 1, Time: 10 * time.Second},
			map[string]models.Result{"critical-sections": models.Valid, "mutual-exclusion": models.Valid}},
		{"redis, holder paused past its lease", scenario.Test{System: "redis", Workload: "list-append", Seed: 1, Time: 30 * time.Second, Schedule: &pause},
			map[string]models.Result{"mutual-exclusion": models.Invalid, "lease": models.Valid}},
		{"redis fenced, holder paused past its lease", scenario.Test{System: "redis", Workload: "list-append", Seed: 1, Time: 30 * time.Second,
			Schedule: &pause, SystemOptions: map[string]string{"fencing": "true"}, Storage: storage.Fenced},
			map[string]models.Result{"critical-sections": models.Valid, "fencing-tokens": models.Valid}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Run(tc.test)
			require.NoError(t, err)
			got := map[string]models.Verdict{}
			for _, v := range r.Verdicts {
				got[v.Check] = v
			}
			for check, want := range tc.want {
				assert.Equal(t, want, got[check].Result, "%s: %s", check, got[check].Reason)
			}
			assert.Greater(t, r.Summary.Ops["append"].OK, 10)
		})
	}
	r, err := Run(scenario.Test{System: "control", Workload: "list-append", Seed: 1, Time: 5 * time.Second})
	require.NoError(t, err)
	assert.Contains(t, r.Verdicts[0].Reason, "lost append")
}

// raft-audit is a check a raftkv run can name like any other: added with
// +raft-audit, alone, or left out of an exact list; another system, or a
// recorded history, cannot run it, and says why.
func TestAuditsAreChecksARunCanName(t *testing.T) {
	tests := []struct {
		checks []string
		ran    []string
	}{
		{nil, []string{"critical-sections", "mutual-exclusion", "lease", "fencing-tokens", "liveness", "raft-audit"}},
		{[]string{"+raft-audit"}, []string{"critical-sections", "mutual-exclusion", "lease", "fencing-tokens", "liveness", "raft-audit"}},
		{[]string{"raft-audit"}, []string{"raft-audit"}},
		{[]string{"raft-audit", "+lease"}, []string{"lease", "raft-audit"}},
		{[]string{"lease"}, []string{"lease"}},
		{[]string{"lease", "+raft-audit"}, []string{"lease", "raft-audit"}},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.checks), func(t *testing.T) {
			r, err := Run(scenario.Test{System: "raftkv", Storage: storage.Fenced, Seed: 1, Time: 2 * time.Second, Checks: tc.checks})
			require.NoError(t, err)
			ran, _ := checksOf(r)
			assert.Equal(t, tc.ran, ran)
		})
	}
	assert.Contains(t, scenario.RunCheckNames(), "raft-audit")
	_, err := Run(scenario.Test{System: "raftkv", Checks: []string{"vibes"}})
	assert.ErrorContains(t, err, `unknown check "vibes" (known: critical-sections, mutual-exclusion, lease, mutex, fencing-tokens, on-call, liveness, raft-audit)`)
	_, err = Run(scenario.Test{System: "redlock", Checks: []string{"raft-audit"}})
	assert.ErrorContains(t, err, `check "raft-audit" audits the servers of raftkv; system redlock has no such servers (its audits: none)`)
	_, err = judge.CheckHistory(models.Config{}, []string{"+raft-audit"}, nil)
	assert.ErrorContains(t, err, `check "raft-audit" audits the servers of a simulated run, not a history: it runs in 'locklab run --system raftkv'`)
}

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/scenario"
)

func TestReportRegeneratesTheSameFiles(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	code, stdout, _ := capture(t, "run", "--nemesis", "pause", "--seed", "7", "--time", "60s", "--out", dir)
	require.Equal(t, judge.ExitInvalid, code, stdout)
	assert.Contains(t, stdout, "report: "+filepath.Join(dir, reports.ReportFile))
	files := []string{reports.ReportFile, "timeline.png", "timeline.svg", "latency-raw.png", "latency-quantiles.svg", "rate.png"}
	before := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		before[f] = b
		require.NoError(t, os.Remove(filepath.Join(dir, f)))
	}
	code, stdout, stderr := capture(t, "report", dir)
	require.Equal(t, judge.ExitValid, code, stderr)
	assert.Contains(t, stdout, "report: "+filepath.Join(dir, reports.ReportFile))
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		assert.True(t, bytes.Equal(before[f], b), "%s regenerated from the run directory differs from the one the run wrote", f)
	}
}

func TestReportUsageErrors(t *testing.T) {
	empty := t.TempDir()
	// A store of runs as locklab writes it: index.html, latest, and one
	// directory per test with its own latest link.
	store := t.TempDir()
	named := filepath.Join(store, "redis-run")
	run := filepath.Join(named, "20260101T000000.000Z")
	require.NoError(t, os.MkdirAll(run, 0o755))
	require.NoError(t, os.Symlink("20260101T000000.000Z", filepath.Join(named, "latest")))
	require.NoError(t, os.Symlink(filepath.Join("redis-run", "20260101T000000.000Z"), filepath.Join(store, "latest")))
	require.NoError(t, os.WriteFile(filepath.Join(store, "index.html"), nil, 0o644))
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "report needs a run directory (or --index for the index page of the store of runs)"},
		{[]string{"report", "a", "b"}, "locklab: report takes one run directory, got 2: a b (--index writes the page listing them all)\n"},
		{[]string{"report", "/nonexistent/run"}, "locklab: report: /nonexistent/run does not exist\n"},
		{[]string{"report", empty}, empty + " is not a run directory: it has no history.jsonl"},
		{[]string{"report", store}, "locklab: report: " + store + " is the store of runs, not a run directory: 'locklab report " +
			filepath.Join(store, "latest") + "' regenerates the newest run's report, 'locklab report --index " + store + "' the index page\n"},
		{[]string{"report", named}, "locklab: report: " + named + " holds the runs of one test, not a run directory: 'locklab report " +
			filepath.Join(named, "latest") + "' regenerates the newest one's report\n"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := capture(t, tc.args...)
			assert.Equal(t, judge.ExitUsage, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

func TestReportOfABrokenRunDirectoryNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, reports.HistoryFile), []byte(`{"index":0,"time":0,"process":0,"type":"ok","f":"read"}`+"\n"), 0o644))
	code, _, stderr := capture(t, "report", dir)
	assert.Equal(t, judge.ExitCrash, code)
	assert.Contains(t, stderr, filepath.Join(dir, reports.HistoryFile)+":1:")
}

// BenchmarkReport measures the report and plots of a stored run: a 60 s run
// with 5 clients and a 30-minute run with 20 clients, both with random faults.
// "regenerate" is `locklab report` (reading results.json and the history,
// then writing report.html and the plots); "write" is the report alone, as a
// run writes it. The run itself is simulated before the timer starts.
func BenchmarkReport(b *testing.B) {
	for _, bc := range []struct {
		name    string
		clients int
		time    time.Duration
	}{{"60s-5clients", 5, time.Minute}, {"30m-20clients", 20, 30 * time.Minute}} {
		res, err := harness.Run(scenario.Test{System: "redis", Workload: "fenced-counter", Clients: bc.clients,
			Time: bc.time, Seed: 3, Nemesis: "random"})
		require.NoError(b, err)
		run := judge.Report(res, "locklab run")
		dir := b.TempDir()
		require.NoError(b, reports.WriteDir(dir, run))
		b.Run(bc.name+"/regenerate", func(b *testing.B) {
			for b.Loop() {
				if _, err := reports.Regenerate(dir); err != nil {
					b.Fatal(err)
				}
			}
			reportSizes(b, dir, len(res.Events))
		})
		b.Run(bc.name+"/write", func(b *testing.B) {
			for b.Loop() {
				if _, err := reports.WriteReport(dir, run, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// reportSizes reports the history's events and the sizes of the report's files.
func reportSizes(b *testing.B, dir string, events int) {
	var html, png, svg int64
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		info, _ := e.Info()
		switch filepath.Ext(e.Name()) {
		case ".html":
			html += info.Size()
		case ".png":
			png += info.Size()
		case ".svg":
			svg += info.Size()
		}
	}
	b.ReportMetric(float64(events), "events")
	b.ReportMetric(float64(html)/1024, "html-KB")
	b.ReportMetric(float64(png)/1024, "png-KB")
	b.ReportMetric(float64(svg)/1024, "svg-KB")
}

package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/models"
)

// gcPauseGrants is the servers' record of the GC pause run: c1's grant,
// whose lease ran out while it was paused, then c2's, released.
func gcPauseGrants() []ServerGrant {
	return []ServerGrant{
		{Scope: "redis", Server: "redis", Key: "k", Owner: "c1-1", Client: "c1", At: ms(1.5), Until: ms(10001.5)},
		{Scope: "redis", Server: "redis", Key: "k", Owner: "c2-1", Client: "c2", At: ms(10001.6), Until: ms(20001.6), Released: ms(10007.5)},
	}
}

// laterGrants are n grants of c3, each released after 50 ms, from 20 s on:
// after the GC pause run's counterexamples.
func laterGrants(n int) []ServerGrant {
	var out []ServerGrant
	for i := range n {
		at := 20000 + 100*float64(i)
		out = append(out, ServerGrant{Scope: "redis", Server: "redis", Key: "k", Owner: fmt.Sprintf("c3-%d", i+1), Client: "c3",
			At: ms(at), Until: ms(at + 10000), Released: ms(at + 50)})
	}
	return out
}

// grantRows are the rows of the servers' record a page shows, as text.
func grantRows(page string) []string {
	re := regexp.MustCompile(`<tr class="grant[^"]*">(.*?)</tr>`)
	tags := regexp.MustCompile(`<td[^>]*>`)
	var rows []string
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		rows = append(rows, strings.TrimSuffix(strings.ReplaceAll(tags.ReplaceAllString(m[1], ""), "</td>", " | "), " | "))
	}
	return rows
}

func TestReportShowsWhatTheServersGranted(t *testing.T) {
	valid := func(r Run) Run {
		r.Verdicts = []models.Verdict{{Check: "mutual-exclusion", Result: models.Valid}}
		r.Overall, r.ExitCode = models.Valid, 0
		return r
	}
	asIs := func(r Run) Run { return r }
	tests := []struct {
		name   string
		record *ServersRecord
		run    func(Run) Run
		// rows are the rows shown (all of them, or the first and the last
		// when first/last are set); shown and more the notes above and
		// under the table ("": none).
		rows        []string
		first, last string
		count       int
		shown, more string
		// broken counts the rows shown in red: grants that ended while
		// their owner held them.
		broken int
		says   string
	}{
		{
			name: "a short record is shown whole, each grant with how it ended",
			record: &ServersRecord{Quorum: 1, End: ms(60000), Grants: append(gcPauseGrants(),
				ServerGrant{Server: "db", Key: "k", Owner: "c3-1", Client: "c3", At: ms(30000)},
				ServerGrant{Server: "redis", Key: "k", Owner: "c3-2", Client: "c3", At: ms(40000), Until: ms(70000)},
				ServerGrant{Server: "redis", Key: "k", Owner: "c4-1", Client: "c4", At: ms(41000), Until: ms(50000), RemovedBy: "c5", Removed: ms(42000)},
				ServerGrant{Server: "db", Key: "k", Owner: "c5-1", Client: "c5", At: ms(43000), Released: ms(44000), RemovedBy: "db", Removed: ms(44000), Revoked: true},
				ServerGrant{Server: "redis", Key: "k", Owner: "c6-1", Client: "c6", At: ms(45000), Until: ms(46000), RemovedBy: "c5", Removed: ms(47000)})},
			run: asIs,
			rows: []string{
				"redis | k | c1-1 | c1 | 0.002s | 10.002s | lease ran out at 10.002s",
				"redis | k | c2-1 | c2 | 10.002s | 20.002s | released at 10.008s",
				"db | k | c3-1 | c3 | 30.000s | no lease | held to the end",
				"redis | k | c3-2 | c3 | 40.000s | 70.000s | held to the end",
				"redis | k | c4-1 | c4 | 41.000s | 50.000s | removed by c5 at 42.000s",
				"db | k | c5-1 | c5 | 43.000s | no lease | revoked by db at 44.000s",
				"redis | k | c6-1 | c6 | 45.000s | 46.000s | removed by c5 at 47.000s",
			},
			broken: 2,
			says:   "Red rows are grants that ended while their owner held them",
		},
		{
			name:   "a long record shows the grants in force during the invalid verdicts' counterexamples",
			record: &ServersRecord{Quorum: 1, End: ms(60000), Grants: append(gcPauseGrants(), laterGrants(40)...)},
			run:    asIs,
			rows: []string{
				"redis | k | c1-1 | c1 | 0.002s | 10.002s | lease ran out at 10.002s",
				"redis | k | c2-1 | c2 | 10.002s | 20.002s | released at 10.008s",
			},
			shown: "Shown: the 2 grants in force during the counterexamples of critical-sections and mutual-exclusion (0.002s to 15.007s).",
			more:  "40 more grants not shown: the whole record (42 grants) is servers_record in results.json.",
		},
		{
			name:   "a long record of a run without an invalid verdict shows its first 30 grants",
			record: &ServersRecord{Quorum: 1, End: ms(60000), Grants: laterGrants(45)},
			run:    valid,
			first:  "redis | k | c3-1 | c3 | 20.000s | 30.000s | released at 20.050s",
			last:   "redis | k | c3-30 | c3 | 22.900s | 32.900s | released at 22.950s",
			count:  30,
			shown:  "Shown: the first 30.",
			more:   "15 more grants not shown: the whole record (45 grants) is servers_record in results.json.",
		},
		{
			name:   "a record with a quorum says what holding the lock takes",
			record: &ServersRecord{Quorum: 3, End: ms(60000), Grants: gcPauseGrants()},
			run:    asIs,
			first:  "redis | k | c1-1 | c1 | 0.002s | 10.002s | lease ran out at 10.002s",
			count:  2,
			says:   "A client held the lock only while grants to it from at least 3 servers were in force at once.",
		},
		{
			name:   "a kept record without grants says the servers granted nothing",
			record: &ServersRecord{Quorum: 1, End: ms(60000), Grants: []ServerGrant{}},
			run:    asIs,
			says:   "The servers granted nothing during this run.",
		},
		{
			name: "a run that did not keep the record says so, with no table",
			run:  asIs,
			says: "The servers' record of grants is not kept for this kind of run",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.run(GCPauseRun(false))
			r.ServersRecord = tc.record
			page := renderHTML(t, r, map[string]string{"history": HistoryFile})
			inOrder(t, page, `<section id="timeline">`, `<section id="grants">`, "<h2>What the servers granted</h2>", `<section id="plots">`)
			rows := grantRows(page)
			switch {
			case tc.first != "":
				require.Len(t, rows, tc.count)
				assert.Equal(t, tc.first, rows[0])
				if tc.last != "" {
					assert.Equal(t, tc.last, rows[len(rows)-1])
				}
			default:
				assert.Equal(t, tc.rows, rows)
			}
			for _, note := range []struct{ want, marker string }{{tc.shown, "Shown: "}, {tc.more, `id="grants-more"`}} {
				if note.want == "" {
					assert.NotContains(t, page, note.marker)
				} else {
					assert.Contains(t, page, note.want)
				}
			}
			assert.Equal(t, tc.broken, strings.Count(page, `<tr class="grant fail">`), "rows in red")
			if tc.broken == 0 {
				assert.NotContains(t, page, `id="grants-broken"`)
			}
			if tc.says != "" {
				assert.Contains(t, page, tc.says)
			}
			if tc.record == nil {
				assert.Contains(t, page, `id="grants-not-kept"`)
				assert.NotContains(t, page, `<table class="grants">`, "no empty table that reads as no grants")
			} else {
				assert.NotContains(t, page, `id="grants-not-kept"`)
			}
		})
	}
}

func TestResultsJSONCarriesTheServersRecord(t *testing.T) {
	tests := []struct {
		name   string
		record *ServersRecord
	}{
		{"a kept record", &ServersRecord{Quorum: 1, End: ms(60000), Grants: gcPauseGrants()}},
		{"a kept record without grants", &ServersRecord{Quorum: 1, End: ms(60000), Grants: []ServerGrant{}}},
		{"no record", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			r := GCPauseRun(false)
			r.ServersRecord = tc.record
			require.NoError(t, WriteDir(dir, r))
			b, err := os.ReadFile(filepath.Join(dir, ResultsFile))
			require.NoError(t, err)
			var raw map[string]json.RawMessage
			require.NoError(t, json.Unmarshal(b, &raw))
			_, has := raw["servers_record"]
			assert.Equal(t, tc.record != nil, has, "servers_record is in results.json exactly when the run kept it")
			if tc.record != nil {
				assert.Contains(t, string(raw["servers_record"]), `"grants": [`)
			}

			back, _, err := ReadDir(dir)
			require.NoError(t, err)
			assert.Equal(t, tc.record, back.ServersRecord, "read back as written")
			written, err := os.ReadFile(filepath.Join(dir, ReportFile))
			require.NoError(t, err)
			_, err = Regenerate(dir)
			require.NoError(t, err)
			again, err := os.ReadFile(filepath.Join(dir, ReportFile))
			require.NoError(t, err)
			assert.Equal(t, string(written), string(again), "the report regenerated from the run directory is the one the run wrote")
		})
	}
}

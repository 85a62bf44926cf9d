package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/reports"
)

func TestRunAndReproKeepTheServersRecordOfGrants(t *testing.T) {
	tests := []struct {
		name string
		// args run the command; dir is its run directory under out.
		args []string
		dir  string
		// kept says whether the run keeps the servers' record; removal
		// whether a grant in it was deleted by another client.
		kept, removal bool
	}{
		{name: "the README's main run keeps it",
			args: []string{"run", "--system", "redis", "--nemesis", "pause", "--seed", "7"}, kept: true},
		{name: "a repro of a catalog variant keeps it, removals included",
			args: []string{"repro", "redis-del-unlock", "--variant", "unsafe"}, dir: "redis-del-unlock/unsafe", kept: true, removal: true},
		{name: "a history checked from a file has none",
			args: []string{"check", "testdata/gc-pause.jsonl", "--initial", "orders=100"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			capture(t, append(tc.args, "--out", out)...)
			dir := filepath.Join(out, tc.dir)
			b, err := os.ReadFile(filepath.Join(dir, reports.ResultsFile))
			require.NoError(t, err)
			var res reports.Results
			require.NoError(t, json.Unmarshal(b, &res))
			page, err := os.ReadFile(filepath.Join(dir, reports.ReportFile))
			require.NoError(t, err)
			if !tc.kept {
				assert.Nil(t, res.ServersRecord, "no servers_record in results.json")
				assert.Contains(t, string(page), `id="grants-not-kept"`, "the report says the record is not kept")
				return
			}
			require.NotNil(t, res.ServersRecord, "servers_record in results.json")
			rec := res.ServersRecord
			require.NotEmpty(t, rec.Grants)
			assert.Equal(t, 1, rec.Quorum)
			assert.Positive(t, rec.End)
			removed := false
			for _, g := range rec.Grants {
				assert.NotEmpty(t, g.Server)
				assert.NotEmpty(t, g.Owner)
				assert.LessOrEqual(t, g.At, rec.End, "granted within the run")
				removed = removed || g.RemovedBy != ""
			}
			assert.Equal(t, tc.removal, removed, "a grant removed by another client")
			assert.Contains(t, string(page), "<h2>What the servers granted</h2>")
			assert.NotContains(t, string(page), `id="grants-not-kept"`)
		})
	}
}

package sweep

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadGridFile(t *testing.T) {
	def := Grid{Columns: Columns(), FirstSeed: 1, Seeds: 10, Time: Duration(time.Minute)}
	for _, tc := range []struct {
		name, json string
		rows       []string
		err        string
		// firstSeed and seeds, when rows are given, are the grid's.
		firstSeed uint64
		seeds     int
	}{
		{"a row without storage runs in every mode its design supports",
			`{"rows": [{"system": "redis", "system_options": {"fencing": "true"}}, {"system": "redis"}], "seeds": 3, "time": "5s"}`,
			[]string{"redis fencing=true · unfenced", "redis fencing=true · fenced", "redis fencing=true · fenced+reads", "redis · unfenced"}, "", 1, 3},
		{"a row with storage runs in it only",
			`{"rows": [{"system": "redlock", "storage": "fenced", "fence_reads": true, "clients": 3}], "columns": ["none"]}`,
			[]string{"redlock · 3 clients · fenced+reads"}, "", 1, 10},
		{"first_seed 0 starts at seed 0", `{"first_seed": 0, "seeds": 2}`, []string{"control · unfenced"}, "", 0, 2},
		{"seeds 0 is refused", `{"seeds": 0}`, nil, "grid.json: seeds: 0, want at least 1", 0, 0},
		{"negative seeds are refused", `{"seeds": -3}`, nil, "grid.json: seeds: -3", 0, 0},
		{"seeds beyond the last seed", `{"first_seed": 18446744073709551615, "seeds": 2}`, nil, "the last seed is beyond", 0, 0},
		{"unknown field", `{"rows": [], "seed": 3}`, nil, `unknown field "seed"`, 0, 0},
		{"unknown column", `{"columns": ["meteor"]}`, nil, `unknown fault family "meteor"`, 0, 0},
		{"fenced without tokens", `{"rows": [{"system": "redis", "storage": "fenced"}]}`, nil, "rows[0] (redis · fenced)", 0, 0},
		{"unknown option", `{"rows": [{"system": "redis", "system_options": {"tll": "1s"}}]}`, nil, "rows[0]", 0, 0},
		{"bad time", `{"time": "soon"}`, nil, "time", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "grid.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.json), 0o644))
			base := def
			base.Rows = []Row{NewRow(Config{System: "control"})}
			g, err := ReadGridFile(path, base)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			var names []string
			for _, r := range g.Rows {
				names = append(names, r.Name)
			}
			assert.Equal(t, tc.rows, names)
			assert.Equal(t, tc.firstSeed, g.FirstSeed, "first_seed")
			assert.Equal(t, tc.seeds, g.Seeds, "seeds")
		})
	}
}

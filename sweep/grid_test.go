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
	}{
		{"a row without storage runs in every mode its design supports",
			`{"rows": [{"system": "redis", "system_options": {"fencing": "true"}}, {"system": "redis"}], "seeds": 3, "time": "5s"}`,
			[]string{"redis fencing=true · unfenced", "redis fencing=true · fenced", "redis fencing=true · fenced+reads", "redis · unfenced"}, ""},
		{"a row with storage runs in it only",
			`{"rows": [{"system": "redlock", "storage": "fenced", "fence_reads": true, "clients": 3}], "columns": ["none"]}`,
			[]string{"redlock · 3 clients · fenced+reads"}, ""},
		{"unknown field", `{"rows": [], "seed": 3}`, nil, `unknown field "seed"`},
		{"unknown column", `{"columns": ["meteor"]}`, nil, `unknown fault family "meteor"`},
		{"fenced without tokens", `{"rows": [{"system": "redis", "storage": "fenced"}]}`, nil, "rows[0] (redis · fenced)"},
		{"unknown option", `{"rows": [{"system": "redis", "system_options": {"tll": "1s"}}]}`, nil, "rows[0]"},
		{"bad time", `{"time": "soon"}`, nil, "time"},
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
		})
	}
}

package sweep

import (
	"bufio"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRecordsCountTheFaultsThatFired: a record carries how many faults fired
// and whether a fault family's run fired none; the matrix counts those seeds
// apart in its cells ("3 of 4 seeds fired no fault") and its verdict lines.
// Seeds 1-3 of redis under random pauses for 10 s draw no pause; seed 4
// draws two, which fire.
func TestRecordsCountTheFaultsThatFired(t *testing.T) {
	g := Grid{Rows: []Row{NewRow(Config{System: "redis"})}, Columns: []string{"none", "pause"}, FirstSeed: 1, Seeds: 4,
		Time: Duration(10 * time.Second)}
	dir := sweepTo(t, g, Options{Jobs: 1})

	f, err := os.Open(filepath.Join(dir, RecordsFile))
	require.NoError(t, err)
	defer f.Close()
	type fired struct {
		fired   int
		noFault bool
	}
	got := map[string]fired{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		_, rec, err := parseRecord(g, sc.Bytes())
		require.NoError(t, err)
		got[rec.ID] = fired{rec.Fired, rec.NoFault}
	}
	id := g.Rows[0].ID
	assert.Equal(t, map[string]fired{
		id + "/none/1": {}, id + "/none/2": {}, id + "/none/3": {}, id + "/none/4": {},
		id + "/pause/1": {noFault: true}, id + "/pause/2": {noFault: true}, id + "/pause/3": {noFault: true},
		id + "/pause/4": {fired: 2},
	}, got, "no fault asked for is not a run without faults; seeds 1-3 under pause are")

	mx, err := BuildMatrix(dir)
	require.NoError(t, err)
	none, pause := mx.Rows[0].Cells[0], mx.Rows[0].Cells[1]
	assert.Zero(t, none.NoFault)
	assert.Empty(t, none.Evidence)
	assert.Equal(t, 3, pause.NoFault)
	assert.Equal(t, "3 of 4 seeds fired no fault", pause.Evidence)
	assert.Contains(t, mx.Verdicts[0], "(no fault fired in 3 of 4 seeds under pause)")
}

// TestRecordRefusesFaultCountsThatContradict: a record that fired no fault
// fired none, and counts no fewer than none; a record written before the
// counts were kept still reads.
func TestRecordRefusesFaultCountsThatContradict(t *testing.T) {
	g := Grid{Rows: []Row{NewRow(Config{System: "redis"})}, Columns: []string{"pause"}, FirstSeed: 1, Seeds: 1,
		Time: Duration(10 * time.Second)}
	id := g.Rows[0].ID + "/pause/1"
	base := `{"id":"` + id + `","overall":"valid","acquires":1,"acquires_ok":1,"stall_max_ms":0,"acquire_p50_us":1,"acquire_p99_us":1,"messages":1`
	cases := []struct {
		name, line string
		// refused is part of the error ("": the line reads).
		refused string
	}{
		{"a record from before the counts", base + `}`, ""},
		{"two faults fired", base + `,"fired":2}`, ""},
		{"no fault fired", base + `,"no_fault":true}`, ""},
		{"no fault fired, yet two did", base + `,"fired":2,"no_fault":true}`, "a run in which no fault fired fired none"},
		{"a negative count", base + `,"fired":-1}`, "fired -1"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := parseRecord(g, []byte(tc.line))
			if tc.refused == "" {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.refused)
		})
	}
}

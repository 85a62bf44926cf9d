package sweep

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// stopped is a closed Stop channel: a sweep given it reads its directory and
// journal and runs nothing.
func stopped() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// TestAGarbledJournalIsRefusedWithTheRemedy: a journal line that is not a
// record of the grid — not JSON, or JSON that no sweep of this grid writes —
// is refused naming the line and saying how to repair the journal, instead
// of being dropped or let change the matrix. Only a torn last line (no
// newline: a kill in the middle of a write) is cut away.
func TestAGarbledJournalIsRefusedWithTheRemedy(t *testing.T) {
	g := smallGrid(t)
	whole := wholeSweep(t)
	data, err := os.ReadFile(filepath.Join(whole, JournalFile))
	require.NoError(t, err)
	lines := splitLines(data)
	require.GreaterOrEqual(t, len(lines), 4)
	valid, invalid := "", ""
	for _, l := range lines {
		switch {
		case strings.Contains(string(l), `"overall":"valid"`) && valid == "":
			valid = string(l)
		case strings.Contains(string(l), `"overall":"invalid"`) && invalid == "":
			invalid = string(l)
		}
	}
	require.NotEmpty(t, valid)
	require.NotEmpty(t, invalid)
	first := string(lines[0])
	for _, tc := range []struct {
		name, journal string
		// line is the damaged line, 0 when the journal is accepted.
		line int
		why  string
	}{
		{"a torn last line is cut", first + valid[:len(valid)/2], 0, ""},
		{"not JSON, lines follow", first + "{\"id\":\n" + valid, 2, "not JSON"},
		{"not JSON, the last line but complete", first + "garbage\n", 2, "not JSON"},
		{"overall not a result", strings.Replace(valid, `"overall":"valid"`, `"overall":"maybe"`, 1), 1, `overall "maybe"`},
		{"valid overall over an invalid check", strings.Replace(invalid, `"overall":"invalid"`, `"overall":"valid"`, 1), 1, "merge to invalid"},
		{"a seed beyond the grid", strings.Replace(valid, "/7\"", "/99\"", 1), 1, "seed 99 is not one of its seeds 7..8"},
		{"a row not in the grid", `{"id":"0000000000/none/7","overall":"valid","acquires":1,"acquires_ok":1,"stall_max_ms":0,"acquire_p50_us":1,"acquire_p99_us":1,"messages":1}` + "\n",
			1, `no row "0000000000"`},
		{"an unknown field", strings.Replace(valid, `{"id"`, `{"colour":"red","id"`, 1), 1, `unknown field "colour"`},
		{"more grants than acquires", strings.Replace(valid, `"acquires":`, `"acquires":-`, 1), 1, "acquires granted"},
		{"not as a sweep writes it", strings.Replace(valid, `"overall":`, `"overall": `, 1), 1, "not the record as a sweep writes it"},
		{"one run recorded twice, differently", valid + strings.Replace(valid, `"messages":`, `"messages":1`, 1), 2, "recorded before"},
		{"one run recorded twice, the same", valid + valid, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "s")
			_, err := Sweep(g, Options{Dir: dir, Jobs: 1, Stop: stopped(), Keep: KeepNone})
			require.ErrorIs(t, err, ErrStopped)
			journal := filepath.Join(dir, JournalFile)
			require.NoError(t, os.WriteFile(journal, []byte(tc.journal), 0o644))
			_, err = Sweep(g, Options{Dir: dir, Jobs: 1, Stop: stopped(), Keep: KeepNone})
			if tc.line == 0 {
				require.ErrorIs(t, err, ErrStopped)
				return
			}
			var de *DamagedJournalError
			require.ErrorAs(t, err, &de)
			assert.Equal(t, tc.line, de.Line)
			assert.Contains(t, de.Why, tc.why)
			assert.Contains(t, err.Error(), "sed -i '"+string(rune('0'+tc.line))+"d' "+journal, "the remedy")
			after, rerr := os.ReadFile(journal)
			require.NoError(t, rerr)
			assert.Equal(t, tc.journal, string(after), "a refused journal is left as it was")
		})
	}
}

// TestASweepRemovesWhatAKilledOneLeft: the run directories a killed sweep was
// writing or swapping and its temporary files are removed when the sweep
// starts again; kept run directories stay.
func TestASweepRemovesWhatAKilledOneLeft(t *testing.T) {
	g := smallGrid(t)
	dir := filepath.Join(t.TempDir(), "s")
	_, err := Sweep(g, Options{Dir: dir, Jobs: 1, Stop: stopped(), Keep: KeepNone})
	require.ErrorIs(t, err, ErrStopped)
	runs := filepath.Join(dir, RunsDir)
	left := []string{
		filepath.Join(runs, ".abc-pause-seed7.new-123456", "history.jsonl"),
		filepath.Join(runs, ".abc-pause-seed8.old-99", "report.html"),
		filepath.Join(dir, ".records.jsonl.tmp-42"),
	}
	kept := filepath.Join(runs, "abc-pause-seed7", "results.json")
	for _, f := range append(left, kept) {
		require.NoError(t, os.MkdirAll(filepath.Dir(f), 0o755))
		require.NoError(t, os.WriteFile(f, []byte("x"), 0o644))
	}
	_, err = Sweep(g, Options{Dir: dir, Jobs: 1, Stop: stopped(), Keep: KeepNone})
	require.ErrorIs(t, err, ErrStopped)
	for _, f := range left {
		_, err := os.Stat(filepath.Dir(f))
		if filepath.Dir(f) == dir {
			_, err = os.Stat(f)
		}
		assert.ErrorIs(t, err, os.ErrNotExist, "%s is removed", f)
	}
	assert.FileExists(t, kept)
}

// TestTheMatrixRefusesAGarbledRecord: records.jsonl is checked as the journal
// is: a record that is JSON but not one a sweep of the grid writes is refused,
// naming the file and the line, rather than counted in the matrix.
func TestTheMatrixRefusesAGarbledRecord(t *testing.T) {
	whole := wholeSweep(t)
	dir := filepath.Join(t.TempDir(), "copy")
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for _, f := range []string{ManifestFile, RecordsFile} {
		b, err := os.ReadFile(filepath.Join(whole, f))
		require.NoError(t, err)
		if f == RecordsFile {
			b = []byte(strings.Replace(string(b), `"overall":"invalid"`, `"overall":"valid"`, 1))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, f), b, 0o644))
	}
	_, err := BuildMatrix(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), filepath.Join(dir, RecordsFile)+" line ")
	assert.Contains(t, err.Error(), "overall valid, but the checks kept merge to invalid")
}

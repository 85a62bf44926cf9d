package reports

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

func TestWriteFileAtomicKeepsTheOldFileOnError(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f.txt")
	require.NoError(t, WriteFileAtomic(path, func(w io.Writer) error { _, err := io.WriteString(w, "old"); return err }))
	err := WriteFileAtomic(path, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("disk on fire")
	})
	assert.ErrorContains(t, err, "disk on fire")
	b, _ := os.ReadFile(path)
	assert.Equal(t, "old", string(b))
	entries, _ := os.ReadDir(filepath.Dir(path))
	assert.Len(t, entries, 1, "no temporary file is left behind")
}

func TestWriteDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	run := Run{
		Command: "locklab run --seed 1", Seed: 1, Config: map[string]int{"clients": 2},
		Schedule: map[string]any{"faults": []any{}},
		Events: []history.Event{{Time: 0, Process: 0, Node: "c1", Type: history.Invoke, F: history.FAcquire, Key: "k"},
			{Index: 1, Time: 5, Process: 0, Node: "c1", Type: history.OK, F: history.FAcquire, Key: "k"}},
		Verdicts: []models.Verdict{{Check: "mutual-exclusion", Result: models.Valid, Reason: "fine"}},
		Overall:  models.Valid,
		Attachments: []Attachment{{Name: "extra.html", Label: "extra", Write: func(w io.Writer) error {
			_, err := io.WriteString(w, "<html>")
			return err
		}}},
	}
	require.NoError(t, WriteDir(dir, run))
	evs, err := history.ReadFile(filepath.Join(dir, HistoryFile))
	require.NoError(t, err)
	assert.Equal(t, run.Events, evs)
	var res Results
	b, err := os.ReadFile(filepath.Join(dir, ResultsFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &res))
	assert.Equal(t, "locklab run --seed 1", res.Command)
	assert.Equal(t, "extra.html", res.Files["extra"])
	sum, _ := os.ReadFile(filepath.Join(dir, SummaryFile))
	assert.True(t, strings.Contains(string(sum), "mutual-exclusion   VALID"), string(sum))
	assert.FileExists(t, filepath.Join(dir, "extra.html"))
}

func sampleRun(overall models.Result, attachments ...string) Run {
	r := Run{
		Command: "locklab run --seed 1", Seed: 1, Config: map[string]int{"clients": 1},
		Events: []history.Event{{Time: 0, Process: 0, Node: "c1", Type: history.Invoke, F: history.FAcquire, Key: "k"},
			{Index: 1, Time: 5, Process: 0, Node: "c1", Type: history.OK, F: history.FAcquire, Key: "k"}},
		Verdicts: []models.Verdict{{Check: "mutual-exclusion", Result: overall, Reason: "r"}},
		Overall:  overall,
	}
	for _, name := range attachments {
		r.Attachments = append(r.Attachments, Attachment{Name: name, Label: "porcupine:" + name,
			Write: func(w io.Writer) error { _, err := io.WriteString(w, "<html>"); return err }})
	}
	return r
}

// A rerun into a run directory replaces it whole: the Porcupine page of an
// earlier invalid run does not survive beside a valid one, and no temporary
// directory is left beside it.
func TestWriteDirReplacesARunDirectoryWhole(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "run")
	require.NoError(t, WriteDir(dir, sampleRun(models.Invalid, "porcupine-critical-sections.html")))
	require.FileExists(t, filepath.Join(dir, "porcupine-critical-sections.html"))
	require.NoError(t, os.WriteFile(filepath.Join(dir, ScreenshotFile), []byte("png"), 0o644)) // locklab report --screenshot

	require.NoError(t, WriteDir(dir, sampleRun(models.Valid)))
	assert.NoFileExists(t, filepath.Join(dir, "porcupine-critical-sections.html"))
	assert.NoFileExists(t, filepath.Join(dir, ScreenshotFile))
	b, err := os.ReadFile(filepath.Join(dir, ResultsFile))
	require.NoError(t, err)
	assert.Contains(t, string(b), `"overall": "valid"`)
	entries, err := os.ReadDir(parent)
	require.NoError(t, err)
	require.Len(t, entries, 1, "only the run directory: no temporary or old directory left")
	st, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), st.Mode().Perm())
}

// WriteDir never overwrites or deletes what locklab did not write, and a
// place where no directory can be made is the caller's error (OutDirError),
// said before anything is written.
func TestWriteDirRefusesWhatLocklabDidNotWrite(t *testing.T) {
	base := t.TempDir()
	mk := func(name string, files ...string) string {
		dir := filepath.Join(base, name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		for _, f := range files {
			require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("mine"), 0o644))
		}
		return dir
	}
	afile := filepath.Join(base, "afile")
	require.NoError(t, os.WriteFile(afile, []byte("mine"), 0o644))
	runDir := filepath.Join(base, "rundir")
	require.NoError(t, WriteDir(runDir, sampleRun(models.Valid)))
	require.NoError(t, os.WriteFile(filepath.Join(runDir, "notes.txt"), []byte("mine"), 0o644))
	link := filepath.Join(base, "link")
	require.NoError(t, os.Symlink(runDir, link))

	tests := []struct {
		name, dir, reason string
	}{
		{"a file", afile, "it is a file, not a directory"},
		{"under a file", filepath.Join(afile, "sub"), afile + ": not a directory"},
		{"someone's directory", mk("photos", "cat.jpg", "results.json"), "it is not empty and not a locklab run directory (it holds cat.jpg, results.json)"},
		{"a run directory with a file of the user's", runDir, "it is a locklab run directory but also holds notes.txt, which locklab did not write"},
		{"a symbolic link", link, "it is a symbolic link; name the directory itself"},
		{"a directory inside", mk("nested/sub"), ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := tc.dir
			if tc.reason == "" { // the parent of an empty directory holds a directory
				dir = filepath.Join(base, "nested")
				tc.reason = "it is not empty and not a locklab run directory (it holds sub/)"
			}
			before := snapshot(t, base)
			checked := CheckOutDir(dir)
			require.Error(t, checked, "CheckOutDir says it before a run")
			err := WriteDir(dir, sampleRun(models.Valid))
			assert.EqualError(t, err, checked.Error())
			var oe *OutDirError
			require.ErrorAs(t, err, &oe)
			assert.Contains(t, err.Error(), "cannot write the run directory "+dir+": "+tc.reason)
			assert.Equal(t, before, snapshot(t, base), "nothing changed")
		})
	}
}

// snapshot lists every path under dir with its content.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			out[p] = "-> " + target
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	}))
	return out
}

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

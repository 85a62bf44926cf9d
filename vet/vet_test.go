package vet_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/locklab/locklab/vet"
)

// TestTheAnalyzerRejectsEveryRuleBroken feeds it a lock that breaks every
// rule (each line says what must be reported) and one that breaks none.
func TestTheAnalyzerRejectsEveryRuleBroken(t *testing.T) {
	analysistest.Run(t, analysistest.TestData(), vet.Analyzer, "bad", "good")
}

func TestPackagesReportsFindingsSortedWithTheirPlace(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module mylock\ngo 1.24\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lock.go"), []byte(`package mylock

import "time"

func Deadline() time.Time { return time.Now().Add(time.Second) }

func Spin() { go Deadline() }
`), 0o644))
	got, err := vet.Packages(dir, "./...")
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, 5, got[0].Pos.Line)
	assert.Contains(t, got[0].String(), "lock.go:5:")
	assert.Contains(t, got[0].Message, "calls time.Now")
	assert.Equal(t, 7, got[1].Pos.Line)
	assert.Contains(t, got[1].Message, "starts a goroutine")
	assert.Equal(t, "mylock", got[0].Package)
}

func TestPackagesRefusesWhatItCannotRead(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module mylock\ngo 1.24\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "lock.go"), []byte("package mylock\n\nfunc f() { undefined() }\n"), 0o644))
	_, err := vet.Packages(dir, "./...")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "do not compile")
	assert.Contains(t, err.Error(), "undefined")
}

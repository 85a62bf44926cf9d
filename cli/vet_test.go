package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVetReportsCodeTheSimulatorCannotRun(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module mylock\ngo 1.24\n"), 0o644))
	write := func(src string) {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "lock.go"), []byte(src), 0o644))
	}

	write("package mylock\n\nimport \"time\"\n\nfunc Wait() { time.Sleep(time.Second) }\n")
	code, out, _ := capture(t, "vet", "--dir", dir, "./...")
	assert.Equal(t, 1, code, "a finding exits 1")
	assert.Contains(t, out, "lock.go:5:15: calls time.Sleep")
	assert.Contains(t, out, "1 finding(s)")

	write("package mylock\n\nimport \"time\"\n\n// Env is the client's environment.\ntype Env interface{ Sleep(time.Duration) }\n\nfunc Wait(e Env) { e.Sleep(time.Second) }\n")
	code, out, _ = capture(t, "vet", "--dir", dir, "./...")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "no findings")

	write("package mylock\n\nfunc Wait() { missing() }\n")
	code, _, errOut := capture(t, "vet", "--dir", dir, "./...")
	assert.Equal(t, 2, code, "code that does not compile is the user's input to fix")
	assert.Contains(t, errOut, "do not compile")

	code, _, errOut = capture(t, "vet", "--dir", filepath.Join(dir, "nope"))
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--dir")
}

// TestVetFindsWhatTheCarelessExampleLockDoes: the examples' careless lock
// reads the machine's clock, sleeps on it, starts a goroutine and draws
// from math/rand's global source; vet names each, with its line. The same
// lock written against the Env (homemade) passes.
func TestVetFindsWhatTheCarelessExampleLockDoes(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: loads the example module's packages")
	}
	dir := filepath.Join("..", "examples", "redis-homemade")
	code, out, errOut := capture(t, "vet", "--dir", dir, "./careless")
	require.Equal(t, 1, code, "findings exit 1: %s", errOut)
	for _, want := range []string{
		"careless/lock.go:26:35: calls math/rand.Int63",
		"careless/lock.go:27:14: calls time.Now",
		"careless/lock.go:34:4: starts a goroutine",
		"careless/lock.go:40:3: calls time.Sleep",
	} {
		assert.Contains(t, out, want)
	}
	code, out, _ = capture(t, "vet", "--dir", dir, "./homemade")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "no findings")
}

package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMatrixRefusesBadInputNamingTheFlag: an unknown preset or family, a
// budget of 0 and settings changed on a resume exit 2 naming the flag.
func TestMatrixRefusesBadInputNamingTheFlag(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"matrix", "--preset", "huge"}, `--preset: unknown preset "huge" (known: matrix, full)`},
		{[]string{"matrix", "--columns", "pause,gc"}, `--columns: unknown fault family "gc"`},
		{[]string{"matrix", "--budget", "0"}, "--budget 0: want at least 1 run per cell"},
		{[]string{"matrix", "--time", "0s"}, "--time 0s: must be positive"},
		{[]string{"matrix", "--clients", "0"}, "--clients 0"},
		{[]string{"matrix", "--columns", "clok-jump"}, `--columns: unknown fault family "clok-jump" — did you mean "clock-jump"?`},
		{[]string{"matrix", "--system", "mongo"}, `--system: unknown system "mongo" (known: `},
		{[]string{"matrix", "--system", "Redis"}, `--system: unknown system "Redis" — did you mean "redis"?`},
		{[]string{"matrix", "--system", "control"}, "--system: no row of the matrix runs control"},
		{[]string{"matrix", "-j", "0"}, "-j 0: want at least 1"},
		{[]string{"matrix", "--resume", "x", "--budget", "5"}, "--budget cannot change them"},
		{[]string{"matrix", "--resume", filepath.Join(os.TempDir(), "no-such-matrix")}, "matrix directory"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			code, _, stderr := capture(t, tc.args...)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestMatrixHelpShowsThePresetsSettings: --help shows each preset's budget,
// run length and clients as the code defines them, not the random sweep's.
func TestMatrixHelpShowsThePresetsSettings(t *testing.T) {
	code, stdout, _ := capture(t, "matrix", "--help")
	require.Equal(t, 0, code)
	assert.Contains(t, stdout, "every single-fault placement and 20 pairs of them, then 300 guided runs per cell at most,\n          each at least 20s (fitted to each row's timeouts) with 2 clients")
	assert.Contains(t, stdout, "--pairs int")
	assert.Contains(t, stdout, "--budget int")
	assert.NotContains(t, stdout, "--seeds")
	assert.NotRegexp(t, `(?i)\bsafe under`, stdout)
}

// TestMatrixRunsAndResumes: a small matrix prints its table and writes
// matrix.json and matrix.txt; the same command again finds every cell
// recorded.
func TestMatrixRunsAndResumes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "m")
	args := []string{"matrix", "--system", "redis", "--columns", "pause,clock-drift", "--budget", "8", "--time", "20s", "--progress=false", "--out", dir}
	code, stdout, stderr := capture(t, args...)
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "Redis SET NX PX + Lua release")
	assert.Regexp(t, `Redis SET NX PX \+ Lua release +unfenced +CORRUPTED r\d`, stdout, "a pause beyond the lease corrupts unfenced data")
	cells := regexp.MustCompile(`of (\d+) cells corrupted`).FindStringSubmatch(stdout)
	require.Len(t, cells, 2, stdout)
	assert.FileExists(t, filepath.Join(dir, "matrix.json"))
	assert.FileExists(t, filepath.Join(dir, "matrix.txt"))
	code, stdout, stderr = capture(t, "matrix", "--resume", dir, "--progress=false")
	require.Equal(t, 0, code, stderr)
	assert.Contains(t, stdout, "0 cells searched now, "+cells[1]+" recorded before")
}

package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	livedb "github.com/locklab/locklab/backends/database/live"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/live"
	"github.com/locklab/locklab/scenario"
)

// An --out that PostgreSQL's user cannot reach (a 0700 temporary directory,
// locklab running as root) is refused before any server starts, naming
// --out and the directory in the way; with --all only the database variants
// are skipped, and when no variant is left it is a usage error.
func TestLiveOutThatPostgresCannotReach(t *testing.T) {
	if livedb.RunUser() == "" {
		t.Skip("not root: PostgreSQL runs as locklab's own user")
	}
	if _, err := livedb.Binaries(); err != nil {
		t.Skip(err)
	}
	private, err := os.MkdirTemp("", "locklab-private-") // 0700, as mktemp -d makes it
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(private) })
	st, err := os.Stat(private)
	require.NoError(t, err)
	require.Zero(t, st.Mode().Perm()&0o001, "a temporary directory is private")
	out := filepath.Join(private, "o")

	tests := []struct {
		name    string
		args    []string
		stdout  []string
		stderr  string
		skipped int
	}{
		{name: "repro --all: every database variant skipped",
			args:    []string{"repro", "db-unlock-before-commit", "--live", "--all", "--out", out},
			stdout:  []string{"(2 skipped: 2 for an --out the server's user cannot reach)"},
			stderr:  "--out " + out + ": no variant ran live",
			skipped: 2},
		{name: "repro: the variant refused",
			args:   []string{"repro", "db-unlock-before-commit", "--live", "--out", out},
			stderr: "--out " + out + ": PostgreSQL runs as the user postgres (locklab runs as root), which cannot reach"},
		{name: "run --live: refused",
			args:   []string{"run", "--live", "--system", "database", "--time", "2s", "--out", filepath.Join(private, "r")},
			stderr: "--out " + filepath.Join(private, "r") + ": PostgreSQL runs as the user postgres"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := capture(t, tc.args...)
			assert.Equal(t, judge.ExitUsage, code, stdout+stderr)
			assert.Contains(t, stderr, tc.stderr)
			assert.Contains(t, stdout+stderr, "directory "+private+" (mode 0700) is not searchable by others")
			for _, want := range tc.stdout {
				assert.Contains(t, stdout, want)
			}
			assert.Equal(t, tc.skipped, strings.Count(stdout, "SKIPPED: --out "+out))
			_, err := os.Stat(filepath.Join(out, "live"))
			assert.True(t, os.IsNotExist(err), "no server started, no directory made")
		})
	}
}

// A live variant runs again until it matches, at most --tries times: each
// missed try is said with the checks that missed, and the outcome says in
// which try it matched; a variant that never matches stops at the last try.
func TestReproLiveTriesUntilItMatches(t *testing.T) {
	s, v, err := findVariant("raftkv-leader-clock-ahead", "fixed")
	require.NoError(t, err)
	miss := harness.Outcome{Variant: v, Mismatches: []string{"lease: expected invalid, got valid (4 grants on 1 key ...)"}}
	hit := harness.Outcome{Variant: v}
	tests := []struct {
		name     string
		outcomes []harness.Outcome
		tries    int
		match    bool
		ran      int
		says     []string
	}{
		{"matches at once", []harness.Outcome{hit}, 5, true, 1, []string{"live: MATCH in try 1 of at most 5\n"}},
		{"matches on the third try", []harness.Outcome{miss, miss, hit}, 5, true, 3, []string{
			"raftkv-leader-clock-ahead/fixed (live): try 1 of at most 5 missed (lease: expected invalid, got valid); trying again\n",
			"raftkv-leader-clock-ahead/fixed (live): try 2 of at most 5 missed",
			"live: MATCH in try 3 of at most 5 (2 missed before: lease: expected invalid, got valid | lease: expected invalid, got valid)\n"}},
		{"never matches", []harness.Outcome{miss, miss, miss}, 2, false, 2, []string{"live: MISMATCH in try 2 of at most 2 (1 missed before"}},
		{"one try says nothing of tries", []harness.Outcome{miss}, 1, false, 1, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ran := 0
			repro := func(_ context.Context, _ scenario.Variant, cfg live.Config) (harness.Outcome, error) {
				assert.DirExists(t, cfg.Dir, "each try has its servers' directory")
				ran++
				return tc.outcomes[ran-1], nil
			}
			var out strings.Builder
			dir := filepath.Join(t.TempDir(), "fixed")
			o, servers, err := reproLiveTries(context.Background(), &out, &out, s, v, dir, tc.tries, liveFlags{scale: 1}, repro)
			require.NoError(t, err)
			defer os.RemoveAll(servers)
			assert.Equal(t, tc.match, o.Match())
			assert.Equal(t, tc.ran, ran)
			for _, want := range tc.says {
				assert.Contains(t, out.String(), want)
			}
			if tc.tries == 1 {
				assert.NotContains(t, out.String(), "try")
			}
			entries, err := os.ReadDir(filepath.Dir(dir))
			require.NoError(t, err)
			assert.Len(t, entries, 1, "the missed tries' servers' directories are removed")
		})
	}
}

func TestTriesIsALiveFlag(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"repro", "raftkv-leader-clock-ahead", "--tries", "3"}, "--tries needs --live"},
		{[]string{"repro", "raftkv-leader-clock-ahead", "--live", "--tries", "0"}, "--tries 0: want at least one try"},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := capture(t, tc.args...)
			assert.Equal(t, judge.ExitUsage, code)
			assert.Contains(t, stderr, tc.want)
		})
	}
}

// TestLiveLinesComeUnderTheVariantsHeader: the live lines of a variant (the
// try it matched in) are said under its "== scenario / variant" header, not
// before it.
func TestLiveLinesComeUnderTheVariantsHeader(t *testing.T) {
	s := scenario.Catalog()[0]
	v := s.Variants[0]
	o, err := harness.Repro(v)
	require.NoError(t, err)
	var out strings.Builder
	require.NoError(t, printOutcomeUnder(&out, s, o, filepath.Join(t.TempDir(), "run"), false, "locklab run …", "live: MATCH in try 1 of at most 5\n"))
	text := out.String()
	header, replay, try, verdicts := strings.Index(text, "== "+s.Name+" / "+v.Name), strings.Index(text, "replay: locklab run …\n"),
		strings.Index(text, "live: MATCH in try 1 of at most 5\n"), strings.Index(text, "CHECK")
	assert.True(t, 0 == header && header < replay && replay < try && try < verdicts, "header, replay line, live lines, verdicts:\n%s", text)
}

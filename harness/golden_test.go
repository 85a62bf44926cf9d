package harness

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/system"
)

// golden is one of the guards' recorded files, kept per system in the
// system's own folder (backends/<name>/testdata/<file>): a system added in
// its own folder brings its recorded values with it, and no shared file
// names every system. A file holds lines "case value", in the order
// recorded; lines starting with # are comments.
type golden struct {
	// file is the file's name in each system's testdata.
	file string
	// header are its comment lines (what it holds, how to rewrite it).
	header []string
}

// path is where system keeps g.
func (g golden) path(sys string) string {
	return filepath.Join("..", "backends", sys, "testdata", g.file)
}

// read returns every registered system's recorded values (a system without
// the file has none) and the order the cases were recorded in.
func (g golden) read(t *testing.T) (values map[string]string, order map[string]int) {
	t.Helper()
	values, order = map[string]string{}, map[string]int{}
	for _, s := range system.All() {
		f, err := os.Open(g.path(s.Name))
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		sc := bufio.NewScanner(f)
		for line := 1; sc.Scan(); line++ {
			text := strings.TrimSpace(sc.Text())
			if text == "" || strings.HasPrefix(text, "#") {
				continue
			}
			name, value, ok := strings.Cut(text, " ")
			require.True(t, ok, "%s:%d: bad line %q (want: case value)", g.path(s.Name), line, text)
			_, dup := values[name]
			require.False(t, dup, "%s:%d: case %s recorded twice", g.path(s.Name), line, name)
			values[name], order[name] = value, len(order)
		}
		require.NoError(t, sc.Err(), g.path(s.Name))
		require.NoError(t, f.Close())
	}
	return values, order
}

// write rewrites each system's file with the values of its cases (systemOf
// maps a case to its system), keeping the recorded order and adding new
// cases after it. A file is written to a temporary name, then renamed.
func (g golden) write(t *testing.T, values map[string]string, systemOf map[string]string) {
	t.Helper()
	_, order := g.read(t)
	bySystem := map[string][]string{}
	for name := range values { // determinism:ok: sorted below
		bySystem[systemOf[name]] = append(bySystem[systemOf[name]], name)
	}
	for _, sys := range slices.Sorted(func(yield func(string) bool) {
		for s := range bySystem { // determinism:ok: sorted
			if !yield(s) {
				return
			}
		}
	}) {
		require.NotEmpty(t, sys, "a case with no system")
		var b strings.Builder
		for _, h := range g.header {
			fmt.Fprintf(&b, "# %s\n", h)
		}
		names := bySystem[sys]
		slices.Sort(names)
		for _, l := range hashLines(order, names, values) {
			fmt.Fprintln(&b, l)
		}
		p := g.path(sys)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p+".tmp", []byte(b.String()), 0o644))
		require.NoError(t, os.Rename(p+".tmp", p))
	}
}

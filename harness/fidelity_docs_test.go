package harness

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFidelityTablesNameRealTests: every test a fidelity table
// (docs/fidelity/*.md) or a backend's package doc cites as showing a
// behaviour exists, so a table cannot claim evidence that was renamed or
// deleted.
func TestFidelityTablesNameRealTests(t *testing.T) {
	defined := map[string]bool{}
	funcRe := regexp.MustCompile(`(?m)^func (Test\w+)\(`)
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") && path != "..") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range funcRe.FindAllSubmatch(b, -1) {
			defined[string(m[1])] = true
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, defined)

	docs, err := filepath.Glob("../docs/fidelity/*.md")
	require.NoError(t, err)
	pkgDocs, err := filepath.Glob("../backends/*/doc.go")
	require.NoError(t, err)
	require.NotEmpty(t, docs, "no fidelity tables under docs/fidelity")
	citeRe := regexp.MustCompile(`\bTest[A-Z]\w*`)
	for _, path := range slices.Concat(docs, pkgDocs) {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		for _, name := range citeRe.FindAllString(string(b), -1) {
			assert.True(t, defined[name], "%s cites %s, which no test file defines", path, name)
		}
	}
}

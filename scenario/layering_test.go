package scenario

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/go/packages"
)

// TestTheDescriptionLinksNoJudgingOrPlotting: scenario and every lock
// system's package (their live forms and backends/builtin included) link
// neither package judge nor reports, nor any gonum package: judging and
// rendering hang below the description, never inside it.
func TestTheDescriptionLinksNoJudgingOrPlotting(t *testing.T) {
	const module = "github.com/locklab/locklab/"
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps, Dir: ".."}
	roots, err := packages.Load(cfg, module+"scenario", module+"backends/...")
	require.NoError(t, err)
	require.Greater(t, len(roots), 10, "scenario and the backends")
	forbidden := func(path string) bool {
		return path == module+"judge" || path == module+"reports" || strings.HasPrefix(path, "gonum.org/")
	}
	for _, root := range roots {
		require.Empty(t, root.Errors, root.PkgPath)
		var bad []string
		packages.Visit([]*packages.Package{root}, nil, func(p *packages.Package) {
			if forbidden(p.PkgPath) {
				bad = append(bad, p.PkgPath)
			}
		})
		assert.Empty(t, bad, "%s links them", root.PkgPath)
	}
}

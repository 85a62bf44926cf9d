package sweep

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/reports/browser"
)

// TestMatrixRendersInABrowser opens matrix.html in headless Chromium: the
// plot loads, the headline counts the cells, and the corrupted and
// lock-broke cells are told apart; the screenshot goes beside the page.
func TestMatrixRendersInABrowser(t *testing.T) {
	b, err := browser.Find()
	if errors.Is(err, browser.ErrNotFound) {
		t.Skipf("browser check skipped: %v", err)
	}
	require.NoError(t, err)
	dir := wholeSweep(t)
	shot := filepath.Join(t.TempDir(), "matrix.png")
	page, err := browser.Render(filepath.Join(dir, MatrixHTML), browser.Options{Browser: b, Screenshot: shot,
		Width: 1400, Height: 1000, Timeout: 3 * time.Minute})
	require.NoError(t, err)
	assert.Equal(t, "ok", page.Rendered, "every image loaded")
	assert.Equal(t, 1, page.Loaded, "the safety-vs-cost plot")
	assert.Contains(t, page.Headline, "2 rows × 2 fault families × 2 seeds: 1 cell with corrupted data, 1 where the lock broke but the data stayed intact")
	assert.Equal(t, 1, strings.Count(page.DOM, `data-state="corrupted"`))
	assert.Equal(t, 1, strings.Count(page.DOM, `data-state="lock-broke"`))
	assert.FileExists(t, shot)
}

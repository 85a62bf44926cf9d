package reports_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/reports/browser"
)

// needBrowser skips the test, saying why, when no Chromium is installed.
func needBrowser(t *testing.T) string {
	t.Helper()
	b, err := browser.Find()
	if errors.Is(err, browser.ErrNotFound) {
		t.Skipf("browser check skipped: %v", err)
	}
	require.NoError(t, err)
	return b
}

// TestReportRendersInABrowser opens report.html in headless Chromium and
// checks what a person would see: the verdict in the banner and table, and
// every plot loaded. The page's own script marks the body once all images
// have completed; the browser dumps the DOM after a virtual-time budget, so
// the mark is there when it rendered, and the screenshot goes in the run
// directory.
func TestReportRendersInABrowser(t *testing.T) {
	b := needBrowser(t)
	for _, fenced := range []bool{false, true} {
		dir := t.TempDir()
		run := reports.GCPauseRun(fenced)
		require.NoError(t, reports.WriteDir(dir, run))
		shot := filepath.Join(dir, reports.ScreenshotFile)
		page, err := browser.Render(filepath.Join(dir, reports.ReportFile), browser.Options{Browser: b, Screenshot: shot, Height: 1200})
		require.NoError(t, err)

		assert.Equal(t, "INVALID", page.Overall)
		assert.Contains(t, page.Headline, "Safety violated")
		want := map[string]string{}
		for _, v := range run.Verdicts {
			want[v.Check] = string(v.Result)
		}
		assert.Equal(t, want, page.Verdicts, "the verdict table shows every check")
		assert.Equal(t, "ok", page.Rendered, "the page's script saw every image complete")
		assert.Equal(t, 5, page.Images, "five plots: timeline, close-up, latency, quantiles, throughput")
		assert.Equal(t, page.Images, page.Loaded)
		assert.Zero(t, page.Broken)
		png, err := os.ReadFile(shot)
		require.NoError(t, err)
		assert.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "the screenshot is a PNG")
		assert.Greater(t, len(png), 20_000, "and shows something")
	}
}

// TestBrowserCheckCatchesABrokenImage proves the check can fail: a report
// whose image does not decode renders as broken.
func TestBrowserCheckCatchesABrokenImage(t *testing.T) {
	b := needBrowser(t)
	dir := t.TempDir()
	require.NoError(t, reports.WriteDir(dir, reports.GCPauseRun(true)))
	path := filepath.Join(dir, reports.ReportFile)
	page, err := os.ReadFile(path)
	require.NoError(t, err)
	broken := bytes.Replace(page, []byte(`src="data:image/png;base64,iVBOR`), []byte(`src="data:image/png;base64,AAAA`), 1)
	require.NotEqual(t, page, broken)
	require.NoError(t, os.WriteFile(path, broken, 0o644))

	got, err := browser.Render(path, browser.Options{Browser: b, Height: 600})
	require.NoError(t, err)
	assert.Equal(t, "broken", got.Rendered)
	assert.Equal(t, 1, got.Broken)
	assert.Equal(t, got.Images-1, got.Loaded)
}

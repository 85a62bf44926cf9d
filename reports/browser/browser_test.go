package browser

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInspectReadsWhatThePageShows(t *testing.T) {
	tests := []struct {
		name string
		dom  string
		want Page
	}{
		{"a rendered report",
			`<html><body data-verdict="invalid" data-images-loaded="2" data-images-broken="0" data-rendered="ok">
			<div id="overall"> INVALID </div><p id="headline">Safety violated.</p>
			<table><tr class="verdict" data-check="mutual-exclusion" data-result="invalid"><td>x</td></tr></table>
			<img src="data:a"><img src="data:b"></body></html>`,
			Page{Overall: "INVALID", Headline: "Safety violated.", Verdicts: map[string]string{"mutual-exclusion": "invalid"},
				Images: 2, Loaded: 2, Rendered: "ok"}},
		{"a page whose script never ran", `<html><body><div id="overall">VALID</div><img src="x"></body></html>`,
			Page{Overall: "VALID", Verdicts: map[string]string{}, Images: 1}},
		{"not a report at all", `garbage`, Page{Verdicts: map[string]string{}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Inspect(tc.dom)
			require.NoError(t, err)
			got.DOM = ""
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestRenderFailsClearlyWithoutABrowser(t *testing.T) {
	_, err := Render("report.html", Options{Browser: "/nonexistent/chromium"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "render report.html with /nonexistent/chromium")
}

func FuzzInspect(f *testing.F) {
	f.Add(`<body data-images-loaded="3" data-rendered="ok"><div id="overall">VALID</div></body>`)
	f.Add(`<tr data-check="a" data-result="b"><img>`)
	f.Fuzz(func(t *testing.T, dom string) {
		p, err := Inspect(dom)
		if err == nil {
			assert.GreaterOrEqual(t, p.Images, 0)
		}
	})
}

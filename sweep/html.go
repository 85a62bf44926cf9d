package sweep

import (
	_ "embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

//go:embed matrix.html.tmpl
var matrixTemplate string

var matrixPage = template.Must(template.New("matrix").Funcs(template.FuncMap{
	"pct": func(x float64) string {
		if x < 0 {
			return "no acquires"
		}
		return fmt.Sprintf("%.0f%%", 100*x)
	},
	"ms":   func(x float64) string { return fmt.Sprintf("%.1fms", x) },
	"secs": func(ms float64) string { return fmt.Sprintf("%.1fs", ms/1000) },
	"checks": func(m map[string]int) string {
		var out []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			out = append(out, fmt.Sprintf("%s %d", k, m[k]))
		}
		return strings.Join(out, ", ")
	},
}).Parse(matrixTemplate))

// writeHTML writes matrix.html: self-contained (the plot is a data URI, the
// style and script inline).
func writeHTML(w io.Writer, mx Matrix, png []byte) error {
	states := map[string]int{}
	for _, mr := range mx.Rows {
		for _, c := range mr.Cells {
			states[c.State]++
		}
	}
	headline := fmt.Sprintf("%s × %s × %s: %s with corrupted data, %d where the lock broke but the data stayed intact, %d undecided, %d unavailable, %d without a violation in their seeds.",
		count(len(mx.Rows), "row"), count(len(mx.Columns), "fault family"), count(mx.Seeds, "seed"),
		count(states[StateCorrupted], "cell"), states[StateLockBroke], states[StateUnknown], states[StateUnavailable], states[StateSafe])
	overall := StateSafe
	switch {
	case states[StateCorrupted] > 0:
		overall = StateCorrupted
	case states[StateLockBroke] > 0:
		overall = StateLockBroke
	}
	return matrixPage.Execute(w, map[string]any{
		"Matrix": mx, "Headline": headline, "Overall": overall, "Time": time.Duration(mx.Time).String(),
		"Plot": template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(png)),
	})
}

// count is n and the word, plural unless n is 1: "1 seed", "2 seeds",
// "2 fault families".
func count(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	if strings.HasSuffix(word, "y") {
		return fmt.Sprintf("%d %sies", n, strings.TrimSuffix(word, "y"))
	}
	return fmt.Sprintf("%d %ss", n, word)
}

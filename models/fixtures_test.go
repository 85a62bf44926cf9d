package models

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/tools/txtar"

	"github.com/locklab/locklab/history"
)

// fixture is one history of testdata/histories with what every check must say
// about it. The archive's comment says what the history shows; its files are:
//
//	options        check options, one key=value a line (see Config.Set)
//	history        the history in the compact notation of parseHistory, or
//	history.jsonl  the history in the documented JSON Lines format
//	expect         one line per check: <check> <valid|invalid|unknown|skip> [phrase]
//
// skip means the check does not apply to the history and is left out of the
// default selection. A phrase must appear in the verdict's reason or
// counterexample.
type fixture struct {
	name   string
	cfg    Config
	events []history.Event
	expect map[string]expectation
}

type expectation struct {
	result string
	phrase string
}

func loadFixture(t *testing.T, path string) fixture {
	t.Helper()
	ar, err := txtar.ParseFile(path)
	require.NoError(t, err)
	fx := fixture{name: strings.TrimSuffix(filepath.Base(path), ".txtar"), expect: map[string]expectation{}}
	files := map[string]string{}
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
	}
	require.NotEmpty(t, strings.TrimSpace(string(ar.Comment)), "a fixture says what it shows")
	for _, line := range nonEmptyLines(files["options"]) {
		k, v, ok := strings.Cut(line, "=")
		require.True(t, ok, "option %q: want key=value", line)
		require.NoError(t, fx.cfg.Set(k, v))
	}
	switch {
	case files["history.jsonl"] != "":
		fx.events, err = history.Read(strings.NewReader(files["history.jsonl"]), path)
		require.NoError(t, err)
	default:
		fx.events = parseHistory(t, files["history"])
	}
	for _, line := range nonEmptyLines(files["expect"]) {
		f := strings.Fields(line)
		require.GreaterOrEqual(t, len(f), 2, "expect line %q", line)
		require.Contains(t, []string{"valid", "invalid", "unknown", "skip"}, f[1], "expect line %q", line)
		fx.expect[f[0]] = expectation{result: f[1], phrase: strings.Join(f[2:], " ")}
	}
	return fx
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// TestFixtures judges every fixture with every check and compares each verdict
// with the expectation. Every fixture must state an expectation for every
// check, so a new check cannot go untested on the textbook cases.
func TestFixtures(t *testing.T) {
	paths, err := filepath.Glob("testdata/histories/*.txtar")
	require.NoError(t, err)
	require.NotEmpty(t, paths)
	for _, path := range paths {
		fx := loadFixture(t, path)
		t.Run(fx.name, func(t *testing.T) {
			checks, skipped, err := fx.cfg.Select(nil, fx.events)
			require.NoError(t, err)
			paired, pairErr := history.Pair(fx.events)
			if pairErr != nil {
				paired = history.PairRecorded(fx.events)
			}
			pairedChecks, pairedSkipped, err := fx.cfg.SelectPaired(nil, paired)
			require.NoError(t, err)
			assert.Equal(t, checks, pairedChecks, "selected from the paired history")
			assert.Equal(t, skipped, pairedSkipped, "left out from the paired history")
			for _, name := range CheckNames() {
				want, ok := fx.expect[name]
				require.True(t, ok, "the fixture states no expectation for check %s", name)
				t.Run(name, func(t *testing.T) {
					if want.result == "skip" {
						i := slices.IndexFunc(skipped, func(s Skipped) bool { return s.Check == name })
						assert.GreaterOrEqual(t, i, 0, "%s ran by default, expected it to be left out", name)
						return
					}
					i := slices.IndexFunc(checks, func(c Check) bool { return c.Name() == name })
					require.GreaterOrEqual(t, i, 0, "%s was left out by default: %v", name, skipped)
					v := Run(checks[i], fx.events)
					assert.Equal(t, want.result, string(v.Result), describe(v))
					if want.phrase != "" {
						assert.Contains(t, describe(v), want.phrase)
					}
					if v.Result == Invalid {
						require.NotNil(t, v.Counterexample, "an invalid verdict has a counterexample")
						assert.NotEmpty(t, v.Counterexample.Explanation)
						if !v.Liveness {
							assert.NotEmpty(t, v.Counterexample.Events, "the counterexample shows the operations")
						}
					}
					if pm, ok := checks[i].(PorcupineModel); ok && v.Result != Unknown {
						model, ops := pm.Porcupine(fx.events)
						assert.Equal(t, v.Result == Valid, porcupine.CheckOperations(model, ops),
							"the whole-history Porcupine search agrees with the check")
					}
					again, err := json.Marshal(Run(checks[i], fx.events))
					require.NoError(t, err)
					first, err := json.Marshal(v)
					require.NoError(t, err)
					assert.True(t, bytes.Equal(first, again), "the verdict is deterministic")
				})
			}
		})
	}
}

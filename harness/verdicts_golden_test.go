package harness

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/scenario"
)

var (
	updateVerdicts = flag.Bool("update-verdicts", false, "rewrite each system's testdata/verdicts_golden.txt from this tree's runs (implies -verdicts-all)")
	verdictsAll    = flag.Bool("verdicts-all", false, "TestVerdictsUnchanged: every catalog variant and two seeds of every hunt (a minute), not only the unsafe variants")
)

// verdictsGolden holds, per run, the hash of what a run says about its
// history: results.json (verdicts, explanations, counterexample events,
// summary, checks ran and skipped, network and kernel figures), the names of
// the Porcupine visualizations attached, the printed counterexamples and the
// violation kinds. Recorded on main before the checks were made faster (issue 17);
// an optimisation of the checks must leave every hash as it is.
var verdictsGolden = golden{file: "verdicts_golden.txt", header: []string{
	"SHA-256 of what each run of TestVerdictsUnchanged (harness) reports about its checks.",
	"Rewrite with: go test ./harness -run TestVerdictsUnchanged -update-verdicts",
}}

// goldenCases are the runs whose verdicts are pinned: every catalog
// counterexample (unsafe and fixed variants, their schedules) and every hunt
// for two random seeds (60 s of random faults). By default only the unsafe
// variants run (their invalid verdicts carry the explanations); all adds the
// rest.
func goldenCases(t *testing.T, all bool) map[string]scenario.Test {
	t.Helper()
	cases := map[string]scenario.Test{}
	for _, s := range scenario.Catalog() {
		for _, v := range s.Variants {
			if all || strings.Contains(v.Name, "unsafe") {
				cases["catalog/"+s.Name+"/"+v.Name] = v.ReproTest()
			}
		}
	}
	if !all {
		return cases
	}
	for _, h := range Hunts() {
		for _, seed := range []uint64{1, 2} {
			tc, err := h.Test(seed)
			require.NoError(t, err)
			cases[fmt.Sprintf("hunt/%s/seed%d", h.Name, seed)] = tc
		}
	}
	return cases
}

// verdictHash hashes what a run reports about its checks.
func verdictHash(t *testing.T, r scenario.Result) string {
	t.Helper()
	run := judge.Report(r, "locklab run")
	js, err := json.Marshal(run)
	require.NoError(t, err)
	h := sha256.New()
	h.Write(js)
	for _, a := range run.Attachments {
		// Only the name: Porcupine orders the partial linearizations of its
		// visualization differently from one process to the next.
		fmt.Fprintf(h, "\n%s\n", a.Name)
	}
	var cx strings.Builder
	require.NoError(t, judge.PrintCounterexamples(&cx, r.Verdicts))
	fmt.Fprintf(h, "\n%s\n%v\n", cx.String(), scenario.ViolationKinds(r.Events))
	return hex.EncodeToString(h.Sum(nil))
}

// TestVerdictsUnchanged: the checks say exactly what they said before they
// were made faster, byte for byte, for every catalog run and two seeds of
// every hunt (-verdicts-all; by default the unsafe variants). Rewrite the hashes (after a deliberate change of a verdict or
// of its wording) with
//
//	go test ./harness -run TestVerdictsUnchanged -update-verdicts
func TestVerdictsUnchanged(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every catalog scenario and two seeds of every hunt")
	}
	cases := goldenCases(t, *verdictsAll || *updateVerdicts)
	names := make([]string, 0, len(cases))
	for n := range cases {
		names = append(names, n)
	}
	slices.Sort(names)
	got := map[string]string{}
	for _, n := range names {
		r, err := Run(cases[n])
		require.NoError(t, err, n)
		got[n] = verdictHash(t, r)
	}
	if *updateVerdicts {
		systemOf := map[string]string{}
		for n, tc := range cases { // determinism:ok: a lookup table
			systemOf[n] = tc.System
		}
		verdictsGolden.write(t, got, systemOf)
		return
	}
	want, _ := verdictsGolden.read(t)
	for _, n := range names {
		w, ok := want[n]
		if !ok {
			continue // a run added since the hashes were recorded
		}
		assert.Equal(t, w, got[n], "%s: the verdicts or their explanations changed", n)
	}
}

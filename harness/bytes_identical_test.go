package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/system"
)

var updateHashes = flag.Bool("update-hashes", false,
	"rewrite each system's testdata/history_hashes.txt (and raft_trace_hashes.txt) with the histories of this tree (only after a deliberate behaviour change)")

// historyGolden holds the SHA-256 of the history bytes of each guard case,
// recorded on main before the performance work of issue 17.
var historyGolden = golden{file: "history_hashes.txt", header: []string{
	"SHA-256 of the history bytes of each case of TestHistoriesAreByteIdenticalToRecordedHashes (harness).",
	"Rewrite with: go test ./harness -run TestHistoriesAreByteIdentical -update-hashes",
}}

// guardCase is one run of the byte-identity guard.
type guardCase struct {
	name string
	test scenario.Test
}

// recordedCases are the runs the registered systems declare recorded
// (System.Recorded), their histories (trace false) or their raft messages
// (trace true), named Label/Nemesis/seed=N.
func recordedCases(trace bool) []guardCase {
	var out []guardCase
	for _, s := range system.All() {
		for _, r := range s.Recorded {
			if r.Trace != trace {
				continue
			}
			for _, seed := range r.Seeds {
				out = append(out, guardCase{fmt.Sprintf("%s/%s/seed=%d", r.Label, r.Nemesis, seed),
					scenario.Test{System: s.Name, SystemOptions: r.Options, Workload: r.Workload, Nemesis: r.Nemesis, Seed: seed, Time: r.Time}})
			}
		}
	}
	return out
}

// hashLines are the lines of a rewritten hash file: the cases it held
// before in their order, then new cases in the order given, so that a
// re-record changes only the lines of the runs that changed.
func hashLines(old map[string]int, names []string, got map[string]string) []string {
	ordered := slices.Clone(names)
	slices.SortStableFunc(ordered, func(a, b string) int {
		ia, oka := old[a]
		ib, okb := old[b]
		switch {
		case oka && okb:
			return ia - ib
		case oka:
			return -1
		case okb:
			return 1
		}
		return 0
	})
	out := make([]string, len(ordered))
	for i, n := range ordered {
		out[i] = n + " " + got[n]
	}
	return out
}

// lineOrder is the order of the cases in a hash file (none if it does not
// exist yet).
func lineOrder(path string) map[string]int {
	out := map[string]int{}
	data, err := os.ReadFile(path)
	if err != nil {
		return out
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, _, ok := strings.Cut(strings.TrimSpace(line), " "); ok && !strings.HasPrefix(line, "#") {
			out[name] = len(out)
		}
	}
	return out
}

// guardCases are the runs every registered system declares recorded
// (System.Recorded: seeds under random faults, every fault kind, swarm style,
// and under single fault families), plus the two hunts whose run time issue
// 17 measures. Each runs the simulation only (no checks), so the whole
// set costs a few seconds.
func guardCases() []guardCase {
	out := recordedCases(false)
	for _, name := range []string{"kleppmann-gc-pause/redis-unsafe", "redlock-clock-jump/unsafe"} {
		h, err := FindHunt(name)
		if err != nil {
			panic(err)
		}
		for seed := range uint64(3) {
			t, err := h.Test(seed)
			if err != nil {
				panic(err)
			}
			out = append(out, guardCase{fmt.Sprintf("hunt/%s/seed=%d", name, seed), t})
		}
	}
	return out
}

// simulatedHistory runs the simulation of t (no checks) and returns its
// history as the JSON Lines a run directory holds.
func simulatedHistory(t testing.TB, tc scenario.Test) []byte {
	t.Helper()
	p, err := Prepare(tc)
	require.NoError(t, err)
	require.NoError(t, p.simulate(Watch{}))
	p.World.Close()
	var b bytes.Buffer
	require.NoError(t, history.Write(&b, p.Log.Events()))
	return b.Bytes()
}

// TestHistoriesAreByteIdenticalToRecordedHashes guards every optimisation of
// the simulator: the histories of a fixed set of seeds × systems × fault
// families hash to what they hashed to before (backends/<system>/testdata/history_hashes.txt,
// recorded on main). A change here is a change of behaviour: if it is
// deliberate, rewrite the file with -update-hashes and say why in the commit.
func TestHistoriesAreByteIdenticalToRecordedHashes(t *testing.T) {
	cases := guardCases()
	got := map[string]string{}
	for _, c := range cases {
		h := simulatedHistory(t, c.test)
		require.Greater(t, bytes.Count(h, []byte("\n")), 10, c.name)
		sum := sha256.Sum256(h)
		got[c.name] = hex.EncodeToString(sum[:])
	}
	if *updateHashes {
		systemOf := map[string]string{}
		for _, c := range cases {
			systemOf[c.name] = c.test.System
		}
		historyGolden.write(t, got, systemOf)
		return
	}
	want, _ := historyGolden.read(t)
	var names []string
	for _, c := range cases {
		names = append(names, c.name)
	}
	wantNames := make([]string, 0, len(want))
	for n := range want {
		wantNames = append(wantNames, n)
	}
	slices.Sort(wantNames)
	sortedNames := slices.Sorted(slices.Values(names))
	require.Equal(t, wantNames, sortedNames, "the recorded cases are the cases (rewrite with -update-hashes after changing the set)")
	for _, c := range cases {
		assert.Equal(t, want[c.name], got[c.name], "%s: the history changed", c.name)
	}
}

// TestGuardCasesAreDeterministic: the guard's premise — running a case twice
// gives the same bytes — holds, and different seeds give different histories.
func TestGuardCasesAreDeterministic(t *testing.T) {
	a := simulatedHistory(t, scenario.Test{System: "redis", Nemesis: "random", Seed: 1, Time: 20 * time.Second})
	b := simulatedHistory(t, scenario.Test{System: "redis", Nemesis: "random", Seed: 1, Time: 20 * time.Second})
	c := simulatedHistory(t, scenario.Test{System: "redis", Nemesis: "random", Seed: 2, Time: 20 * time.Second})
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, c)
}

package harness

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

var updateHashes = flag.Bool("update-hashes", false,
	"rewrite testdata/history_hashes.txt with the histories of this tree (only after a deliberate behaviour change)")

// hashesFile holds the SHA-256 of the history bytes of each guard case,
// recorded on main before the performance work of issue 17.
const hashesFile = "testdata/history_hashes.txt"

// guardCase is one run of the byte-identity guard.
type guardCase struct {
	name string
	test Test
}

// guardCases are seeds × systems under random faults (every fault kind, swarm
// style) and under single fault families, plus the two hunts whose run time
// issue 17 measures. Each runs the simulation only (no checks), so the whole
// set costs a few seconds.
func guardCases() []guardCase {
	type sys struct {
		name, system string
		opts         map[string]string
		time         time.Duration
		seeds        int
	}
	systems := []sys{
		{"redis", "redis", nil, time.Minute, 4},
		{"redis-replicated", "redis", map[string]string{"replicas": "2"}, time.Minute, 3},
		{"redis-fenced-stock", "redis", map[string]string{"fencing": "true"}, time.Minute, 2},
		{"redlock", "redlock", nil, time.Minute, 4},
		{"redlock-sequential-wall", "redlock", map[string]string{"fanout": "sequential", "elapsed-clock": "wall"}, time.Minute, 2},
		{"raftkv", "raftkv", nil, time.Minute, 3},
		{"etcd", "etcd", nil, time.Minute, 3},
		{"zookeeper", "zookeeper", nil, time.Minute, 3},
		{"chubby", "chubby", nil, 20 * time.Second, 2},
		{"database", "database", nil, time.Minute, 3},
		{"control", "control", nil, time.Minute, 2},
	}
	var out []guardCase
	for _, s := range systems {
		for seed := range uint64(s.seeds) {
			t := Test{System: s.system, SystemOptions: s.opts, Nemesis: "random", Seed: seed + 1, Time: s.time}
			if s.name == "redis-fenced-stock" {
				t.Workload = "stock"
			}
			out = append(out, guardCase{fmt.Sprintf("%s/random/seed=%d", s.name, seed+1), t})
		}
	}
	families := []struct{ system, nemesis string }{
		{"redis", "pause"}, {"redis", "partition"}, {"redis", "clock"}, {"redis", "crash"}, {"redis", "delay"},
		{"redlock", "pause"}, {"redlock", "clock"}, {"redlock", "crash"}, {"redlock", "partition,delay"},
		{"raftkv", "partition"}, {"raftkv", "clock"}, {"raftkv", "crash,pause"},
	}
	for _, f := range families {
		out = append(out, guardCase{fmt.Sprintf("%s/%s/seed=5", f.system, f.nemesis),
			Test{System: f.system, Nemesis: f.nemesis, Seed: 5, Time: time.Minute}})
	}
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
func simulatedHistory(t testing.TB, tc Test) []byte {
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
// families hash to what they hashed to before (testdata/history_hashes.txt,
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
		var b strings.Builder
		b.WriteString("# SHA-256 of the history bytes of each case of TestHistoriesAreByteIdenticalToRecordedHashes.\n")
		b.WriteString("# Rewrite with: go test ./harness -run TestHistoriesAreByteIdentical -update-hashes\n")
		for _, c := range cases {
			fmt.Fprintf(&b, "%s %s\n", c.name, got[c.name])
		}
		require.NoError(t, os.MkdirAll(filepath.Dir(hashesFile), 0o755))
		tmp := hashesFile + ".tmp"
		require.NoError(t, os.WriteFile(tmp, []byte(b.String()), 0o644))
		require.NoError(t, os.Rename(tmp, hashesFile))
		return
	}
	want := readHashes(t)
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

func readHashes(t *testing.T) map[string]string {
	t.Helper()
	f, err := os.Open(hashesFile)
	require.NoError(t, err)
	defer f.Close()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, sum, ok := strings.Cut(line, " ")
		require.True(t, ok, "%s: bad line %q", hashesFile, line)
		out[name] = sum
	}
	require.NoError(t, sc.Err())
	return out
}

// TestGuardCasesAreDeterministic: the guard's premise — running a case twice
// gives the same bytes — holds, and different seeds give different histories.
func TestGuardCasesAreDeterministic(t *testing.T) {
	a := simulatedHistory(t, Test{System: "redis", Nemesis: "random", Seed: 1, Time: 20 * time.Second})
	b := simulatedHistory(t, Test{System: "redis", Nemesis: "random", Seed: 1, Time: 20 * time.Second})
	c := simulatedHistory(t, Test{System: "redis", Nemesis: "random", Seed: 2, Time: 20 * time.Second})
	assert.Equal(t, a, b)
	assert.NotEqual(t, a, c)
}

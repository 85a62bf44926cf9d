package placement

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/nemesis"
)

var (
	twoClients = Topology{Clients: []string{"c1", "c2"}, Servers: []string{"zk1", "zk2", "zk3"}, Roles: []string{"leader"}, Storage: "storage"}
	session    = []Timeout{{Name: "session-timeout 10s", D: 10 * time.Second}}
)

func TestEveryPlacementIsAValidFault(t *testing.T) {
	for _, family := range Families {
		t.Run(string(family), func(t *testing.T) {
			set := Enumerate(string(family), twoClients, Bound{Timeouts: Chained(session), RunTime: 30 * time.Second})
			require.NotEmpty(t, set.Faults)
			assert.NotEmpty(t, set.Words)
			for i, f := range set.Faults {
				require.Equal(t, family, f.Kind)
				require.NoError(t, nemesis.Schedule{Faults: []nemesis.Fault{f}}.Validate(), "placement %d: %+v", i, f)
				require.NotNil(t, f.After, "placement %d starts at a protocol step", i)
			}
		})
	}
}

func TestThePauseWindowIsCovered(t *testing.T) {
	set := Enumerate("pause", twoClients, Bound{Timeouts: session})
	// The counterexample of fencing writes alone: the holder paused after
	// its read, resumed as the new holder invokes its read.
	want := nemesis.Fault{Kind: nemesis.Pause, Targets: []string{"c1"},
		After: &nemesis.Trigger{Node: "c1", F: history.FRead, Nth: 1},
		Until: &nemesis.Trigger{Node: "c2", F: history.FRead, Type: "invoke"}}
	assert.Contains(t, keys(set.Faults), key(want))
	// And in each of the first two sections, with each offset.
	for _, d := range []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 50 * time.Millisecond} {
		w := want
		w.After = &nemesis.Trigger{Node: "c2", F: history.FRead, Nth: 2}
		w.Targets = []string{"c2"}
		w.Until = &nemesis.Trigger{Node: "c1", F: history.FRead, Type: "invoke", Delay: nemesis.Duration(d)}
		assert.Contains(t, keys(set.Faults), key(w), "offset %v", d)
	}
}

func TestLengthsStraddleEachTimeout(t *testing.T) {
	ls := lengths(Chained([]Timeout{{"lease 12s", 12 * time.Second}, {"lock-delay 1m0s", time.Minute}, {"tick 1s", time.Second}}))
	for _, d := range []time.Duration{12*time.Second - 10*time.Millisecond, 12*time.Second + 10*time.Millisecond, 18 * time.Second,
		time.Minute + 10*time.Millisecond, 72*time.Second + 10*time.Millisecond} {
		assert.Contains(t, ls, d)
	}
	assert.IsIncreasing(t, ls)
}

func TestChainedKeepsTheTwoLongestAndTheirSum(t *testing.T) {
	got := Chained([]Timeout{{"tick 1s", time.Second}, {"lease 12s", 12 * time.Second}, {"lock-delay 1m0s", time.Minute}})
	assert.Equal(t, []Timeout{{"lock-delay 1m0s", time.Minute}, {"lease 12s", 12 * time.Second}, {"lock-delay 1m0s + lease 12s", 72 * time.Second}}, got)
	assert.Equal(t, 72*time.Second, Longest(got))
	assert.Len(t, Chained(session), 1)
}

func TestDriftsAddUpPastEachTimeoutWithinTheRun(t *testing.T) {
	set := Enumerate("clock-drift", twoClients, Bound{Timeouts: session, RunTime: 20 * time.Second})
	rates := map[float64]bool{}
	for _, f := range set.Faults {
		rates[f.Drift] = true
	}
	assert.True(t, rates[0.75] && rates[-0.75], "1.5 x 10 s over a 20-s run: %v", rates)
	assert.True(t, rates[0.5] && rates[-0.5])
}

func TestTheSwarmFamilyHasNoEnumeration(t *testing.T) {
	assert.Empty(t, Enumerate("random", twoClients, Bound{}).Faults)
	assert.Empty(t, Enumerate("meteor", twoClients, Bound{}).Faults)
}

func TestEnumerationIsDeterministicAndHasNoRepeats(t *testing.T) {
	a := Enumerate("crash", twoClients, Bound{Timeouts: Chained(session)})
	b := Enumerate("crash", twoClients, Bound{Timeouts: Chained(session)})
	assert.Equal(t, keys(a.Faults), keys(b.Faults))
	seen := map[string]bool{}
	for _, k := range keys(a.Faults) {
		assert.False(t, seen[k], "repeated: %s", k)
		seen[k] = true
	}
}

func keys(fs []nemesis.Fault) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = key(f)
	}
	return out
}

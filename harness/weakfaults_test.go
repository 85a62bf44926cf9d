package harness

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/system"
)

// TestWeakFaultsWarnOnKubernetesPauses: Kubernetes' random pauses (at most
// 15 s) never outlast its 15 s Lease: seeds 1 to 12 of `run --system
// kubernetes --nemesis pause` are valid, and each warns that no pause reached
// the Lease, naming the longest.
func TestWeakFaultsWarnOnKubernetesPauses(t *testing.T) {
	for seed := uint64(1); seed <= 12; seed++ {
		r, err := Run(scenario.Test{System: "kubernetes", Nemesis: "pause", Seed: seed})
		require.NoError(t, err)
		f := judge.FaultsOf(r)
		require.Len(t, f.Weak, 1, "seed %d", seed)
		assert.Regexp(t, `^no pause reached the Lease \(lease-duration 15s\): the longest of \d+ was 1?\d\.\d+s, on `, f.Weak[0], "seed %d", seed)
		assert.Contains(t, f.WeakWarning, "faults too short to test the design: "+f.Weak[0], "seed %d", seed)
	}
}

// TestWeakFaultsNeverWarnWhereAFaultReachedTheTimeout runs the catalog: a
// variant whose faults of a kind reached the design's timeout for it is
// never warned about that kind, and a variant warned about a kind has no
// fault of that kind as long as the timeout. The scenarios that break a lock
// by pausing its holder past the lease are among the first.
func TestWeakFaultsNeverWarnWhereAFaultReachedTheTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the catalog")
	}
	reachedSome := 0
	for _, s := range scenario.Catalog() {
		for _, v := range s.Variants {
			r, err := Run(v.ReproTest())
			require.NoError(t, err, "%s/%s", s.Name, v.Name)
			sys, err := system.Find(r.Test.System)
			require.NoError(t, err)
			opts := r.Test.Effective().SystemOptions
			weak := map[string]judge.WeakFault{}
			for _, w := range judge.WeakFaults(r.Test, r.Schedule, r.FaultOutcomes) {
				weak[w.Kind] = w
			}
			for _, o := range r.FaultOutcomes {
				if !o.Fired {
					continue
				}
				f := r.Schedule.Faults[o.Fault]
				length := time.Duration(f.Duration)
				if f.Kind == nemesis.Delay {
					length = time.Duration(f.Amount)
				}
				for _, to := range sys.Timeouts {
					timeout, err := time.ParseDuration(opts[to.Option])
					require.NoError(t, err)
					if !slices.Contains(to.Kinds, string(f.Kind)) || length < timeout {
						continue
					}
					reachedSome++
					_, warned := weak[string(f.Kind)]
					assert.False(t, warned, "%s/%s: its %s of %v reached %s (%v), yet it is warned: %v",
						s.Name, v.Name, f.Kind, length, to.What, timeout, weak[string(f.Kind)])
				}
			}
			for kind, w := range weak {
				assert.Less(t, w.Longest, w.Timeout, "%s/%s: warned about %s", s.Name, v.Name, kind)
				assert.True(t, strings.HasPrefix(w.String(), "no "+kind+" reached "), w.String())
			}
		}
	}
	assert.Greater(t, reachedSome, 20, "the catalog has faults that reach a timeout")
}

// TestAFaultEndedByAnEventIsNeverCalledShort: a pause ended by c2's read
// (until) has no length in its schedule; the run lasts it 10 s, past the
// session timeout, and no warning calls it 0 s long.
func TestAFaultEndedByAnEventIsNeverCalledShort(t *testing.T) {
	pause := nemesis.Fault{Kind: nemesis.Pause, Targets: []string{"c1"},
		After: &nemesis.Trigger{Node: "c1", F: "read", Nth: 2},
		Until: &nemesis.Trigger{Node: "c2", F: "read", Delay: nemesis.Duration(time.Millisecond)}}
	r, err := Run(scenario.Test{System: "zookeeper", Clients: 2, Seed: 3, Time: 30 * time.Second,
		Schedule: &nemesis.Schedule{Faults: []nemesis.Fault{pause}}})
	require.NoError(t, err)
	f := judge.FaultsOf(r)
	require.Equal(t, 1, f.Fired["pause"], "the pause fired")
	assert.Empty(t, f.Weak)
	assert.Empty(t, f.WeakWarning)
}

package harness

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

// TestReleasedRunsRecordTheSameHistories: runs that record into the storage
// of released ones (a sweep's: the history's, and a raftkv cluster's logs and
// audit) have the same history bytes and verdicts as runs whose results are
// kept, across systems and history lengths.
func TestReleasedRunsRecordTheSameHistories(t *testing.T) {
	type outcome struct {
		sum      [32]byte
		overall  models.Result
		kinds    []string
		verdicts []string
	}
	var tests []scenario.Test
	for _, name := range []string{"kleppmann-gc-pause/redis-unsafe", "redlock-clock-jump/unsafe",
		"redis-failover/unsafe", "kleppmann-network-delay/redis-unsafe"} {
		h, err := FindHunt(name)
		require.NoError(t, err)
		for _, d := range []time.Duration{30 * time.Second, 5 * time.Second, time.Minute} {
			h.Time = d
			for _, seed := range []uint64{0, 1} {
				tc, err := h.Test(seed)
				require.NoError(t, err)
				tests = append(tests, tc)
			}
		}
	}
	for _, d := range []time.Duration{20 * time.Second, 5 * time.Second, time.Minute} {
		for _, seed := range []uint64{0, 1} {
			tests = append(tests, scenario.Test{System: "raftkv", Nemesis: "random", Time: d, Seed: seed})
		}
	}
	runAll := func(release bool) map[string]outcome {
		out := map[string]outcome{}
		for i, tc := range tests {
			r := run(t, tc)
			var b bytes.Buffer
			require.NoError(t, history.Write(&b, r.Events))
			var verdicts []string
			for _, v := range r.Verdicts {
				verdicts = append(verdicts, fmt.Sprintf("%s %s: %s", v.Check, v.Result, v.Reason))
			}
			out[fmt.Sprintf("%d %s %v seed %d", i, tc.System, tc.Time, tc.Seed)] = outcome{sha256.Sum256(b.Bytes()),
				r.Overall, r.ViolationKinds(), verdicts}
			if release {
				r.Release()
				assert.Nil(t, r.Events)
			}
		}
		return out
	}
	released := runAll(true)
	kept := runAll(false)
	require.Len(t, released, 30)
	assert.Equal(t, kept, released)
}

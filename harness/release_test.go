package harness

import (
	"bytes"
	"crypto/sha256"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// TestReleasedRunsRecordTheSameHistories: runs that record into the storage
// of released ones (a sweep's) have the same history bytes and verdicts as
// runs whose results are kept, across systems and history lengths.
func TestReleasedRunsRecordTheSameHistories(t *testing.T) {
	type outcome struct {
		sum     [32]byte
		overall models.Result
		kinds   []string
	}
	runAll := func(release bool) map[string]outcome {
		out := map[string]outcome{}
		for _, name := range []string{"kleppmann-gc-pause/redis-unsafe", "redlock-clock-jump/unsafe",
			"redis-failover/unsafe", "kleppmann-network-delay/redis-unsafe"} {
			h, err := FindHunt(name)
			require.NoError(t, err)
			for _, d := range []time.Duration{30 * time.Second, 5 * time.Second, time.Minute} {
				h.Time = d
				for _, seed := range []uint64{0, 1} {
					tc, err := h.Test(seed)
					require.NoError(t, err)
					r := run(t, tc)
					var b bytes.Buffer
					require.NoError(t, history.Write(&b, r.Events))
					out[name+"/"+d.String()+"/"+string(rune('0'+seed))] = outcome{sha256.Sum256(b.Bytes()), r.Overall, r.ViolationKinds()}
					if release {
						r.Release()
						assert.Nil(t, r.Events)
					}
				}
			}
		}
		return out
	}
	released := runAll(true)
	kept := runAll(false)
	require.Len(t, released, 24)
	assert.Equal(t, kept, released)
}

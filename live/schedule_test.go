package live

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/scenario"
)

// TestALiveRunDrawsTheSimulatedRunsSchedule: for every live system and
// seeds 1-8, a live run of --nemesis pause,crash (and partition, unless it
// draws a cut the live system cannot make) draws exactly the simulated run's schedule, and
// --nemesis random draws the simulated --live-comparable run's, from the
// kinds the live system performs only: it is never refused. Nothing starts.
func TestALiveRunDrawsTheSimulatedRunsSchedule(t *testing.T) {
	for _, sys := range Systems() {
		for _, nem := range []string{"pause,crash,partition", "pause,crash", "random"} {
			for seed := uint64(1); seed <= 8; seed++ {
				test := scenario.Test{System: sys, Clients: 3, Time: 20 * time.Second, Seed: seed, Nemesis: nem}.WithDefaults()
				t.Run(fmt.Sprintf("%s/%s/%d", sys, nem, seed), func(t *testing.T) {
					p, err := Prepare(test, Config{})
					if nem == "pause,crash,partition" && err != nil {
						// Only a partition the live system cannot do is refused.
						if !errors.Is(err, ErrNotLive) {
							assert.ErrorContains(t, err, "nemesis partition")
						}
						return
					}
					require.NoError(t, err)
					simTest := test
					simTest.LiveComparable = true
					sp, err := harness.Prepare(simTest)
					require.NoError(t, err)
					sp.World.Close()
					want, _ := json.Marshal(sp.Schedule)
					got, _ := json.Marshal(p.Schedule)
					assert.JSONEq(t, string(want), string(got))
					if nem == "random" {
						kinds, _, err := liveform.RandomKinds(test)
						require.NoError(t, err)
						for _, f := range p.Schedule.Faults {
							assert.Contains(t, kinds, f.Kind)
						}
					}
				})
			}
		}
	}
}

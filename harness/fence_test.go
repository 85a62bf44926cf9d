package harness

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
)

// TestLostUpdatesBehindAFence are the random-fault seeds of issue 10, item
// 3b: fenced storage, tokens in order (fencing-tokens valid), and still a
// lost update, because the newer holder had only read when the older one
// wrote. The verdict says so and names the remedy; with fenced reads every
// one of them is valid.
func TestLostUpdatesBehindAFence(t *testing.T) {
	tests := []struct {
		test  scenario.Test
		seeds []uint64
	}{
		{scenario.Test{System: "raftkv"}, []uint64{53, 58, 59, 83, 106, 119}},
		{scenario.Test{System: "redlock", SystemOptions: map[string]string{"token": "external"}}, []uint64{417}},
	}
	for _, tc := range tests {
		for _, seed := range tc.seeds {
			t.Run(fmt.Sprintf("%s/seed-%d", tc.test.System, seed), func(t *testing.T) {
				t.Parallel()
				test := tc.test
				test.Storage, test.Nemesis, test.Seed = storage.Fenced, "random", seed
				test.Checks = []string{"critical-sections", "fencing-tokens"}
				r := run(t, test)
				cs := verdict(r, "critical-sections")
				assert.Equal(t, models.Invalid, cs.Result, cs.Reason)
				assert.Contains(t, cs.Reason, "the fence let both writes through")
				if assert.NotNil(t, cs.Counterexample) {
					text := strings.Join(cs.Counterexample.Explanation, "\n")
					assert.Contains(t, text, "had only read with it")
					assert.Contains(t, text, "--fence-reads")
				}
				assert.Equal(t, models.Valid, verdict(r, "fencing-tokens").Result)

				test.FenceReads = true
				r = run(t, test)
				cs = verdict(r, "critical-sections")
				assert.Equal(t, models.Valid, cs.Result, "with fenced reads: %s", cs.Reason)
			})
		}
	}
}

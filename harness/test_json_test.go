package harness

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/scenario"
)

func TestConfigurationRecordsDurationsAsDurations(t *testing.T) {
	tests := []struct {
		test scenario.Test
		want map[string]any
	}{
		{scenario.Test{Time: time.Minute, CheckBudget: 60 * time.Second},
			map[string]any{"time": "1m0s", "check_budget": "1m0s"}},
		{scenario.Test{Time: 1500 * time.Millisecond, CheckBudget: scenario.Unbounded},
			map[string]any{"time": "1.5s", "check_budget": "unbounded"}},
	}
	for _, tc := range tests {
		b, err := json.Marshal(tc.test.WithDefaults())
		require.NoError(t, err)
		var got map[string]any
		require.NoError(t, json.Unmarshal(b, &got))
		for k, v := range tc.want {
			assert.Equal(t, v, got[k], "%s in %s", k, b)
		}
		assert.Equal(t, "redis", got["system"], "the other fields are written as before")
		assert.EqualValues(t, 5, got["clients"])
	}
}

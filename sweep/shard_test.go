package sweep

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAutoShardReadsTheEngines(t *testing.T) {
	for _, tc := range []struct {
		name  string
		count int
		env   map[string]string
		want  Shard
		err   string
	}{
		{"kubernetes indexed job", 4, map[string]string{"JOB_COMPLETION_INDEX": "0"}, Shard{0, 4}, ""},
		{"slurm array from 1", 0, map[string]string{"SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_COUNT": "3"}, Shard{2, 3}, ""},
		{"gnu parallel counts from 1", 0, map[string]string{"PARALLEL_SEQ": "4", "LOCKLAB_SHARDS": "4"}, Shard{3, 4}, ""},
		{"index past the count", 2, map[string]string{"JOB_COMPLETION_INDEX": "2"}, Shard{}, "outside 0..1"},
		{"no count", 0, map[string]string{"PARALLEL_SEQ": "1"}, Shard{}, "how many shards"},
		{"no engine", 2, nil, Shard{}, "none of JOB_COMPLETION_INDEX"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AutoShard(tc.count, func(k string) string { return tc.env[k] })
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestParseShard(t *testing.T) {
	s, err := ParseShard("1/4")
	require.NoError(t, err)
	assert.Equal(t, Shard{1, 4}, s)
	for _, bad := range []string{"4/4", "-1/2", "1", "a/b", "0/0"} {
		_, err := ParseShard(bad)
		assert.Error(t, err, bad)
	}
}

package sweep

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseShard reads "i/n" (0 <= i < n).
func ParseShard(s string) (Shard, error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return Shard{}, fmt.Errorf("--shard %q: want i/n with 0 <= i < n (e.g. 0/4), or auto", s)
	}
	return Shard{Index: i, Count: n}, nil
}

// AutoShard finds this process's shard in the environment of the engine that
// started it: a Kubernetes Indexed Job (JOB_COMPLETION_INDEX, from 0), a Slurm
// job array (SLURM_ARRAY_TASK_ID, counted from SLURM_ARRAY_TASK_MIN, default
// 0), or GNU parallel (PARALLEL_SEQ, from 1). The number of shards is count
// when positive, else LOCKLAB_SHARDS, else SLURM_ARRAY_TASK_COUNT.
func AutoShard(count int, getenv func(string) string) (Shard, error) {
	if count <= 0 {
		for _, name := range []string{"LOCKLAB_SHARDS", "SLURM_ARRAY_TASK_COUNT"} {
			if v := getenv(name); v != "" {
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					return Shard{}, fmt.Errorf("--shard auto: %s=%q is not a number of shards", name, v)
				}
				count = n
				break
			}
		}
	}
	if count <= 0 {
		return Shard{}, fmt.Errorf("--shard auto: how many shards? give --shards N (or set LOCKLAB_SHARDS)")
	}
	index := func(name string, base int) (Shard, error) {
		v := getenv(name)
		i, err := strconv.Atoi(v)
		if err != nil {
			return Shard{}, fmt.Errorf("--shard auto: %s=%q is not a number", name, v)
		}
		i -= base
		if i < 0 || i >= count {
			return Shard{}, fmt.Errorf("--shard auto: %s=%q is shard %d, outside 0..%d (%d shards)", name, v, i, count-1, count)
		}
		return Shard{Index: i, Count: count}, nil
	}
	switch {
	case getenv("JOB_COMPLETION_INDEX") != "":
		return index("JOB_COMPLETION_INDEX", 0)
	case getenv("SLURM_ARRAY_TASK_ID") != "":
		base := 0
		if v := getenv("SLURM_ARRAY_TASK_MIN"); v != "" {
			b, err := strconv.Atoi(v)
			if err != nil {
				return Shard{}, fmt.Errorf("--shard auto: SLURM_ARRAY_TASK_MIN=%q is not a number", v)
			}
			base = b
		}
		return index("SLURM_ARRAY_TASK_ID", base)
	case getenv("PARALLEL_SEQ") != "":
		return index("PARALLEL_SEQ", 1)
	}
	return Shard{}, fmt.Errorf("--shard auto: none of JOB_COMPLETION_INDEX (Kubernetes), SLURM_ARRAY_TASK_ID (Slurm) or PARALLEL_SEQ (GNU parallel) is set")
}

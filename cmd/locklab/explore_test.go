package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/harness"
)

func TestExploreReportsSeedsToFirstViolation(t *testing.T) {
	code, stdout, stderr := capture(t, "explore", "--hunt", "redis+gc-pause", "--starts", "2", "--max-seeds", "300", "--progress=false")
	assert.Equal(t, harness.ExitValid, code, stderr)
	assert.Contains(t, stdout, "HUNT")
	assert.Contains(t, stdout, "redis+gc-pause  kleppmann-gc-pause/redis-unsafe")
	assert.Contains(t, stdout, "2/2")
	assert.Contains(t, stdout, "redis+gc-pause first found at seed")
	assert.Contains(t, stdout, "--nemesis random")
	assert.Empty(t, stderr, "no progress bar when asked not to")
}

func TestExploreWithoutAFindingExitsUnknown(t *testing.T) {
	code, stdout, _ := capture(t, "explore", "--hunt", "redis+gc-pause", "--first", "1", "--starts", "1", "--max-seeds", "1", "--progress=false")
	assert.Equal(t, harness.ExitUnknown, code, stdout)
	assert.Contains(t, stdout, ">1")
	code, _, stderr := capture(t, "explore", "--hunt", "yeti")
	assert.Equal(t, harness.ExitUsage, code)
	assert.Contains(t, stderr, `unknown hunt "yeti"`)
}

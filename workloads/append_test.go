package workloads

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestListAppendOptions(t *testing.T) {
	w := DefaultListAppend()
	assert.Equal(t, 8, w.Max)
	assert.NoError(t, w.Set("max", "3"))
	assert.NoError(t, w.Set("keys", "2"))
	assert.NoError(t, w.Set("hold", "1s"))
	assert.Equal(t, 3, w.Max)
	assert.Equal(t, []string{"k0", "k1"}, w.Keys)
	assert.Equal(t, time.Second, w.Hold)
	assert.ErrorContains(t, w.Set("max", "0"), `list-append option max="0": must be at least 1`)
	assert.ErrorContains(t, w.Set("hold", "long"), `list-append option hold="long"`)
	assert.ErrorContains(t, w.Set("colour", "red"), `list-append has no option "colour"`)
}

func TestElementsAreUniquePerClientAndIteration(t *testing.T) {
	seen := map[int64]bool{}
	for _, node := range []string{"c1", "c2", "c3", "c10"} {
		for seq := int64(1); seq < 50; seq++ {
			x := elementOf(node, seq)
			assert.False(t, seen[x], "%s %d", node, seq)
			seen[x] = true
		}
	}
}

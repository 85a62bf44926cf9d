package workloads

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestReentrantOptions(t *testing.T) {
	w := DefaultReentrant()
	assert.NoError(t, w.Set("depth", "3"))
	assert.NoError(t, w.Set("keys", "2"))
	assert.Equal(t, 3, w.Depth)
	assert.Equal(t, []string{"k0", "k1"}, w.Keys)
	assert.ErrorContains(t, w.Set("depth", "0"), `reentrant option depth="0": must be in 1..16`)
	assert.ErrorContains(t, w.Set("wait", "forever"), `wait="forever"`)
	assert.ErrorContains(t, w.Set("colour", "red"), `reentrant has no option "colour"`)
}

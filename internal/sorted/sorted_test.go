package sorted

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestKeysAreInIncreasingOrder(t *testing.T) {
	assert.Equal(t, []string{"a", "b", "c"}, Keys(map[string]bool{"c": true, "a": false, "b": true}))
	assert.Equal(t, []int64{-1, 2, 7}, Keys(map[int64]int{7: 0, -1: 0, 2: 0}))
	assert.Empty(t, Keys(map[string]int(nil)), "a nil map has no keys")
}

package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBlocksCarveValuesThatNeverMove: carved values keep their addresses
// while more are carved, have no room to append, and after reset the same
// memory is carved again.
func TestBlocksCarveValuesThatNeverMove(t *testing.T) {
	var b blocks[int]
	var firsts []*int
	for i := range 1000 {
		n := 1 + i%5
		if i == 500 {
			n = 2 * blockMax // larger than a block
		}
		v := b.carve(n)
		require.Len(t, v, n)
		require.Equal(t, n, cap(v))
		v[0] = i
		firsts = append(firsts, &v[0])
	}
	for i, p := range firsts {
		assert.Equal(t, i, *p)
	}
	blocksBefore := len(b.all)
	b.reset()
	for i := range 1000 {
		b.carve(1 + i%5)
	}
	assert.LessOrEqual(t, len(b.all), blocksBefore+1, "reset memory is carved again")
}

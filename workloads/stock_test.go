package workloads

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestStockOptionsAndQuantities(t *testing.T) {
	w := DefaultStock()
	assert.Equal(t, map[string]int64{"stock": 4}, w.Initial())
	assert.Equal(t, 3, w.Quantity("c1"))
	assert.Equal(t, 2, w.Quantity("c2"))
	assert.Equal(t, 3, w.Quantity("c3"))
	assert.Equal(t, 3, w.Quantity("buyer"))
	require.NoError(t, w.Set("quantities", "1,2,5"))
	require.NoError(t, w.Set("items", "10"))
	require.NoError(t, w.Set("hold", "1s"))
	assert.Equal(t, 5, w.Quantity("c3"))
	assert.Equal(t, map[string]int64{"stock": 10}, w.Initial())
	assert.Equal(t, time.Second, w.Hold)
	assert.ErrorContains(t, w.Set("quantities", "2,0"), `stock option quantities="2,0"`)
	assert.ErrorContains(t, w.Set("items", "-1"), "0..1000000")
	assert.ErrorContains(t, w.Set("colour", "red"), `no option "colour"`)
}

package workloads

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOnCallOptionsAndRows(t *testing.T) {
	w := DefaultOnCall()
	assert.Equal(t, 2, w.Doctors)
	assert.Equal(t, map[string]int64{"oncall/d1": 1, "oncall/d2": 1}, w.Initial(), "every doctor starts on call")
	assert.Equal(t, 1, w.Doctor("c1"))
	assert.Equal(t, 2, w.Doctor("c2"))
	assert.Equal(t, 1, w.Doctor("c3"), "clients beyond the doctors play them again")
	require.NoError(t, w.Set("doctors", "3"))
	require.NoError(t, w.Set("hold", "1s"))
	assert.Equal(t, time.Second, w.Hold)
	assert.Equal(t, 3, w.Doctor("c3"))
	assert.Len(t, w.Initial(), 3)
	assert.ErrorContains(t, w.Set("doctors", "1"), "oncall option doctors")
	assert.ErrorContains(t, w.Set("colour", "red"), `no option "colour"`)
}

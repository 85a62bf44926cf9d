package history

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOperationsAndFaultWindows(t *testing.T) {
	evs, err := Read(strings.NewReader(`{"time":0,"process":0,"type":"invoke","f":"acquire","key":"k"}
{"time":1,"process":1,"type":"invoke","f":"acquire","key":"k"}
{"time":2,"process":-1,"type":"start","f":"pause","targets":["a"],"detail":"long"}
{"time":3,"process":-1,"type":"start","f":"pause","targets":["a"],"detail":"long"}
{"time":4,"process":1,"type":"ok","f":"acquire","key":"k"}
{"time":5,"process":-1,"type":"stop","f":"pause","targets":["a"],"detail":"long"}
{"time":6,"process":0,"type":"info","f":"acquire","key":"k"}
{"time":7,"process":2,"type":"invoke","f":"read","key":"k"}
`), "t")
	require.NoError(t, err)
	ops := Operations(evs)
	require.Len(t, ops, 3)
	assert.Equal(t, Info, ops[0].Outcome())
	assert.Equal(t, int64(math.MaxInt64), ops[0].ReturnIndex(), "an info outcome may take effect any time")
	assert.Equal(t, OK, ops[1].Outcome())
	assert.Equal(t, int64(4), ops[1].ReturnIndex())
	lat, ok := ops[1].Latency()
	assert.True(t, ok)
	assert.Equal(t, int64(3), lat)
	assert.Equal(t, Info, ops[2].Outcome(), "an operation cut off by the end counts as info")
	_, ok = ops[2].Latency()
	assert.False(t, ok)

	ws := FaultWindows(evs)
	require.Len(t, ws, 2)
	assert.Equal(t, int64(2), ws[0].Start.Time, "first in, first out")
	assert.Equal(t, int64(5), ws[0].End())
	assert.Nil(t, ws[1].Stop)
	assert.Equal(t, int64(math.MaxInt64), ws[1].End())
}

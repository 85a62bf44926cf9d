package redis

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFormatArgWritesWhatGoRedisWrites: every argument type go-redis's
// proto.Writer.WriteArg accepts is written as go-redis writes it; any other
// is refused with go-redis's error.
func TestFormatArgWritesWhatGoRedisWrites(t *testing.T) {
	s := "text"
	var nilString *string
	for _, tc := range []struct {
		arg  any
		want string
	}{
		{nil, ""},
		{"k", "k"},
		{&s, "text"},
		{nilString, ""},
		{[]byte("b"), "b"},
		{int(-5), "-5"}, {int8(-8), "-8"}, {int16(16), "16"}, {int32(-32), "-32"}, {int64(1 << 40), "1099511627776"},
		{uint(5), "5"}, {uint8(8), "8"}, {uint16(16), "16"}, {uint32(32), "32"}, {uint64(1 << 63), "9223372036854775808"},
		{float32(0.5), "0.5"}, {float32(0.1), "0.10000000149011612"}, {float64(2.25), "2.25"},
		{true, "1"}, {false, "0"},
		{time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC), "2026-01-02T03:04:05.000000006Z"},
		{1500 * time.Millisecond, "1500000000"},
		{net.IP("\x7f\x00\x00\x01"), "\x7f\x00\x00\x01"},
	} {
		got, err := formatArg(tc.arg)
		require.NoError(t, err, "%T", tc.arg)
		assert.Equal(t, tc.want, got, "%T %v", tc.arg, tc.arg)
	}
	_, err := formatArg(struct{}{})
	assert.EqualError(t, err, "redis: can't marshal struct {} (implement encoding.BinaryMarshaler)")
}

package history

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestFormatDurationIsOneRoundedFormat(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{850, "850ns"},
		{12_345, "12.3µs"},
		{104_612_345, "104.6ms"},
		{51_149_999, "51.1ms"},
		{1_500_000, "1.5ms"},
		{999_960_000, "1s"},
		{10_004_829_772, "10.005s"},
		{14_998_000_000, "14.998s"},
		{11_047_000_000, "11.047s"},
		{90_250_400_000, "1m30.25s"},
		{time.Hour + 3*time.Millisecond + 400, "1h0m0.003s"},
		{-104_612_345, "-104.6ms"},
		{-2_000_400_000, "-2s"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			assert.Equal(t, tc.want, FormatDuration(int64(tc.d)))
		})
	}
}

func TestPluralAgreesWithItsCount(t *testing.T) {
	tests := []struct {
		n            int
		noun, plural string
		want         string
	}{
		{0, "key", "", "0 keys"},
		{1, "key", "", "1 key"},
		{2, "key", "", "2 keys"},
		{1, "event", "", "1 event"},
		{10, "event", "", "10 events"},
		{1, "process", "processes", "1 process"},
		{3, "process", "processes", "3 processes"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, Plural(tc.n, tc.noun, tc.plural))
	}
}

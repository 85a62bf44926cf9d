package history

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPresetIDsAreThePresetsNumbers: the strings found without hashing have
// the numbers every log gives the presets, and other strings are not presets.
func TestPresetIDsAreThePresetsNumbers(t *testing.T) {
	for i, p := range presets[1:] {
		id, ok := presetID(p)
		assert.True(t, ok, p)
		assert.Equal(t, uint32(i+1), id, p)
	}
	for _, s := range []string{"", "lock", "invoked", "ok ", "Acquire", "c1-1"} {
		_, ok := presetID(s)
		assert.False(t, ok, "%q", s)
	}
	var in interner
	for i, p := range presets[1:] {
		assert.Equal(t, uint32(i+1), in.id(p), p)
	}
	first := in.id("lock")
	assert.Equal(t, uint32(len(presets)), first, "the first other string comes after the presets")
	assert.Equal(t, "lock", in.strs[first])
	assert.Equal(t, first, in.id(string([]byte("lock"))), "an equal string has the same number")
}

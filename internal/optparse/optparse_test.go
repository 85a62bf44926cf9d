package optparse

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestPositiveDuration(t *testing.T) {
	d, err := PositiveDuration("1.5s")
	assert.NoError(t, err)
	assert.Equal(t, 1500*time.Millisecond, d)
	_, err = PositiveDuration("0s")
	assert.ErrorContains(t, err, "must be positive")
	_, err = PositiveDuration("soon")
	assert.ErrorContains(t, err, `invalid duration "soon"`)
}

func TestOneOf(t *testing.T) {
	type colour string
	c, err := OneOf("red", colour("red"), colour("blue"))
	assert.NoError(t, err)
	assert.Equal(t, colour("red"), c)
	_, err = OneOf("green", colour("red"), colour("blue"))
	assert.ErrorContains(t, err, "want one of [red blue]")
}

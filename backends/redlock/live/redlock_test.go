package redlocklive

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/backends/redlock"
)

func TestOptionsRedsyncCannotHonourAreRefused(t *testing.T) {
	r := redlock.DefaultOptions()
	assert.NoError(t, CheckOptions(r))
	r.Token = redlock.TokenExternal
	assert.NoError(t, CheckOptions(r), "token=external: INCR on a separate instance")
	r.Token = redlock.TokenIncr
	assert.ErrorContains(t, CheckOptions(r), "token=incr has no live form")
}

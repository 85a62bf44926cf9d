package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestGrantedBy(t *testing.T) {
	assert.True(t, grantedBy("granted by redis-a,redis-c,redis-e (3/5), validity 9s", []string{"redis-c"}))
	assert.False(t, grantedBy("granted by redis-a,redis-b (2/5)", []string{"redis-c"}))
	assert.True(t, grantedBy("granted by replica1, WAIT 1: 1 replica(s) acknowledged", []string{"replica1"}))
	assert.False(t, grantedBy("", []string{"redis"}))
}

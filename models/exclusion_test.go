package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestOverlapCounterexampleNamesTheFault(t *testing.T) {
	v := Run(MutualExclusion{}, parseHistory(t, `
		0    p0 c1 invoke acquire k
		1    p0 c1 ok     acquire k owner=a deadline=100
		1    nemesis start pause c1
		5    nemesis start pause c3
		6    nemesis stop pause c3
		7    p2 c3 invoke acquire k
		8    p2 c3 fail   acquire k
		150  p1 c2 invoke acquire k
		151  p1 c2 ok     acquire k owner=b deadline=251
		200  nemesis stop pause c1
		200  p0 c1 invoke write k value=1
		201  p0 c1 ok     write k value=1`))
	require.Equal(t, Invalid, v.Result)
	text := describe(v)
	assert.Contains(t, text, "start pause targets=[c1]")
	assert.NotContains(t, text, "targets=[c3]", "faults on uninvolved clients are left out")
}

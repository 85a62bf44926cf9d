package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMutualExclusion(t *testing.T) {
	tests := []struct {
		name     string
		history  string
		want     Result
		overlaps int
		explain  string
	}{
		{name: "one holder after another", want: Valid, history: `
			0   p0 c1 invoke acquire k
			1   p0 c1 ok     acquire k owner=a deadline=1000
			5   p0 c1 invoke release k owner=a
			6   p0 c1 ok     release k
			7   p1 c2 invoke acquire k
			8   p1 c2 ok     acquire k owner=b deadline=1008
			9   p1 c2 invoke release k owner=b
			10  p1 c2 ok     release k`},
		{name: "two overlapping grants", want: Invalid, overlaps: 1, explain: "Overlap of 4.0ms", history: `
			0   p0 c1 invoke acquire k
			1   p0 c1 ok     acquire k owner=a
			2   p1 c2 invoke acquire k
			3   p1 c2 ok     acquire k owner=b
			7   p0 c1 invoke release k owner=a
			8   p0 c1 ok     release k
			9   p1 c2 invoke release k owner=b
			10  p1 c2 ok     release k`},
		{name: "GC pause: the old holder writes after its lease ran out", want: Invalid, overlaps: 1,
			explain: "after its lease deadline", history: `
			0    p0 c1 invoke acquire k
			1    p0 c1 ok     acquire k owner=a token=1 deadline=100
			1    nemesis start pause c1
			150  p1 c2 invoke acquire k
			151  p1 c2 ok     acquire k owner=b token=2 deadline=251
			152  p1 c2 invoke write k value=1 token=2
			153  p1 c2 ok     write k value=1 token=2
			200  nemesis stop pause c1
			200  p0 c1 invoke write k value=1 token=1
			201  p0 c1 fail   write k value=1 token=1
			202  p0 c1 invoke release k owner=a
			203  p0 c1 fail   release k
			210  p1 c2 invoke release k owner=b
			211  p1 c2 ok     release k`},
		{name: "a lease that ran out while the holder did nothing is no overlap", want: Valid, history: `
			0    p0 c1 invoke acquire k
			1    p0 c1 ok     acquire k owner=a deadline=100
			150  p1 c2 invoke acquire k
			151  p1 c2 ok     acquire k owner=b deadline=251
			200  p0 c1 invoke release k owner=a
			201  p0 c1 fail   release k
			210  p1 c2 invoke release k owner=b
			211  p1 c2 ok     release k`},
		{name: "a renewal keeps the lease alive", want: Invalid, overlaps: 1, history: `
			0    p0 c1 invoke acquire k
			1    p0 c1 ok     acquire k owner=a deadline=100
			50   p9 c1 invoke renew k owner=a
			51   p9 c1 ok     renew k owner=a deadline=151
			120  p1 c2 invoke acquire k
			121  p1 c2 ok     acquire k owner=b deadline=221
			140  p0 c1 invoke release k owner=a
			141  p0 c1 ok     release k
			150  p1 c2 invoke release k owner=b
			151  p1 c2 ok     release k`},
		{name: "reentrant acquires by one owner are one holding", want: Valid, history: `
			0   p0 c1 invoke acquire k
			1   p0 c1 ok     acquire k owner=a
			2   p0 c1 invoke acquire k
			3   p0 c1 ok     acquire k owner=a
			4   p0 c1 invoke release k owner=a
			5   p0 c1 ok     release k
			6   p0 c1 invoke release k owner=a
			7   p0 c1 ok     release k
			8   p1 c2 invoke acquire k
			9   p1 c2 ok     acquire k owner=b
			10  p1 c2 invoke release k owner=b
			11  p1 c2 ok     release k`},
		{name: "early outer release by a reentrant holder", want: Invalid, overlaps: 1, history: `
			0   p0 c1 invoke acquire k
			1   p0 c1 ok     acquire k owner=a
			2   p0 c1 invoke acquire k
			3   p0 c1 ok     acquire k owner=a
			4   p1 c2 invoke acquire k
			5   p1 c2 ok     acquire k owner=b
			6   p0 c1 invoke release k owner=a
			7   p0 c1 ok     release k
			8   p0 c1 invoke release k owner=a
			9   p0 c1 ok     release k`},
		{name: "different keys never conflict", want: Valid, history: `
			0   p0 c1 invoke acquire a
			1   p0 c1 ok     acquire a owner=x
			2   p1 c2 invoke acquire b
			3   p1 c2 ok     acquire b owner=y`},
		{name: "failed and unknown acquires are not holdings", want: Valid, history: `
			0   p0 c1 invoke acquire k
			1   p0 c1 ok     acquire k owner=a
			2   p1 c2 invoke acquire k
			3   p1 c2 fail   acquire k
			4   p2 c3 invoke acquire k
			5   p2 c3 info   acquire k`},
		{name: "no acquires", want: Unknown, history: `
			0   p0 c1 invoke read k
			1   p0 c1 ok     read k value=0`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Run(MutualExclusion{}, parseHistory(t, tc.history))
			assert.Equal(t, tc.want, v.Result, describe(v))
			if tc.want == Invalid {
				require.NotNil(t, v.Counterexample)
				assert.Equal(t, float64(tc.overlaps), v.Stats["overlaps"])
				assert.NotEmpty(t, v.Counterexample.Events)
				if tc.explain != "" {
					assert.Contains(t, describe(v), tc.explain)
				}
			}
		})
	}
}

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

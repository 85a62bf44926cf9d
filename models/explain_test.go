package models

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lateWriteHistory: c2's write of 26 times out (info) and lands after c1's
// write of 28, rolling the counter back to 26, which c4 then reads; c5 had
// read 26 (c3's) before. {{LATE}} is the outcome of c2's write.
const lateWriteHistory = `
0    p2 c2 invoke read k
10   p2 c2 ok read k value=25
100  p2 c2 invoke write k value=26
{{LATE}}
700  p3 c3 invoke read k
710  p3 c3 ok read k value=25
800  p3 c3 invoke write k value=26
810  p3 c3 ok write k value=26
900  p5 c5 invoke read k
910  p5 c5 ok read k value=26
1000 p5 c5 invoke write k value=27
1010 p5 c5 ok write k value=27
1100 p1 c1 invoke read k
1110 p1 c1 ok read k value=27
1200 p1 c1 invoke write k value=28
1210 p1 c1 ok write k value=28
2000 p4 c4 invoke read k
2010 p4 c4 ok read k value=26
2100 p4 c4 invoke write k value=27
2110 p4 c4 ok write k value=27
`

// TestLateLandingWriteIsNamed: a lost update whose cause is a write of
// unknown outcome that landed late names that write and what it undid, not
// only the two readers it fooled (issue 28, item 3). A write whose outcome
// is known, or one of another value, is not blamed.
func TestLateLandingWriteIsNamed(t *testing.T) {
	tests := []struct {
		name, late string
		want       []string
	}{
		{"info", "600 p2 c2 info write k value=26", []string{
			"c2's write of 26 (returned info at 0.600s) landed late, rolling the counter back from 28 to 26 (c5 and c4 both read 26 and both wrote)",
			"Late write on \"k\": c2's write of 26 (sent at 0.100s, returned info at 0.600s) landed late, after c1's acknowledged write of 28 (done at 1.210s)",
		}},
		{"never answered", "", []string{"c2's write of 26 (never returned) landed late, rolling the counter back from 28 to 26"}},
		{"the second reader did not write", "600 p2 c2 info write k value=26", []string{
			"c2's write of 26 (returned info at 0.600s) landed late, rolling the counter back from 28 to 26 (c4 read 26)",
		}},
		{"failed: not blamed", "600 p2 c2 fail write k value=26", nil},
		{"another value: not blamed", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(lateWriteHistory, "{{LATE}}", tc.late, 1)
			if tc.name == "the second reader did not write" {
				text = strings.Replace(text, "2100 p4 c4 invoke write k value=27\n2110 p4 c4 ok write k value=27\n", "", 1)
			}
			if tc.name == "another value: not blamed" {
				text = strings.Replace(text, "100  p2 c2 invoke write k value=26", "100  p2 c2 invoke write k value=99", 1)
			}
			v := Run(CriticalSections{InitialByKey: map[string]int64{"k": 25}}, parseHistory(t, text))
			require.Equal(t, Invalid, v.Result, v.Reason)
			all := v.Reason + "\n" + strings.Join(v.Counterexample.Explanation, "\n")
			for _, w := range tc.want {
				assert.Contains(t, all, w)
			}
			var nodes []string
			for _, e := range v.Counterexample.Events {
				nodes = append(nodes, e.Node)
			}
			if tc.want == nil {
				assert.NotContains(t, all, "landed late")
				assert.NotContains(t, nodes, "c2")
				return
			}
			assert.Contains(t, nodes, "c2", "the late write's events are in the counterexample")
		})
	}
}

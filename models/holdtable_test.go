package models

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHoldTableIsAMap: a holdTable answers as a map does, below and above
// the size from which it is one.
func TestHoldTableIsAMap(t *testing.T) {
	tests := []struct {
		name  string
		nodes int
	}{
		{"few keys", 3},
		{"at the bound", holdTableMax},
		{"many keys", 4 * holdTableMax},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(uint64(tc.nodes), 1))
			var tab holdTable[int]
			want := map[holdKey]int{}
			for i := range 5000 {
				k := holdKey{fmt.Sprintf("c%d", r.IntN(tc.nodes)), fmt.Sprintf("k%d", r.IntN(2))}
				switch r.IntN(3) {
				case 0:
					tab.set(k, i)
					want[k] = i
				case 1:
					tab.del(k)
					delete(want, k)
				}
				got, ok := tab.get(k)
				w, wok := want[k]
				require.Equal(t, wok, ok)
				require.Equal(t, w, got)
				require.Equal(t, len(want), tab.len())
			}
			keys := tab.keys(nil)
			slices.SortFunc(keys, func(a, b holdKey) int { return strings.Compare(a.sortKey(), b.sortKey()) })
			var wantKeys []holdKey
			for k := range want {
				wantKeys = append(wantKeys, k)
			}
			slices.SortFunc(wantKeys, func(a, b holdKey) int { return strings.Compare(a.sortKey(), b.sortKey()) })
			assert.Equal(t, wantKeys, keys)
		})
	}
}

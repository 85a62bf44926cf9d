// Package sorted walks maps in the order of their keys: the one way the
// simulated packages may iterate a map (its own order is random, and a
// replay must not depend on it).
package sorted

import (
	"cmp"
	"slices"
)

// Keys are m's keys in increasing order, in a slice made once at their
// number (no growth: a server's tick calls it).
func Keys[K cmp.Ordered, V any](m map[K]V) []K {
	out := make([]K, 0, len(m))
	for k := range m { // determinism:ok sorted below
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

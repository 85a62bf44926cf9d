package nemesis

import (
	"fmt"
	"strings"
)

// Cut is what a partition fault cuts, worked out once for both worlds (the
// simulator's network and live mode's proxies): the directed links, the
// nodes it names, and the sentence that describes it.
type Cut[N comparable] struct {
	// Links are the directed links to block, in the order they are cut.
	Links [][2]N
	// Targets are the nodes the fault names (for the history's event).
	Targets []string
	// Detail describes the cut ("split [a b] | [c]", "isolate [a]", ...).
	Detail string
}

// PlanCut works out partition f's links among nodes of type N: nodes
// resolves the fault's names (a role, "clients", a node) to nodes, all is
// every node of the run (an isolated node is cut from each of the others,
// both ways) and name gives a node's name. A node is never cut from itself.
func PlanCut[N comparable](f Fault, nodes func(names []string) []N, all []N, name func(N) string) Cut[N] {
	var c Cut[N]
	cut := func(a, b N) {
		if a != b {
			c.Links = append(c.Links, [2]N{a, b})
		}
	}
	names := func(ns []N) []string {
		out := make([]string, len(ns))
		for i, x := range ns {
			out[i] = name(x)
		}
		return out
	}
	switch {
	case len(f.Groups) > 0:
		groups := make([][]N, len(f.Groups))
		var desc []string
		for i, g := range f.Groups {
			groups[i] = nodes(g)
			c.Targets = append(c.Targets, names(groups[i])...)
			desc = append(desc, "["+strings.Join(names(groups[i]), " ")+"]")
		}
		for i, g := range groups {
			for j, h := range groups {
				if i != j {
					for _, a := range g {
						for _, b := range h {
							cut(a, b)
						}
					}
				}
			}
		}
		c.Detail = "split " + strings.Join(desc, " | ")
	case len(f.From) > 0:
		from, to := nodes(f.From), nodes(f.To)
		for _, a := range from {
			for _, b := range to {
				cut(a, b)
			}
		}
		c.Targets = append(names(from), names(to)...)
		c.Detail = fmt.Sprintf("one-way cut %v -> %v", names(from), names(to))
	default:
		iso := nodes(f.Targets)
		in := make(map[N]bool, len(iso))
		for _, x := range iso {
			in[x] = true
		}
		for _, x := range iso {
			for _, y := range all {
				if !in[y] {
					cut(x, y)
					cut(y, x)
				}
			}
		}
		c.Targets = names(iso)
		c.Detail = fmt.Sprintf("isolate %v", c.Targets)
	}
	return c
}

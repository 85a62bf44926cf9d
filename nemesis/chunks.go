package nemesis

import "slices"

// Chunks cuts faults into n nearly equal consecutive chunks (copies): the
// pieces delta debugging tries to drop when it shrinks a schedule.
func Chunks(faults []Fault, n int) [][]Fault {
	var out [][]Fault
	for i := range n {
		lo, hi := i*len(faults)/n, (i+1)*len(faults)/n
		if hi > lo {
			out = append(out, slices.Clone(faults[lo:hi]))
		}
	}
	return out
}

// AllBut is every chunk but the i-th, concatenated.
func AllBut(chunks [][]Fault, i int) []Fault {
	var out []Fault
	for j, c := range chunks {
		if j != i {
			out = append(out, c...)
		}
	}
	return out
}

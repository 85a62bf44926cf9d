// Package suggest names what a mistyped name was probably meant to be:
// "Redis" for redis, "kleppman-gc-pause" for kleppmann-gc-pause, "--sytem"
// for --system. A name that is unknown is refused with the near misses
// among the known names, or with the known names when none is near, so the
// person who typed it can fix it without reading a list of thirty.
package suggest

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// maxSuggestions is how many near misses are worth naming: beyond it the
// typed name is too vague for a guess to help, and the known names are
// listed instead.
const maxSuggestions = 6

// Closest returns the known names name was probably meant to be, in known's
// order: the ones equal to it but for case; else the ones nearest in edit
// distance (insertions, deletions, substitutions and swaps of two adjacent
// letters, case ignored), when at most one edit in four letters; else the
// ones name begins (at least 2 letters), else the ones it is a part of or
// that are a part of it (at least 4 letters). None when nothing is near or
// more than a handful are.
func Closest(name string, known []string) []string {
	if name == "" {
		return nil
	}
	lower := strings.ToLower(name)
	rules := []func(k string) bool{
		func(k string) bool { return k == lower },
		nil, // edit distance: below
		func(k string) bool { return utf8.RuneCountInString(lower) >= 2 && strings.HasPrefix(k, lower) },
		func(k string) bool {
			return (utf8.RuneCountInString(lower) >= 4 && strings.Contains(k, lower)) ||
				(utf8.RuneCountInString(k) >= 4 && strings.Contains(lower, k))
		},
	}
	for i, rule := range rules {
		if i == 1 {
			rule = withinDistance(lower, known)
		}
		var out []string
		for _, k := range known {
			if k != name && rule(strings.ToLower(k)) && !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
		switch {
		case len(out) > maxSuggestions:
			return nil
		case len(out) > 0:
			return out
		}
	}
	return nil
}

// withinDistance matches the known names at the smallest edit distance from
// name, when that distance is small for name's length.
func withinDistance(name string, known []string) func(string) bool {
	limit := max(1, utf8.RuneCountInString(name)/4)
	best := limit + 1
	for _, k := range known {
		best = min(best, distance(name, strings.ToLower(k)))
	}
	return func(k string) bool { return best <= limit && distance(name, k) == best }
}

// distance is the optimal string alignment distance between a and b: the
// edits (insert, delete, substitute a letter, swap two adjacent letters)
// that turn a into b, no substring edited twice.
func distance(a, b string) int {
	s, t := []rune(a), []rune(b)
	// d[i][j] is the distance between s[:i] and t[:j].
	d := make([][]int, len(s)+1)
	for i := range d {
		d[i] = make([]int, len(t)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(s); i++ {
		for j := 1; j <= len(t); j++ {
			cost := 1
			if s[i-1] == t[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && s[i-1] == t[j-2] && s[i-2] == t[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(s)][len(t)]
}

// UnknownError is a name that is none of the known ones: an unknown system,
// workload, scenario, hunt or fault kind. Its message names the near misses
// ("did you mean"), or the known names when none is near. A command line
// finds it with errors.As to name the flag the name was given to.
type UnknownError struct {
	// What the name should have named: "system", "fault kind".
	What string
	// Name is the name as typed.
	Name string
	// Suggestions are the known names it was probably meant to be (Closest).
	Suggestions []string
	// Known are the names it could have been, listed when no suggestion is
	// near.
	Known []string
	// Want, when set, says what was wanted instead of listing Known.
	Want string
}

// Unknown is the error for name, not among the known names of what.
func Unknown(what, name string, known []string) *UnknownError {
	return &UnknownError{What: what, Name: name, Suggestions: Closest(name, known), Known: known}
}

// Find returns the item of items called name (nameOf names an item); an
// unknown name is an *UnknownError of what, naming the items it was probably
// meant to be: the lookup of a registry or a catalog by name.
func Find[T any](what, name string, items []T, nameOf func(T) string) (T, error) {
	known := make([]string, len(items))
	for i, it := range items {
		if known[i] = nameOf(it); known[i] == name {
			return it, nil
		}
	}
	var zero T
	return zero, Unknown(what, name, known)
}

// Error says what is unknown and what it was probably meant to be:
// `unknown system "Redis" — did you mean "redis"?`, or
// `unknown system "mongo" (known: chubby, control, ...)`.
func (e *UnknownError) Error() string {
	msg := fmt.Sprintf("unknown %s %q", e.What, e.Name)
	switch {
	case len(e.Suggestions) > 0:
		return msg + " — did you mean " + Either(e.Suggestions) + "?"
	case e.Want != "":
		return msg + " (" + e.Want + ")"
	}
	return msg + " (known: " + strings.Join(e.Known, ", ") + ")"
}

// Either joins names, quoted, as alternatives: `"a"`, `"a" or "b"`,
// `"a", "b" or "c"`.
func Either(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	if len(q) == 1 {
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

package opt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Parser reads an option's text into a V and prints it back; Accepts says in
// words what it takes. Format(Parse(s)) == s for the canonical form of every
// value (the form defaults are written in).
type Parser[V any] struct {
	Accepts string
	Parse   func(string) (V, error)
	Format  func(V) string
}

// Positive reads a Go duration greater than zero ("10s", "250ms").
var Positive = Parser[time.Duration]{Accepts: "a duration > 0", Parse: PositiveDuration, Format: time.Duration.String}

// NonNegative reads a Go duration that is not negative ("0s", "100ms").
var NonNegative = Parser[time.Duration]{Accepts: "a duration >= 0", Parse: NonNegativeDuration,
	Format: time.Duration.String}

// Bool reads true or false (and the other spellings strconv.ParseBool takes:
// 1, t, TRUE, 0, f, FALSE, ...).
var Bool = Parser[bool]{Accepts: "true or false", Format: strconv.FormatBool,
	Parse: func(s string) (bool, error) {
		b, err := strconv.ParseBool(s)
		if err != nil {
			return false, errors.New("want true or false")
		}
		return b, nil
	}}

// Range reads an integer in [lo, hi].
func Range[V ~int | ~int64](lo, hi V) Parser[V] {
	return Parser[V]{Accepts: fmt.Sprintf("an integer in %d..%d", lo, hi), Format: formatInt[V],
		Parse: func(s string) (V, error) {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return 0, errors.New("not an integer")
			}
			if n < int64(lo) || n > int64(hi) {
				return 0, fmt.Errorf("must be in %d..%d", lo, hi)
			}
			return V(n), nil
		}}
}

// AtLeast reads an integer no smaller than lo.
func AtLeast(lo int) Parser[int] {
	return Parser[int]{Accepts: fmt.Sprintf("an integer >= %d", lo), Format: strconv.Itoa,
		Parse: func(s string) (int, error) {
			n, err := strconv.Atoi(s)
			if err != nil {
				return 0, errors.New("not an integer")
			}
			if n < lo {
				return 0, fmt.Errorf("must be at least %d", lo)
			}
			return n, nil
		}}
}

// IntChoice reads one of the listed integers.
func IntChoice(choices ...int) Parser[int] {
	names := make([]string, len(choices))
	for i, c := range choices {
		names[i] = strconv.Itoa(c)
	}
	accepts := orList(names)
	return Parser[int]{Accepts: accepts, Format: strconv.Itoa,
		Parse: func(s string) (int, error) {
			n, err := strconv.Atoi(s)
			for _, c := range choices {
				if err == nil && n == c {
					return n, nil
				}
			}
			return 0, fmt.Errorf("want %s", accepts)
		}}
}

// Fraction reads a number in [lo, hi].
func Fraction(lo, hi float64) Parser[float64] {
	return Parser[float64]{Accepts: fmt.Sprintf("a number in %v..%v", lo, hi),
		Format: func(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) },
		Parse:  func(s string) (float64, error) { return FloatIn(s, lo, hi) }}
}

// Choice reads one of the named choices.
func Choice[V ~string](choices ...V) Parser[V] {
	names := make([]string, len(choices))
	for i, c := range choices {
		names[i] = string(c)
	}
	return Parser[V]{Accepts: orList(names), Format: func(v V) string { return string(v) },
		Parse: func(s string) (V, error) { return OneOf(s, choices...) }}
}

// IntList reads a comma-separated list of integers, each in [lo, hi].
func IntList(lo, hi int) Parser[[]int] {
	return Parser[[]int]{Accepts: fmt.Sprintf("integers in %d..%d, comma-separated", lo, hi),
		Parse: func(s string) ([]int, error) { return Ints(s, lo, hi) },
		Format: func(ns []int) string {
			parts := make([]string, len(ns))
			for i, n := range ns {
				parts[i] = strconv.Itoa(n)
			}
			return strings.Join(parts, ",")
		}}
}

// Text takes any string; accepts says what is meant (a later validation
// checks it against the rest of the options).
func Text(accepts string) Parser[string] {
	return Parser[string]{Accepts: accepts, Format: func(s string) string { return s },
		Parse: func(s string) (string, error) { return s, nil }}
}

func formatInt[V ~int | ~int64](v V) string { return strconv.FormatInt(int64(v), 10) }

// orList joins names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

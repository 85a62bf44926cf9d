// Package opt declares the options of lock systems and workloads, once each.
//
// A system or workload lists its options in a Table: each Option has a name
// (the key of `-o key=value`), a meaning, a default in textual form and a
// Parser that reads the text into a field of the options struct and prints it
// back. The table then gives everything that used to be written by hand in
// several places: the defaults (Table.Defaults applies every declared
// default), the accepted names (Table.Names), Set (with errors that name the
// key, the value and what was wanted, and list the valid keys for an unknown
// one), the effective configuration of a run (Table.Values) and the
// documentation (Table.Docs, shown by `locklab systems`). Table.Check proves a
// table consistent: every default parses and reads back as written.
//
// The value parsers (PositiveDuration, IntIn, OneOf, ...) return errors that
// say what was expected, without Go's internals; Table.Set wraps them with the
// owner and the option's name.
package opt

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// PositiveDuration parses a Go duration that must be greater than zero.
func PositiveDuration(s string) (time.Duration, error) {
	d, err := parseDuration(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, errors.New("must be positive")
	}
	return d, nil
}

// NonNegativeDuration parses a Go duration that must not be negative.
func NonNegativeDuration(s string) (time.Duration, error) {
	d, err := parseDuration(s)
	if err != nil {
		return 0, err
	}
	if d < 0 {
		return 0, errors.New("must not be negative")
	}
	return d, nil
}

// parseDuration is time.ParseDuration with an error that shows the form.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("not a duration (write it like 250ms, 10s or 1m30s)")
	}
	return d, nil
}

// IntIn parses an integer in [lo, hi].
func IntIn(s string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil {
		return 0, fmt.Errorf("not an integer")
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("must be in %d..%d", lo, hi)
	}
	return n, nil
}

// FloatIn parses a number in [lo, hi].
func FloatIn(s string, lo, hi float64) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number")
	}
	if f < lo || f > hi {
		return 0, fmt.Errorf("must be in %v..%v", lo, hi)
	}
	return f, nil
}

// OneOf parses one of the named choices.
func OneOf[T ~string](s string, choices ...T) (T, error) {
	for _, c := range choices {
		if string(c) == s {
			return c, nil
		}
	}
	names := make([]string, len(choices))
	for i, c := range choices {
		names[i] = string(c)
	}
	return "", fmt.Errorf("want one of %s", strings.Join(names, ", "))
}

// Ints parses a comma-separated list of integers, each in [lo, hi].
func Ints(s string, lo, hi int) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := IntIn(strings.TrimSpace(part), lo, hi)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", part, err)
		}
		out = append(out, n)
	}
	return out, nil
}

// Package optparse parses the values of key=value options (the CLI's -o and
// -w) into typed fields, with errors that say what was wanted. Callers add
// the option's name and value to the error.
package optparse

import (
	"fmt"
	"time"
)

// PositiveDuration parses a Go duration ("1.5s") that must be above zero.
func PositiveDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, err
	}
	if d <= 0 {
		return 0, fmt.Errorf("must be positive")
	}
	return d, nil
}

// OneOf returns s as a T if it is one of choices.
func OneOf[T ~string](s string, choices ...T) (T, error) {
	for _, c := range choices {
		if string(c) == s {
			return c, nil
		}
	}
	return "", fmt.Errorf("want one of %v", choices)
}

package history

import (
	"fmt"
	"time"
)

// FormatDuration renders a duration (ns) the one way locklab prints durations
// everywhere (summary, explanations, report, plots): Go's time.Duration
// notation, rounded to about four significant digits so that it never shows
// nanoseconds a reader cannot use. From a second up it is rounded to the
// millisecond (10.005s, 1m30.25s), from a millisecond to a tenth of a
// millisecond (104.6ms), from a microsecond to a tenth of a microsecond
// (12.3µs); shorter ones are exact (850ns). Negative durations keep their sign.
func FormatDuration(ns int64) string {
	d := time.Duration(ns)
	a := d.Abs()
	switch {
	case a >= time.Second:
		d = d.Round(time.Millisecond)
	case a >= time.Millisecond:
		d = d.Round(100 * time.Microsecond)
	case a >= time.Microsecond:
		d = d.Round(100 * time.Nanosecond)
	}
	return d.String()
}

// Plural renders a count with its noun, "1 key" and "2 keys"; plural is the
// noun's plural, or "" for the noun with an "s".
func Plural(n int, noun, plural string) string {
	if n == 1 || n == -1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	if plural == "" {
		plural = noun + "s"
	}
	return fmt.Sprintf("%d %s", n, plural)
}

package sim

import (
	"math"
	"time"
)

// clock is a node's pair of local clocks. The monotonic clock is piecewise
// linear in true time: mono(t) = baseMono + (t-baseTrue)*rate, where rate is
// 1+drift and changes only through SetDrift. The wall clock is
// epoch + mono + offset; jumps change the offset.
type clock struct {
	baseTrue time.Duration
	baseMono time.Duration
	rate     float64
	offset   time.Duration
}

func (c *clock) mono(now time.Duration) time.Duration {
	if c.rate == 1 {
		return c.baseMono + (now - c.baseTrue)
	}
	return c.baseMono + time.Duration(math.Floor(float64(now-c.baseTrue)*c.rate))
}

// trueAt is the earliest true time (>= now) at which the monotonic clock reads
// at least m, assuming the rate stays as it is.
func (c *clock) trueAt(now, m time.Duration) time.Duration {
	if c.rate == 1 { // exact: mono(t) = baseMono + t - baseTrue
		return max(c.baseTrue+(m-c.baseMono), now)
	}
	if m <= c.mono(now) {
		return now
	}
	var t time.Duration
	if c.rate == 1 {
		t = c.baseTrue + (m - c.baseMono)
	} else {
		t = c.baseTrue + time.Duration(math.Ceil(float64(m-c.baseMono)/c.rate))
	}
	for c.mono(t) < m { // guard against rounding
		t++
	}
	for t > now && c.mono(t-1) >= m {
		t--
	}
	if t < now {
		t = now
	}
	return t
}

func (c *clock) rebase(now time.Duration, rate float64) {
	c.baseMono = c.mono(now)
	c.baseTrue = now
	c.rate = rate
}

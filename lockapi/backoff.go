package lockapi

import (
	"math/rand/v2"
	"time"
)

// Backoff is a random delay in [0, max] drawn from r, the wait between two
// attempts of a client (0, drawing nothing, when max ≤ 0). It draws exactly
// as sim.Uniform(r, 0, max) does, so a simulated client's stream, and its
// history, stay the same whichever of the two it calls.
func Backoff(r *rand.Rand, max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	return time.Duration(r.Int64N(int64(max) + 1))
}

// SleepBackoff sleeps a Backoff of env's random stream, but no longer than
// left (what remains of the client's wait budget).
func SleepBackoff(env Env, max, left time.Duration) {
	env.Sleep(min(Backoff(env.Rand(), max), left))
}

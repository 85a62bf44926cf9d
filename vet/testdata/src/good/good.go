// Package good is a lock whose code the simulator can run: time, sleep and
// randomness come from its environment.
package good

import (
	"math/rand/v2"
	"sort"
	"time"
)

// Env is the client's environment, as lockapi.Env.
type Env interface {
	Mono() time.Duration
	Sleep(d time.Duration)
	Rand() *rand.Rand
}

func acquire(env Env, m map[string]int) []string {
	start := env.Mono()
	for env.Mono()-start < time.Second {
		env.Sleep(time.Duration(env.Rand().IntN(100)) * time.Millisecond)
	}
	r := rand.New(rand.NewPCG(1, 2)) // an explicit source is fine
	_ = r.IntN(3)
	keys := make([]string, 0, len(m))
	for k := range m { // determinism:ok: sorted below
		keys = append(keys, k)
	}
	sort.Strings(keys)
	_ = time.Duration(3) * time.Second // durations are not clocks
	return keys
}

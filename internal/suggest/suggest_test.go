package suggest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var systems = []string{"chubby", "control", "database", "etcd", "raftkv", "redis", "redlock", "zookeeper"}

var scenarios = []string{"baseline-redis", "baseline-etcd", "kleppmann-gc-pause", "kleppmann-network-delay",
	"redis-failover", "redlock-gc-pause", "zk-session-expiry"}

func TestClosestNamesTheNearMisses(t *testing.T) {
	tests := []struct {
		typed string
		known []string
		want  []string
	}{
		{"Redis", systems, []string{"redis"}},                                               // case
		{"REDLOCK", systems, []string{"redlock"}},                                           // case
		{"redsi", systems, []string{"redis"}},                                               // two letters swapped
		{"etc", systems, []string{"etcd"}},                                                  // one letter short
		{"zookeper", systems, []string{"zookeeper"}},                                        // one letter short
		{"kleppman-gc-pause", scenarios, []string{"kleppmann-gc-pause"}},                    // one letter short
		{"kleppmann-gc-paus3", scenarios, []string{"kleppmann-gc-pause"}},                   // one letter wrong
		{"raft", systems, []string{"raftkv"}},                                               // the beginning
		{"kleppmann", scenarios, []string{"kleppmann-gc-pause", "kleppmann-network-delay"}}, // the beginning of two
		{"failover", scenarios, []string{"redis-failover"}},                                 // a part
		{"gc-pause", scenarios, []string{"kleppmann-gc-pause", "redlock-gc-pause"}},         // a part of two
		{"redis-server", systems, []string{"redis"}},                                        // more than the name
		{"mongo", systems, nil},                                                             // nothing near
		{"zk", systems, nil},                                                                // too short to be a part
		{"", systems, nil},                                                                  // nothing typed
		{"e", systems, nil},                                                                 // one letter is no beginning
		{"redis", systems, nil},                                                             // known already: nothing to suggest
		{"rediss", systems, []string{"redis"}},
		{"pauses", []string{"pause", "crash", "partition", "clock-jump", "clock-drift", "delay"}, []string{"pause"}},
		{"clok", []string{"pause", "crash", "clock-jump", "clock-drift", "clock", "all"}, []string{"clock"}},
	}
	for _, tc := range tests {
		t.Run(tc.typed, func(t *testing.T) {
			assert.Equal(t, tc.want, Closest(tc.typed, tc.known))
		})
	}
}

func TestClosestGivesUpWhenTooManyAreNear(t *testing.T) {
	var known []string
	for i := range maxSuggestions + 1 {
		known = append(known, fmt.Sprintf("baseline-%d", i))
	}
	assert.Nil(t, Closest("baseline", known), "seven beginnings are no guess")
	assert.Len(t, Closest("baseline", known[:maxSuggestions]), maxSuggestions)
}

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"redis", "redis", 0},
		{"redis", "redsi", 1}, // a swap is one edit
		{"sytem", "system", 1},
		{"kitten", "sitting", 3},
		{"", "etcd", 4},
		{"ĉapo", "capo", 1}, // letters, not bytes
	}
	for _, tc := range tests {
		t.Run(tc.a+"/"+tc.b, func(t *testing.T) {
			assert.Equal(t, tc.want, distance(tc.a, tc.b))
			assert.Equal(t, tc.want, distance(tc.b, tc.a), "symmetric")
		})
	}
}

func TestUnknownErrorSaysWhatWasMeant(t *testing.T) {
	tests := []struct {
		name string
		err  *UnknownError
		want string
	}{
		{"a near miss", Unknown("system", "Redis", systems), `unknown system "Redis" — did you mean "redis"?`},
		{"two near misses", Unknown("scenario", "kleppmann", scenarios),
			`unknown scenario "kleppmann" — did you mean "kleppmann-gc-pause" or "kleppmann-network-delay"?`},
		{"three near misses", &UnknownError{What: "hunt", Name: "x", Suggestions: []string{"a", "b", "c"}},
			`unknown hunt "x" — did you mean "a", "b" or "c"?`},
		{"nothing near: the known names", Unknown("system", "mongo", systems),
			`unknown system "mongo" (known: chubby, control, database, etcd, raftkv, redis, redlock, zookeeper)`},
		{"nothing near: what is wanted", &UnknownError{What: "fault kind", Name: "meteor", Want: "want pause or crash"},
			`unknown fault kind "meteor" (want pause or crash)`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.EqualError(t, tc.err, tc.want)
		})
	}
}

func TestUnknownErrorIsFoundThroughWrapping(t *testing.T) {
	err := fmt.Errorf("nemesis: %w", Unknown("fault kind", "pauses", []string{"pause", "crash"}))
	var ue *UnknownError
	require.True(t, errors.As(err, &ue))
	assert.Equal(t, "pauses", ue.Name)
	assert.Equal(t, []string{"pause"}, ue.Suggestions)
}

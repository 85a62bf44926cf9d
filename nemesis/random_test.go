package nemesis

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/sim"
)

func TestRandomAimsAtRolesAndEveryLink(t *testing.T) {
	targets := Targets{Clients: []string{"c1", "c2"}, Servers: []string{"redis", "replica1", "replica2"},
		Storage: "storage", Roles: []string{"primary", "replicas"}}
	seen := map[string]bool{}
	for seed := range uint64(30) {
		s := Random(sim.NewRand(seed, "nemesis"), RandomConfig{Swarm: seed%2 == 0}, targets, 2*time.Minute)
		require.NoError(t, s.Validate())
		for _, f := range s.Faults {
			for _, n := range append(append(f.Targets, f.From...), f.To...) {
				if n == "primary" || n == "replicas" {
					seen[string(f.Kind)+"/role"] = true
				}
			}
			if f.Kind == Delay && f.To[0] != "storage" && f.From[0][0] != 'c' {
				seen["delay/server-to-server"] = true
			}
			if f.Kind == Partition && len(f.Groups) == 2 && len(f.Groups[0]) == 1 && f.Groups[0][0][0] == 'c' {
				seen["partition/client-cut"] = true
			}
		}
	}
	for _, want := range []string{"pause/role", "crash/role", "partition/role", "delay/role", "delay/server-to-server", "partition/client-cut"} {
		assert.True(t, seen[want], "never drew %s (drew %v)", want, seen)
	}
}

func TestSwarmDrawsKindsAndWeightsPerSeed(t *testing.T) {
	targets := Targets{Clients: []string{"c1", "c2"}, Servers: []string{"s1"}, Storage: "storage"}
	mixes := map[string]bool{}
	for seed := range uint64(20) {
		s := Random(sim.NewRand(seed, "nemesis"), RandomConfig{Swarm: true}, targets, 5*time.Minute)
		kinds := map[Kind]bool{}
		for _, f := range s.Faults {
			kinds[f.Kind] = true
		}
		mix := ""
		for _, k := range Kinds {
			if kinds[k] {
				mix += string(k) + " "
			}
		}
		mixes[mix] = true
	}
	assert.Greater(t, len(mixes), 5, "each seed draws its own mix of fault kinds: %v", mixes)
}

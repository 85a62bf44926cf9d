package harness

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// TestTheServersNotesReachTheRun: what a deployment's servers noted
// (Deployment.Notes, a Redis script's error) is among the run's notes, and
// so in its report and story.
func TestTheServersNotesReachTheRun(t *testing.T) {
	redis, err := system.Find("redis")
	require.NoError(t, err)
	noting := redis
	noting.Name = "redis-noting"
	noting.Deploy = func(w *sim.World, opts map[string]string) (system.Deployment, error) {
		d, err := redis.Deploy(w, opts)
		d.Notes = func() []string { return []string{"Redis answered 3 of the lock's scripts with an error"} }
		return d, err
	}
	system.Register(noting)
	t.Cleanup(func() { system.Unregister("redis-noting") })

	r, err := Run(scenario.Test{System: "redis-noting", Time: 5 * time.Second, Seed: 1})
	require.NoError(t, err)
	assert.Equal(t, []string{"Redis answered 3 of the lock's scripts with an error"}, r.Notes)
	assert.Contains(t, judge.Report(r, "locklab run").Warnings(), "Redis answered 3 of the lock's scripts with an error")
	assert.Contains(t, scenario.Story(r), "Redis answered 3 of the lock's scripts with an error.")

	plain, err := Run(scenario.Test{System: "redis", Time: 5 * time.Second, Seed: 1})
	require.NoError(t, err)
	assert.Empty(t, plain.Notes, "the typed redis clients send no Commands: nothing to note")
}

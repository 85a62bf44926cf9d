package redsyncexample

import (
	"context"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/libmode"
	"github.com/locklab/locklab/userlock/userlocktest"
)

// TestSearchFindsTheLostUpdate: userlocktest's search on redsync over five
// instances, default options (expiry 8 s): random runs and every guided
// pause of two clients (from the acquire or the read of their first
// section, ended at the other's steps or lasting 7.99 s, 8.01 s, 12 s)
// find the GC-pause lost update, shrunk to one pause, backed by the
// instances' quorum record. Each run reseeds math/rand's global source
// with its seed (Config.Prepare): redsync draws its retry delays from it.
func TestSearchFindsTheLostUpdate(t *testing.T) {
	lib := userlocktest.Library{
		Name:      "go-redsync/redsync v4",
		TTL:       8 * time.Second,
		Instances: 5,
		Setup: func(c *userlocktest.Conn) error {
			c.State = newOver(c.RDBs)
			return nil
		},
		Acquire: func(ctx context.Context, c *userlocktest.Conn, key string) (libmode.Lease, error) {
			return c.State.(*Lock).Acquire(ctx, key)
		},
		Release: func(ctx context.Context, c *userlocktest.Conn, l libmode.Lease) error {
			return c.State.(*Lock).Release(ctx, l)
		},
		Config: libmode.Config{Clients: 2, Duration: 15 * time.Second,
			Prepare: func(seed uint64) { rand.Seed(int64(seed)) }}, //nolint:staticcheck // redsync's global source
		Search: libmode.SearchOptions{Seeds: 5, Guided: libmode.GuidedOptions{Sections: 1}},
	}
	rep := userlocktest.ExpectLibraryFinds(t, lib, "critical-sections")
	require.NotNil(t, rep.Shrunk, rep.ShrinkErr)
	assert.Len(t, rep.Shrunk.Result.Schedule.Faults, 1)
	assert.NotEmpty(t, rep.Shrunk.Result.Grants)
}

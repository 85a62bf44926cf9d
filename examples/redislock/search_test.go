package redislockexample

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/libmode"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/userlock/userlocktest"
)

// library is bsm/redislock as userlocktest searches it: the user's Lock
// above, built once per client over the client's go-redis connection,
// naming redislock's Obtain and Release. Three clients, 5 s runs; the
// guided search anchors pauses in each client's first section.
func library(fence bool) userlocktest.Library {
	return userlocktest.Library{
		Name: "bsm/redislock",
		TTL:  time.Second,
		Setup: func(c *userlocktest.Conn) error {
			c.State = &Lock{RDB: c.RDB, Locks: redislock.New(c.RDB), TTL: time.Second, Fence: fence}
			return nil
		},
		Acquire: func(ctx context.Context, c *userlocktest.Conn, key string) (libmode.Lease, error) {
			return c.State.(*Lock).Acquire(ctx, key)
		},
		Release: func(ctx context.Context, c *userlocktest.Conn, l libmode.Lease) error {
			return c.State.(*Lock).Release(ctx, l)
		},
		Config: libmode.Config{Clients: 3, Duration: 5 * time.Second},
		Search: libmode.SearchOptions{Seeds: 10, Guided: libmode.GuidedOptions{Sections: 1}},
	}
}

// TestSearchFindsTheLostUpdate: the search a built-in system gets, on
// redislock unfenced: random and guided runs find the GC-pause lost
// update, shrinking leaves one pause, and the run directory has the report.
// go test -v prints the report, the shrunk schedule and the replay line.
func TestSearchFindsTheLostUpdate(t *testing.T) {
	rep := userlocktest.ExpectLibraryFinds(t, library(false), "critical-sections")
	require.NotNil(t, rep.Shrunk, rep.ShrinkErr)
	assert.Len(t, rep.Shrunk.Result.Schedule.Faults, 1)
	assert.Contains(t, rep.Shrunk.Result.Kinds, "gc-pause")
	assert.NotEmpty(t, rep.Dir)
}

// TestSearchFencedDataSafe: the user's fencing token (INCR after the
// grant) with storage that fences reads and writes: the lock breaks under
// the search's pauses, partitions and clock jumps, the data does not. (The
// random draw's crashes are left out: see the next test.)
func TestSearchFencedDataSafe(t *testing.T) {
	lib := library(true)
	lib.Storage, lib.FenceReads = storage.Fenced, true
	lib.Search.NoShrink = true
	draw := libmode.DrawFaults(lib.RunConfig(), time.Second)
	lib.Search.Draw = func(seed uint64) []libmode.Fault {
		return slices.DeleteFunc(draw(seed), func(f libmode.Fault) bool { _, crash := f.(libmode.Crash); return crash })
	}
	rep := userlocktest.ExpectLibraryDataSafe(t, lib)
	require.NotNil(t, rep.Finding)
	assert.Equal(t, models.Invalid, rep.Finding.Verdict("mutual-exclusion"), "the lock breaks")
}

// TestSearchFencedCrashResetsTheTokens: the user's token counter lives in
// the same Redis; a crash without persistence restarts it empty, INCR
// starts again at 1, and the storage sees tokens go backwards. The random
// search finds it (seed 8 draws such a crash).
func TestSearchFencedCrashResetsTheTokens(t *testing.T) {
	lib := library(true)
	lib.Storage, lib.FenceReads = storage.Fenced, true
	lib.Search.NoShrink, lib.Search.NoGuided = true, true
	rep := userlocktest.SearchLibrary(t, lib)
	problems := userlocktest.DataProblems(rep)
	require.NotEmpty(t, problems)
	assert.Contains(t, strings.Join(problems, "\n"), "fencing-tokens invalid")
	assert.Contains(t, strings.Join(problems, "\n"), "without persistence")
}

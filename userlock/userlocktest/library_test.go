package userlocktest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/libmode"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/userlock/userlocktest"
)

var unlockScript = redis.NewScript(`if redis.call("get", KEYS[1]) == ARGV[1] then return redis.call("del", KEYS[1]) else return 0 end`)

// setNX is a lock a program might use over go-redis: SET NX PX with a
// random-enough owner, released by compare-and-delete; with fence, a token
// from INCR after the grant.
func setNX(fence bool) userlocktest.Library {
	return userlocktest.Library{
		Name:  "SET NX PX",
		TTL:   time.Second,
		Setup: func(c *userlocktest.Conn) error { c.State = new(int); return nil },
		Acquire: func(ctx context.Context, c *userlocktest.Conn, key string) (libmode.Lease, error) {
			n := c.State.(*int)
			*n++
			owner := fmt.Sprintf("%s-%d", c.Name, *n)
			ok, err := c.RDB.SetNX(ctx, key, owner, time.Second).Result()
			if err != nil {
				return libmode.Lease{}, err
			}
			if !ok {
				return libmode.Lease{}, lockapi.ErrNotAcquired
			}
			l := libmode.Lease{Owner: owner, Valid: time.Second}
			if fence {
				tok, err := c.RDB.Incr(ctx, key+":fence").Result()
				if err != nil {
					return libmode.Lease{}, err
				}
				l.Token, l.HasToken = uint64(tok), true
			}
			return l, nil
		},
		Release: func(ctx context.Context, c *userlocktest.Conn, l libmode.Lease) error {
			got, err := unlockScript.Run(ctx, c.RDB, []string{"k"}, l.Owner).Int()
			if err != nil {
				return err
			}
			if got == 0 {
				return lockapi.ErrNotHeld
			}
			return nil
		},
		Config: libmode.Config{Clients: 2, Duration: 5 * time.Second},
		Search: libmode.SearchOptions{Seeds: 4, Guided: libmode.GuidedOptions{Sections: 1}},
	}
}

// TestSearchLibraryFindsTheLostUpdate: the search finds the GC-pause lost
// update, shrinks it to one pause, and writes its run directory.
func TestSearchLibraryFindsTheLostUpdate(t *testing.T) {
	rep := userlocktest.ExpectLibraryFinds(t, setNX(false), "critical-sections")
	require.NotNil(t, rep.Shrunk)
	assert.Len(t, rep.Shrunk.Result.Schedule.Faults, 1)
	assert.NotEmpty(t, rep.Dir)
	assert.Equal(t, 44, rep.Guided.Runs)
}

// TestSearchLibraryDataSafe: with a fencing token and storage that fences
// reads and writes, no run of the search corrupts the data, though the
// lock breaks.
func TestSearchLibraryDataSafe(t *testing.T) {
	lib := setNX(true)
	lib.Storage, lib.FenceReads = storage.Fenced, true
	rep := userlocktest.ExpectLibraryDataSafe(t, lib)
	require.NotNil(t, rep.Finding, "mutual exclusion still breaks")
	assert.Equal(t, models.Invalid, rep.Finding.Verdict("mutual-exclusion"))
}

// TestDataProblems: fenced on writes only, a stale write that lands
// between the new holder's read and its write loses an update, and
// DataProblems (what ExpectLibraryDataSafe reports) says so; the search's
// report without a finding has none.
func TestDataProblems(t *testing.T) {
	lib := setNX(true)
	lib.Storage = storage.Fenced
	lib.Search.NoShrink = true
	rep := userlocktest.SearchLibrary(t, lib)
	problems := userlocktest.DataProblems(rep)
	require.NotEmpty(t, problems)
	assert.Contains(t, problems[0], "critical-sections invalid")
	assert.False(t, userlocktest.Found(rep, "fencing-tokens"))
	assert.Empty(t, userlocktest.DataProblems(libmode.Report{}))
	assert.False(t, userlocktest.Found(libmode.Report{}, "critical-sections"))
}

// TestReplayLine: the go test line of the report runs the shrunk schedule
// alone, and ExpectLibraryFinds accepts the replayed finding.
func TestReplayLine(t *testing.T) {
	rep := userlocktest.SearchLibrary(t, setNX(false))
	require.NotNil(t, rep.Shrunk)
	for _, kv := range strings.Fields(rep.ReplayLine(rep.Shrunk.Result)) {
		if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(k, "LIBMODE_") {
			t.Setenv(k, v)
		}
	}
	t.Setenv("LIBMODE_REPORT_DIR", t.TempDir())
	again := userlocktest.ExpectLibraryFinds(t, setNX(false), "critical-sections")
	assert.Zero(t, again.Guided.Runs+again.Random.Runs)
	require.NotNil(t, again.Finding)
	assert.Equal(t, len(rep.Shrunk.Result.Events), len(again.Finding.Events))
}

package databaselive

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	simdb "github.com/locklab/locklab/backends/database"
	"github.com/locklab/locklab/lockapi"
)

// testEnv is a client environment on the machine's clocks.
type testEnv struct {
	name  string
	start time.Time
	rnd   *rand.Rand
}

func (e *testEnv) Name() string          { return e.name }
func (e *testEnv) Mono() time.Duration   { return time.Since(e.start) }
func (e *testEnv) Wall() time.Duration   { return time.Duration(time.Now().UnixNano()) }
func (e *testEnv) Sleep(d time.Duration) { time.Sleep(d) }
func (e *testEnv) Rand() *rand.Rand      { return e.rnd }

// TestAReleaseOnASessionTheServerEndedSaysTheLockWentWithIt: a client
// holds the lock (a row lock in its transaction, or an advisory lock of its
// session) when the server ends its session: a crash and a restart, or
// pg_terminate_backend (SQLSTATE 57P01, what a shutdown sends). Its
// release finds the connection gone; PostgreSQL rolled the session's
// transaction back and released its locks when the backend died, so the
// release says the lock was no longer held (lockapi.ErrNotHeld: the
// holding ended before the answer), not that it is still held, and another
// client takes the lock at once.
func TestAReleaseOnASessionTheServerEndedSaysTheLockWentWithIt(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	for _, mode := range []simdb.Mode{simdb.ModeForUpdate, simdb.ModeAdvisory} {
		for _, end := range []string{"crash", "terminate"} {
			t.Run(string(mode)+"/"+end, func(t *testing.T) {
				o := simdb.DefaultOptions()
				o.Mode = mode
				key := string(mode) + "-" + end
				client := func(name string) (*simdb.Client, *Transport) {
					env := &testEnv{name: name, start: time.Now(), rnd: rand.New(rand.NewPCG(1, 2))}
					c, tr := NewClient(ctx, env, nil, s, s.Addr(), o)
					t.Cleanup(tr.Close)
					return c, tr
				}
				holder, _ := client("c1")
				lease, err := holder.Acquire(key, time.Second)
				require.NoError(t, err)
				switch end {
				case "crash":
					require.NoError(t, s.Crash())
					require.NoError(t, s.Restart(ctx, 30*time.Second))
				case "terminate":
					require.NoError(t, run(t, s, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'c1/1'"))
				}
				err = holder.Release(lease)
				require.Error(t, err, "the session that held the lock is gone")
				assert.ErrorIs(t, err, lockapi.ErrNotHeld, "the lock went with the session: %v", err)
				assert.False(t, lockapi.Unknown(err), "certain, not unknown: %v", err)
				other, _ := client("c2")
				_, err = other.Acquire(key, 0)
				assert.NoError(t, err, "the lock is free")
			})
		}
	}
}

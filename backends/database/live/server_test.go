package databaselive

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	simdb "github.com/locklab/locklab/backends/database"
	"github.com/locklab/locklab/internal/proc"
)

// start starts a server for the test (skipped when PostgreSQL is not
// installed: the skip names the Debian package).
func start(t *testing.T) *Server {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	if _, err := Binaries(); err != nil {
		t.Skip(err)
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o711)) // the postgres user passes
	s, err := Start(context.Background(), filepath.Join(dir, "db"), 30*time.Second, 2)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// run connects and runs sql, within 5 s: long enough for a server just
// resumed on a loaded machine (300 ms was not, once); a crashed server
// refuses the connection at once.
func run(t *testing.T, s *Server, sql string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := s.Connect(ctx, s.Addr(), "test", nil)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// TestTheServerUndergoesRealFaults: a pause stops every postgres process
// (the backends too: a request on an open connection gets no answer), a
// crash kills them all and a restart on the same data keeps what was
// committed and the grant sequence.
func TestTheServerUndergoesRealFaults(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	conn, err := s.Connect(ctx, s.Addr(), "holder", nil)
	require.NoError(t, err)
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "INSERT INTO data (key, value) VALUES ('k', 7)")
	require.NoError(t, err)

	require.NoError(t, s.Pause())
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err = conn.Exec(short, "SELECT 1")
	cancel()
	assert.Error(t, err, "a paused server answers nothing")
	require.NoError(t, s.Resume())
	assert.NoError(t, run(t, s, "SELECT 1"), "resumed")

	require.NoError(t, run(t, s, "SELECT nextval('grants')"))
	require.NoError(t, s.Crash())
	assert.False(t, s.Alive())
	assert.Error(t, run(t, s, "SELECT 1"), "crashed")
	require.NoError(t, s.Restart(ctx, 30*time.Second))
	require.NoError(t, s.Restart(ctx, 30*time.Second), "restarting a running server changes nothing")
	conn2, err := s.Connect(ctx, s.Addr(), "after", nil)
	require.NoError(t, err)
	defer conn2.Close(ctx)
	var v, next int64
	require.NoError(t, conn2.QueryRow(ctx, "SELECT value FROM data WHERE key = 'k'").Scan(&v))
	assert.Equal(t, int64(7), v, "the committed row survives the crash")
	require.NoError(t, conn2.QueryRow(ctx, "SELECT nextval('grants')").Scan(&next))
	assert.Greater(t, next, int64(1), "grant numbers never repeat after a crash")
}

// TestTheServerReportsTheConnectionsItEnds: a connection idle in a
// transaction, and an idle session, for longer than their timeouts are
// ended by the server, which the log reader reports by connection name.
func TestTheServerReportsTheConnectionsItEnds(t *testing.T) {
	s := start(t)
	var mu sync.Mutex
	var got []Event
	s.OnEvent(func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e)
	})
	ctx := context.Background()
	params := map[string]string{"idle_in_transaction_session_timeout": "200", "idle_session_timeout": "200"}
	inTxn, err := s.Connect(ctx, s.Addr(), "c1/1", params)
	require.NoError(t, err)
	defer inTxn.Close(ctx)
	_, err = inTxn.Exec(ctx, "BEGIN")
	require.NoError(t, err)
	idle, err := s.Connect(ctx, s.Addr(), "c2/1", params)
	require.NoError(t, err)
	defer idle.Close(ctx)
	want := []Event{{Conn: "c1/1", InTransaction: true}, {Conn: "c2/1"}}
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) == 2
	}, 10*time.Second, 10*time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	slices.SortFunc(got, func(a, b Event) int { return strings.Compare(a.Conn, b.Conn) })
	assert.Equal(t, want, got)
	_, err = inTxn.Exec(ctx, "SELECT 1")
	assert.ErrorContains(t, classify(err), "connection closed by the server", "the next request learns it: certainly not run")
}

// TestAMissingServerNamesTheDebianPackage: without PostgreSQL, the error
// says which package to install.
func TestAMissingServerNamesTheDebianPackage(t *testing.T) {
	root := installRoot
	t.Cleanup(func() { installRoot = root })
	installRoot = t.TempDir()
	t.Setenv("PATH", t.TempDir())
	_, err := Binaries()
	var missing *proc.MissingError
	require.ErrorAs(t, err, &missing)
	assert.Equal(t, "postgresql", missing.Package)
	assert.ErrorContains(t, err, "apt-get install -y --no-install-recommends postgresql")
}

// TestAServerWhosePortWasTakenIsNotReady: a restart on a port another
// postgres took meanwhile fails (the answer names the other data directory)
// instead of going on against the other server.
func TestAServerWhosePortWasTakenIsNotReady(t *testing.T) {
	a, b := start(t), start(t)
	ctx := context.Background()
	require.NoError(t, b.Crash())
	b.port = a.port // as if a had taken b's port while b was down
	err := b.Restart(ctx, 10*time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "before it was ready")
	assert.Contains(t, err.Error(), "answered by another postgres")
	assert.NoError(t, run(t, a, "SELECT 1"), "the other server runs on")
}

// TestACrashEndsEveryConnection is the real server's side of the simulated
// database's crash (backends/database TestACrashEndsEveryConnection): a
// connection opened before a crash is gone after the restart — its next
// request fails without running (classify: the connection was closed, a
// definite failure) and does not autocommit on some new session — and the
// write its transaction held uncommitted is lost, while a row lock it held
// is free.
func TestACrashEndsEveryConnection(t *testing.T) {
	s := start(t)
	ctx := context.Background()
	require.NoError(t, run(t, s, "INSERT INTO data (key, value) VALUES ('k', 1)"))
	holder, err := s.Connect(ctx, s.Addr(), "c1/1", nil)
	require.NoError(t, err)
	defer holder.Close(ctx)
	for _, sql := range []string{"BEGIN", "SELECT value FROM data WHERE key = 'k' FOR UPDATE", "UPDATE data SET value = 2 WHERE key = 'k'"} {
		_, err = holder.Exec(ctx, sql)
		require.NoError(t, err, sql)
	}
	require.NoError(t, s.Crash())
	require.NoError(t, s.Restart(ctx, 30*time.Second))

	_, err = holder.Exec(ctx, "UPDATE data SET value = 3 WHERE key = 'k'")
	require.Error(t, err, "the pre-crash connection is gone")
	assert.ErrorIs(t, classify(err), simdb.ErrClosed, "the request certainly did not run: %v", err)

	after, err := s.Connect(ctx, s.Addr(), "c2/1", nil)
	require.NoError(t, err)
	defer after.Close(ctx)
	var v int64
	require.NoError(t, after.QueryRow(ctx, "SELECT value FROM data WHERE key = 'k' FOR UPDATE NOWAIT").Scan(&v),
		"the row lock went with the crash")
	assert.Equal(t, int64(1), v, "the uncommitted write was lost, the stale one never ran")
}

package userlocktest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/libmode"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/storage"
)

// Library is a lock library a program really uses, named by its acquire
// and release over go-redis clients, for SearchLibrary: the library runs
// unmodified in library mode (package libmode), in virtual time against
// simulated Redis instances.
type Library struct {
	// Name names the library in the report ("bsm/redislock").
	Name string
	// Setup, when set, builds what a client's Acquire and Release need
	// once (a redislock.Client, a redsync.Redsync over c.RDBs) and keeps
	// it in c.State.
	Setup func(c *Conn) error
	// Acquire takes key through the library. An error wrapping
	// lockapi.ErrNotAcquired is a certain refusal, any other error an
	// unknown outcome. The Lease's Owner is the value the library stored
	// (it ties the grant to the servers' record), Valid or Until its
	// promise, Token a fencing token if the code takes one, Handle the
	// library's lock object for Release.
	Acquire func(ctx context.Context, c *Conn, key string) (libmode.Lease, error)
	// Release gives the lease back through the library; an error wrapping
	// lockapi.ErrNotHeld means it was certainly no longer held.
	Release func(ctx context.Context, c *Conn, l libmode.Lease) error
	// TTL is the lease the library's lock promises: the scale of the
	// random faults, and the timeout the guided pauses straddle. Default 1 s.
	TTL time.Duration
	// Instances is the number of simulated Redis instances (5 for
	// Redlock). Default 1.
	Instances int
	// Storage and FenceReads are the protected storage's mode (unfenced
	// by default; fenced checks the lease's Token).
	Storage    storage.Mode
	FenceReads bool
	// Config holds further settings of the runs (clients, time, seed,
	// hold, latency); its NewLock, Close, Instances, Storage and
	// FenceReads are set from the fields above. Default 3 clients, 10 s.
	Config libmode.Config
	// Search tunes the search (seeds, guided bound, shrinking, report
	// directory); its Lease is TTL.
	Search libmode.SearchOptions
}

// Conn is one client's view for Acquire and Release: its go-redis
// clients (go-redis's default options, the in-memory dialer), one per
// instance.
type Conn struct {
	// Name is the client's name (c1, c2, ...).
	Name string
	// RDB is the client of the first instance; RDBs those of every
	// instance, in order.
	RDB  *redis.Client
	RDBs []*redis.Client
	// State is what Setup kept.
	State any
}

// libLock adapts a Library to libmode.Lock for one client.
type libLock struct {
	lib  *Library
	conn *Conn
}

func (l libLock) Acquire(ctx context.Context, key string) (libmode.Lease, error) {
	return l.lib.Acquire(ctx, l.conn, key)
}

func (l libLock) Release(ctx context.Context, lease libmode.Lease) error {
	return l.lib.Release(ctx, l.conn, lease)
}

// RunConfig is the library's run configuration for package libmode:
// lib.Config with the lock built from Acquire and Release over go-redis
// clients, for a test that calls libmode.Run, Guided, Shrink or Replay
// itself.
func (lib Library) RunConfig() libmode.Config {
	cfg := lib.Config
	if cfg.Duration == 0 {
		cfg.Duration = 10 * time.Second
	}
	cfg.Instances, cfg.Storage, cfg.FenceReads = lib.Instances, lib.Storage, lib.FenceReads
	cfg.NewLock = func(c *libmode.Client) (libmode.Lock, error) {
		conn := &Conn{Name: c.Name()}
		for i := range c.Addrs() {
			conn.RDBs = append(conn.RDBs, redis.NewClient(c.RedisOptions(i)))
		}
		conn.RDB = conn.RDBs[0]
		if lib.Setup != nil {
			if err := lib.Setup(conn); err != nil {
				closeAll(conn)
				return nil, fmt.Errorf("setup of %s: %w", lib.Name, err)
			}
		}
		return libLock{lib: &lib, conn: conn}, nil
	}
	cfg.Close = func(l libmode.Lock) error { return closeAll(l.(libLock).conn) }
	return cfg
}

func closeAll(c *Conn) error {
	var errs []error
	for _, r := range c.RDBs {
		errs = append(errs, r.Close())
	}
	return errors.Join(errs...)
}

// SearchLibrary searches lib as locklab searches a built-in system:
// random runs by seed, every guided placement of a single pause anchored
// at the clients' steps, the first finding shrunk to its smallest
// schedule, and the finding's run directory (report.html, schedule.json,
// the servers' record) written with the go test line that replays it.
// The report is logged (go test -v shows it) and returned; the test's
// verdict is the caller's (ExpectLibraryFinds, ExpectLibraryDataSafe).
// t must not be parallel (library mode seeds crypto/rand for the process).
func SearchLibrary(t *testing.T, lib Library) libmode.Report {
	t.Helper()
	if lib.Acquire == nil || lib.Release == nil {
		t.Fatalf("userlocktest: library %q: Acquire and Release must both be set", lib.Name)
	}
	opts := lib.Search
	if lib.TTL > 0 {
		opts.Lease = lib.TTL
	}
	rep := libmode.Search(t, lib.RunConfig(), opts)
	t.Logf("%s in library mode:\n%s", lib.Name, rep.Text())
	return rep
}

// ExpectLibraryFinds searches lib and fails t unless the search finds a
// run in which check ("critical-sections", "mutual-exclusion", ...) is
// invalid, backed by the servers' record (grants recorded) and classified
// as a kind of violation (Found).
func ExpectLibraryFinds(t *testing.T, lib Library, check string) libmode.Report {
	t.Helper()
	rep := SearchLibrary(t, lib)
	if !Found(rep, check) {
		t.Errorf("%s: no run of the search found %s invalid with the servers' record and a kind of violation behind it", lib.Name, check)
	}
	return rep
}

// Found reports whether a run of rep's searches (or its shrunk run) has
// check invalid, with grants in the servers' record and a kind of
// violation.
func Found(rep libmode.Report, check string) bool {
	for _, r := range findings(rep) {
		if r.Verdict(check) == models.Invalid && len(r.Grants) > 0 && len(r.Kinds) > 0 {
			return true
		}
	}
	return false
}

// ExpectLibraryDataSafe searches lib and fails t if any run of the search
// corrupted the data it guards (DataProblems): the test of a library used
// with fencing tokens, whose lock may still break (mutual exclusion
// invalid) while the data stays safe.
func ExpectLibraryDataSafe(t *testing.T, lib Library) libmode.Report {
	t.Helper()
	rep := SearchLibrary(t, lib)
	for _, p := range DataProblems(rep) {
		t.Errorf("%s: the data is not safe: %s", lib.Name, p)
	}
	return rep
}

// DataProblems are the runs of rep's searches that corrupted the data
// (critical-sections or fencing-tokens invalid), one line each.
func DataProblems(rep libmode.Report) []string {
	var out []string
	for _, r := range findings(rep) {
		for _, c := range []string{"critical-sections", "fencing-tokens"} {
			if r.Verdict(c) == models.Invalid {
				out = append(out, fmt.Sprintf("%s invalid with seed %d, faults %s", c, r.Seed, r.Faults))
			}
		}
	}
	return out
}

// findings are every failing run of rep's searches, its finding (a
// replayed run's, under LIBMODE_REPLAY) and its shrunk run.
func findings(rep libmode.Report) []libmode.Result {
	out := append(append([]libmode.Result{}, rep.Random.Failing...), rep.Guided.Failing...)
	if rep.Finding != nil {
		out = append(out, *rep.Finding)
	}
	if rep.Shrunk != nil {
		out = append(out, rep.Shrunk.Result)
	}
	return out
}

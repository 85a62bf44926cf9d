package database

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// setup is a database with the given options and a world to add clients to.
func setup(t *testing.T, opts ...string) (*sim.World, *sim.Node, *Server, Options) {
	t.Helper()
	o := DefaultOptions()
	for i := 0; i+1 < len(opts); i += 2 {
		require.NoError(t, Table.Set(&o, opts[i], opts[i+1]))
	}
	require.NoError(t, o.Validate())
	w := sim.NewWorld(sim.Config{Seed: 1, Link: sim.Link{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond}})
	srv := NewServer(o)
	db := w.AddNode("db", sim.NodeOptions{Handler: srv})
	t.Cleanup(w.Close)
	return w, db, srv, o
}

// twoClients runs c1 (takes the lock, holds it hold, releases) and c2 (tries
// for the lock from 100 ms with a 20 s budget) and returns what each saw.
func twoClients(t *testing.T, hold time.Duration, setupC1 func(w *sim.World, n *sim.Node), opts ...string) []string {
	w, db, _, o := setup(t, opts...)
	var got []string
	c1 := w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
		c := NewClient(p, db.ID(), o)
		l, err := c.Acquire("k", time.Second)
		require.NoError(t, err)
		got = append(got, fmt.Sprintf("c1 token %d at %v", l.Token, p.World().Now().Round(100*time.Millisecond)))
		p.Sleep(hold)
		got = append(got, fmt.Sprintf("c1 release: %v", c.Release(l) == nil))
	})})
	w.AddNode("c2", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
		p.Sleep(100 * time.Millisecond)
		c := NewClient(p, db.ID(), o)
		l, err := c.Acquire("k", 20*time.Second)
		require.NoError(t, err)
		got = append(got, fmt.Sprintf("c2 token %d at %v", l.Token, p.World().Now().Round(100*time.Millisecond)))
	})})
	if setupC1 != nil {
		setupC1(w, c1)
	}
	w.Run(30 * time.Second)
	return got
}

func TestEachModeExcludesUntilRelease(t *testing.T) {
	for _, mode := range []string{"unique-row", "for-update", "advisory"} {
		t.Run(mode, func(t *testing.T) {
			got := twoClients(t, 3*time.Second, nil, "mode", mode)
			// for-update grants c2 when c1's commit applies: c2 may learn it before c1 does.
			assert.ElementsMatch(t, []string{"c1 token 1 at 0s", "c1 release: true", "c2 token 2 at 3s"}, got)
		})
	}
}

func TestUniqueRowExpiresByTheAcquirersWallClock(t *testing.T) {
	tests := []struct {
		name string
		jump time.Duration
		want string
	}{
		{"clocks agree: c2 waits for the expiry (10 s)", 0, "c2 token 2 at 10s"},
		{"c2's clock 20 s ahead: c2 takes the live row at once", 20 * time.Second, "c2 token 2 at 100ms"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := twoClients(t, 15*time.Second, func(w *sim.World, c1 *sim.Node) {
				w.Node("c2").JumpClock(tc.jump)
			}, "mode", "unique-row")
			assert.Contains(t, got, tc.want)
		})
	}
}

func TestASilentConnectionLosesItsLocks(t *testing.T) {
	for _, mode := range []string{"for-update", "advisory"} {
		t.Run(mode, func(t *testing.T) {
			got := twoClients(t, 20*time.Second, func(w *sim.World, c1 *sim.Node) {
				w.At(time.Second, c1.Pause) // c1 holds and falls silent: no pings
			}, "mode", mode)
			assert.Equal(t, []string{"c1 token 1 at 0s", "c2 token 2 at 5.5s"}, got,
				"the server aborts c1's session after conn-timeout (5 s, checked every 500 ms)")
		})
	}
}

func TestDataInTheLockTransaction(t *testing.T) {
	w, db, srv, o := setup(t, "mode", "for-update", "resource", "db")
	var errs []string
	c1 := w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
		c := NewClient(p, db.ID(), o)
		l, err := c.Acquire("k", time.Second)
		require.NoError(t, err)
		require.NoError(t, c.Write("k", 1, l.Token))
		require.NoError(t, c.Release(l))
		l, err = c.Acquire("k", time.Second)
		require.NoError(t, err)
		p.Node().Pause() // stalls past conn-timeout while holding
		p.World().After(8*time.Second, p.Node().Resume)
		err = c.Write("k", 2, l.Token)
		errs = append(errs, fmt.Sprint(errors.Is(err, lockapi.ErrRejected)))
	})})
	_ = c1
	w.Run(20 * time.Second)
	assert.Equal(t, []string{"true"}, errs, "the write after the abort is rejected")
	assert.Equal(t, int64(1), srv.Value("data/k"))
}

func TestOptimisticRejectsAConflictingWrite(t *testing.T) {
	w, db, srv, o := setup(t, "mode", "optimistic")
	var got []string
	for _, name := range []string{"c1", "c2"} {
		w.AddNode(name, sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
			c := NewClient(p, db.ID(), o)
			l, _ := c.Acquire("k", 0)
			v, err := c.Read("k", l.Token)
			require.NoError(t, err)
			p.Sleep(100 * time.Millisecond)
			err = c.Write("k", v+1, l.Token)
			got = append(got, fmt.Sprintf("%s rejected=%v", name, errors.Is(err, lockapi.ErrRejected)))
		})})
	}
	w.Run(time.Second)
	assert.ElementsMatch(t, []string{"c1 rejected=false", "c2 rejected=true"}, got)
	assert.Equal(t, int64(1), srv.Value("data/k"))
}

func TestUnlockBeforeCommitNeedsUniqueRowInTheDatabase(t *testing.T) {
	o := DefaultOptions()
	o.UnlockBeforeCommit = true
	assert.Error(t, o.Validate())
	o.Mode, o.Resource = ModeUniqueRow, ResourceDB
	assert.NoError(t, o.Validate())
}

// TestVersionsOfThePairSeeTheWriteSkew: two clients each read rows a and b
// (preset to 1) and write 0 to their own row. With per-row versions both
// compare-and-swaps succeed (write skew); with versions=pair the second
// write fails, because the first changed a row it read.
func TestVersionsOfThePairSeeTheWriteSkew(t *testing.T) {
	for _, tc := range []struct {
		versions string
		want     []string
		rows     int64
	}{
		{"row", []string{"c1 rejected=false", "c2 rejected=false"}, 0},
		{"pair", []string{"c1 rejected=false", "c2 rejected=true"}, 1},
	} {
		t.Run(tc.versions, func(t *testing.T) {
			w, db, srv, o := setup(t, "mode", "optimistic", "versions", tc.versions)
			srv.Preset(map[string]int64{"a": 1, "b": 1})
			var got []string
			for _, c := range [][2]string{{"c1", "a"}, {"c2", "b"}} {
				name, own := c[0], c[1]
				w.AddNode(name, sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
					c := NewClient(p, db.ID(), o)
					l, _ := c.Acquire("oncall", 0)
					for _, k := range []string{"a", "b"} {
						v, err := c.Read(k, l.Token)
						require.NoError(t, err)
						require.Equal(t, int64(1), v, "preset")
					}
					if name == "c2" {
						p.Sleep(100 * time.Millisecond)
					}
					err := c.Write(own, 0, l.Token)
					got = append(got, fmt.Sprintf("%s rejected=%v", name, errors.Is(err, lockapi.ErrRejected)))
				})})
			}
			w.Run(time.Second)
			assert.ElementsMatch(t, tc.want, got)
			assert.Equal(t, tc.rows, srv.Value("data/a")+srv.Value("data/b"), "rows on call at the end")
		})
	}
	o := DefaultOptions()
	o.Versions = VersionsPair
	assert.ErrorContains(t, o.Validate(), "versions=pair: only with mode=optimistic")
}

// TestACrashEndsEveryConnection: the database crashes at 2 s and restarts at
// 3 s while c1 holds the lock; c1 writes at 4 s on the connection it opened
// before the crash. A real server has no such connection: the write fails
// (certainly not run) and the client reconnects; the model used to open the
// connection anew and autocommit the write outside any transaction or lock.
func TestACrashEndsEveryConnection(t *testing.T) {
	tests := []struct {
		name  string
		opts  []string
		pause bool // c1 falls silent at 1 s (the server aborts it first), until 3.5 s
		// release: the lock row of unique-row is committed data and survives;
		// a for-update lock ended with its transaction.
		release bool
	}{
		{"for-update: the lock's transaction is lost in the crash", []string{"mode", "for-update", "resource", "db"}, false, false},
		{"for-update: a connection aborted for silence stays closed across the crash", []string{"mode", "for-update", "resource", "db"}, true, false},
		{"unique-row: an autocommit write on a pre-crash connection fails", []string{"mode", "unique-row", "resource", "db"}, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, db, srv, o := setup(t, tc.opts...)
			if tc.pause {
				o.ConnTimeout = 500 * time.Millisecond
			}
			var got []string
			c1 := w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
				c := NewClient(p, db.ID(), o)
				l, err := c.Acquire("k", time.Second)
				require.NoError(t, err)
				p.Sleep(4*time.Second - p.World().Now())
				err = c.Write("k", 2, l.Token)
				got = append(got, fmt.Sprintf("rejected=%v", errors.Is(err, lockapi.ErrRejected)))
				got = append(got, fmt.Sprintf("release ok=%v", c.Release(l) == nil))
			})})
			if tc.pause {
				w.At(time.Second, c1.Pause)
				w.At(3500*time.Millisecond, c1.Resume)
			}
			w.At(2*time.Second, db.Crash)
			w.At(3*time.Second, db.Restart)
			w.Run(10 * time.Second)
			assert.Equal(t, []string{"rejected=true", fmt.Sprintf("release ok=%v", tc.release)}, got)
			assert.Equal(t, int64(0), srv.Value("data/k"), "the stale write never applied")
		})
	}
}

// TestTheServersRecordOfGrants: the server records each grant and its end;
// a lock without a lease that the server itself takes from its holder (a
// silent connection's transaction aborted, a crash) is a broken promise, a
// release is not, and a unique row taken over after it expired breaks
// nothing.
func TestTheServersRecordOfGrants(t *testing.T) {
	tests := []struct {
		name     string
		mode     string
		fault    func(w *sim.World, c1, db *sim.Node)
		breaches []string
	}{
		{"for-update, released", "for-update", nil, nil},
		{"advisory, released", "advisory", nil, nil},
		{"for-update, the holder falls silent", "for-update", func(w *sim.World, c1, db *sim.Node) { w.At(time.Second, c1.Pause) },
			[]string{`"k": db deleted the lock of c1 as c1#1 from 0.001s to 5.500s at 5.500s`}},
		{"advisory, the holder falls silent", "advisory", func(w *sim.World, c1, db *sim.Node) { w.At(time.Second, c1.Pause) },
			[]string{`"k": db deleted the lock of c1 as c1#1 from 0.001s to 5.500s at 5.500s`}},
		{"for-update, the server crashes", "for-update", func(w *sim.World, c1, db *sim.Node) {
			w.At(time.Second, db.Crash)
			w.At(1500*time.Millisecond, db.Restart)
		}, []string{`"k": db deleted the lock of c1 as c1#1 from 0.001s to 1.000s at 1.000s`}},
		{"unique-row, the holder falls silent past its row's expiry", "unique-row", func(w *sim.World, c1, db *sim.Node) { w.At(time.Second, c1.Pause) }, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, db, srv, o := setup(t, "mode", tc.mode)
			log := lockapi.NewGrantLog(1)
			srv.RecordGrants(log)
			for _, name := range []string{"c1", "c2"} {
				w.AddNode(name, sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
					if name == "c2" {
						p.Sleep(100 * time.Millisecond)
					}
					c := NewClient(p, db.ID(), o)
					l, err := c.Acquire("k", 20*time.Second)
					if err != nil {
						return
					}
					p.Sleep(3 * time.Second)
					_ = c.Release(l)
				})})
			}
			if tc.fault != nil {
				tc.fault(w, w.Node("c1"), db)
			}
			w.Run(30 * time.Second)
			require.NotEmpty(t, log.Grants())
			var got []string
			for _, b := range log.Breaches() {
				got = append(got, b.String())
			}
			assert.Equal(t, tc.breaches, got)
		})
	}
}

// TestAnUnknownOutcomeStaysUnknown: a request whose reply is lost (the
// link from the server is cut) has an unknown outcome, never a definite
// failure, whatever the client does next; only a request the server
// refused without running it ("closed") is one.
func TestAnUnknownOutcomeStaysUnknown(t *testing.T) {
	tests := []struct {
		name string
		op   func(c *Client, l lockapi.Lease) error
	}{
		{"a write in the lock's transaction", func(c *Client, l lockapi.Lease) error { return c.Write("k", 1, l.Token) }},
		{"the release's commit", func(c *Client, l lockapi.Lease) error { return c.Release(l) }},
		{"a read", func(c *Client, l lockapi.Lease) error { _, err := c.Read("k", l.Token); return err }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, db, _, o := setup(t, "mode", "for-update", "resource", "db")
			var got []error
			w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
				c := NewClient(p, db.ID(), o)
				l, err := c.Acquire("k", time.Second)
				require.NoError(t, err)
				p.Sleep(time.Second)
				got = append(got, tc.op(c, l))
			})})
			w.At(500*time.Millisecond, func() { w.Network().Block(db, w.Node("c1")) })
			w.Run(5 * time.Second)
			require.Len(t, got, 1)
			assert.True(t, lockapi.Unknown(got[0]), "unknown: %v", got[0])
			assert.NotErrorIs(t, got[0], lockapi.ErrRejected)
			assert.NotErrorIs(t, got[0], lockapi.ErrNotHeld)
		})
	}
}

// TestAUniqueRowPromisesFromItsStamp: a unique row expires by the clients'
// wall clocks at the expiry its acquirer stamped it with, so the record of
// grants counts its lease from the stamp, not from when the server ran the
// insert. The server is paused from 0 to pause; c1's insert (stamped at 0,
// 10 s TTL) waits there and runs at the resume; c2 (clock right) takes the
// row over once its clock passes the expiry, at 10 s. The record used to
// promise c1 the row until pause + 10 s, and showed the take-over as two
// owners' grants overlapping; an insert that ran after its expiry promised
// nothing.
func TestAUniqueRowPromisesFromItsStamp(t *testing.T) {
	tests := []struct {
		name  string
		pause time.Duration
		until time.Duration // c1's grant in the record
	}{
		{"the insert waits 5 s: its lease has 5 s left", 5 * time.Second, 10 * time.Second},
		{"the insert waits 12 s: it runs expired", 12 * time.Second, 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, db, srv, o := setup(t, "mode", "unique-row")
			log := lockapi.NewGrantLog(1)
			srv.RecordGrants(log)
			db.Pause()
			w.At(tc.pause, db.Resume)
			for _, name := range []string{"c1", "c2"} {
				w.AddNode(name, sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
					if name == "c2" {
						p.Sleep(tc.pause + 100*time.Millisecond)
					}
					c := NewClient(p, db.ID(), o)
					if l, err := c.Acquire("k", 20*time.Second); err == nil {
						p.Sleep(time.Second)
						_ = c.Release(l)
					}
				})})
			}
			w.Run(30 * time.Second)
			grants := log.Grants()
			require.Len(t, grants, 2)
			assert.Equal(t, "c1#1", grants[0].Owner)
			assert.Equal(t, tc.pause, grants[0].At.Truncate(time.Millisecond), "the insert runs at the resume")
			assert.Equal(t, tc.until, grants[0].Until)
			assert.Equal(t, "c2#1", grants[1].Owner)
			assert.Empty(t, log.Breaches())
		})
	}
}

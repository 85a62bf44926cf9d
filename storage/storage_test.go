package storage

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

func TestFencing(t *testing.T) {
	type op struct {
		write bool
		token uint64
		value int64
	}
	tests := []struct {
		name       string
		opts       Options
		ops        []op
		rejected   []bool
		finalValue int64
	}{
		{"unfenced accepts a stale token", Options{Mode: Unfenced},
			[]op{{true, 2, 10}, {true, 1, 20}}, []bool{false, false}, 20},
		{"fenced rejects a write below the highest token", Options{Mode: Fenced},
			[]op{{true, 2, 10}, {true, 1, 20}, {true, 2, 30}, {true, 3, 40}}, []bool{false, true, false, false}, 40},
		{"fenced reads are not checked by default", Options{Mode: Fenced},
			[]op{{false, 5, 0}, {true, 1, 20}}, []bool{false, false}, 20},
		{"with FenceReads a read raises the token", Options{Mode: Fenced, FenceReads: true},
			[]op{{false, 5, 0}, {true, 1, 20}, {false, 4, 0}}, []bool{false, true, true}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := sim.NewWorld(sim.Config{})
			srv := NewServer(tc.opts)
			sn := w.AddNode("storage", sim.NodeOptions{Handler: srv})
			cn := w.AddNode("c", sim.NodeOptions{})
			var rejected []bool
			cn.Spawn("c", func(p *sim.Proc) {
				c := &Client{P: p, Server: sn.ID()}
				for _, o := range tc.ops {
					var err error
					if o.write {
						err = c.Write("k", o.value, o.token)
					} else {
						_, err = c.Read("k", o.token)
					}
					rejected = append(rejected, err != nil)
					if err != nil {
						assert.ErrorIs(t, err, lockapi.ErrRejected)
					}
				}
			})
			w.Run(time.Second)
			assert.Equal(t, tc.rejected, rejected)
			assert.Equal(t, tc.finalValue, srv.Value("k"))
		})
	}
}

func TestTimeoutIsUnknown(t *testing.T) {
	w := sim.NewWorld(sim.Config{})
	sn := w.AddNode("storage", sim.NodeOptions{Handler: NewServer(Options{})})
	cn := w.AddNode("c", sim.NodeOptions{})
	w.Network().Block(cn, sn)
	var err error
	cn.Spawn("c", func(p *sim.Proc) { err = (&Client{P: p, Server: sn.ID()}).Write("k", 1, 0) })
	w.Run(time.Second)
	assert.ErrorIs(t, err, lockapi.ErrUnknown)
}

func TestParseMode(t *testing.T) {
	m, err := ParseMode("fenced")
	assert.NoError(t, err)
	assert.Equal(t, Fenced, m)
	m, err = ParseMode("check")
	assert.NoError(t, err)
	assert.Equal(t, Check, m)
	_, err = ParseMode("checked")
	assert.ErrorContains(t, err, `unknown storage mode "checked"`)
}

// TestCheckModeAsksBeforeEachWrite: in check mode a write lands only if the
// lock service says its token is current, and the answer comes from a round
// trip the storage waits for.
func TestCheckModeAsksBeforeEachWrite(t *testing.T) {
	for _, tc := range []struct {
		name    string
		current bool
		want    error
	}{{"current token: applied", true, nil}, {"stale token: rejected", false, lockapi.ErrRejected}} {
		t.Run(tc.name, func(t *testing.T) {
			w := sim.NewWorld(sim.Config{Seed: 1})
			var asked []uint64
			st := NewServer(Options{Mode: Check, Checker: func(p *sim.Proc, key string, token uint64) (bool, error) {
				p.Sleep(10 * time.Millisecond) // the round trip
				asked = append(asked, token)
				return tc.current, nil
			}})
			sn := w.AddNode("storage", sim.NodeOptions{Handler: st})
			cn := w.AddNode("c", sim.NodeOptions{})
			var err error
			cn.Spawn("c", func(p *sim.Proc) { err = (&Client{P: p, Server: sn.ID()}).Write("k", 7, 3) })
			w.Run(time.Second)
			assert.ErrorIs(t, err, tc.want)
			assert.Equal(t, []uint64{3}, asked)
			if tc.current {
				assert.Equal(t, int64(7), st.Value("k"))
			} else {
				assert.Equal(t, int64(0), st.Value("k"))
			}
		})
	}
}

// TestStorageRecordsItsWrites: with a recording write log the storage notes
// every write it applied, derived from the writer's read, and no write its
// fence rejected; two writes derived from the same read are a lost update.
func TestStorageRecordsItsWrites(t *testing.T) {
	tests := []struct {
		name    string
		mode    Mode
		applied []int64
		lost    int
	}{
		{"unfenced: both writes applied, one update lost", Unfenced, []int64{1, 1}, 1},
		{"fenced: the older token's write rejected", Fenced, []int64{1}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := sim.NewWorld(sim.Config{Seed: 1})
			log := lockapi.NewWriteLog()
			log.Record(true)
			sn := w.AddNode("storage", sim.NodeOptions{Handler: NewServer(Options{Mode: tc.mode, Writes: log})})
			a, b := w.AddNode("a", sim.NodeOptions{}), w.AddNode("b", sim.NodeOptions{})
			a.Spawn("a", func(p *sim.Proc) {
				c := &Client{P: p, Server: sn.ID()}
				v, _ := c.Read("k", 1)
				p.Sleep(100 * time.Millisecond)
				_ = c.Write("k", v+1, 1)
			})
			b.Spawn("b", func(p *sim.Proc) {
				c := &Client{P: p, Server: sn.ID()}
				v, _ := c.Read("k", 2)
				p.Sleep(50 * time.Millisecond)
				_ = c.Write("k", v+1, 2)
			})
			w.Run(time.Second)
			var applied []int64
			for _, wr := range log.Writes() {
				applied = append(applied, wr.Value)
				assert.True(t, wr.HasRead && wr.Committed, "%v", wr)
				assert.Equal(t, Resource, wr.Resource)
			}
			assert.Equal(t, tc.applied, applied)
			assert.Len(t, log.LostUpdates(), tc.lost)
		})
	}
}

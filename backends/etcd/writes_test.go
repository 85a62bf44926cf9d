package etcd

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/backends"
	"github.com/locklab/locklab/sim"
)

// TestTheRecordOfWritesDerivesEachWriteFromTheReadServed: the cluster
// records each guarded write it applied to the resource kept in etcd, with
// its client, token and value, derived from the read of the cell the client
// was served last; a serializable read served by a member cut from the
// leader returns the write that member had applied, not the write in force,
// and the guarded write derived from it overwrites an update it never saw:
// the record's lost update, though both writers held the lock.
func TestTheRecordOfWritesDerivesEachWriteFromTheReadServed(t *testing.T) {
	tests := []struct {
		name     string
		cut      bool // etcd3, which serves c2's serializable read, is cut from the others
		wantRead int64
		wantLost [][2]int64 // lost write's value, overwriting write's value
	}{
		{"an up-to-date member serves the read", false, 1, nil},
		{"a member cut from the leader serves a stale read", true, 0, [][2]int64{{1, 1}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, c := world(t)
			log := backends.NewWriteLog()
			c.RecordWrites(log)
			log.Record(true)
			if tc.cut {
				w.At(500*time.Millisecond, func() {
					w.Network().Partition([]*sim.Node{w.Node("etcd1"), w.Node("etcd2")}, []*sim.Node{w.Node("etcd3")})
				})
			}
			var tokens []uint64
			w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
				p.Sleep(time.Second)
				l := c.NewLock(p)
				store := NewGuardedStore(l)
				lease, err := l.Acquire("k", time.Second)
				require.NoError(t, err)
				v, err := store.Read("x", lease.Token)
				require.NoError(t, err)
				require.NoError(t, store.Write("x", v+1, lease.Token))
				require.NoError(t, l.Release(lease))
				tokens = append(tokens, lease.Token)
			})})
			w.AddNode("c2", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
				p.Sleep(3 * time.Second)
				l := c.NewLock(p)
				store := NewGuardedStore(l)
				lease, err := l.Acquire("k", 5*time.Second)
				require.NoError(t, err)
				body, err := p.Call(w.Node("etcd3").ID(), Request{Cmd: Command{Type: CmdTxn, Txn: Txn{Then: []Op{
					{Type: OpGet, Key: ResourcePrefix + "x"}}}}, Serializable: true}, time.Second)
				require.NoError(t, err)
				var v int64
				if kvs := body.(Response).Result.Results[0].Kvs; len(kvs) > 0 {
					v = 1 // the only value written
				}
				assert.Equal(t, tc.wantRead, v, "the value etcd3 served")
				require.NoError(t, store.Write("x", v+1, lease.Token))
				tokens = append(tokens, lease.Token)
			})})
			w.Run(10 * time.Second)

			require.Len(t, tokens, 2)
			ws := log.Writes()
			require.Len(t, ws, 2)
			for i, wr := range ws {
				assert.Equal(t, WritesResource, wr.Resource)
				assert.Equal(t, "x", wr.Key)
				assert.Equal(t, "etcd1", wr.Server, "the leader applies first")
				assert.Equal(t, []string{"c1", "c2"}[i], wr.Client)
				assert.Equal(t, tokens[i], wr.Token)
				assert.True(t, wr.Committed)
				assert.True(t, wr.HasRead, "write %d derives from a read", i)
				assert.Equal(t, i-1, wr.Replaced)
			}
			assert.Equal(t, int64(1), ws[0].Value)
			assert.Equal(t, int64(0), ws[0].Read)
			assert.Equal(t, -1, ws[0].Parent)
			assert.Equal(t, tc.wantRead+1, ws[1].Value)
			assert.Equal(t, tc.wantRead, ws[1].Read)
			assert.Equal(t, int(tc.wantRead)-1, ws[1].Parent, "the write the read returned")
			var lost [][2]int64
			for _, u := range log.LostUpdates() {
				lost = append(lost, [2]int64{u.Lost.Value, u.By.Value})
			}
			assert.Equal(t, tc.wantLost, lost)
		})
	}
}

// TestTheRecordOfWritesIsOffUntilAsked: a cluster told to record keeps
// nothing until the log's Record(true).
func TestTheRecordOfWritesIsOffUntilAsked(t *testing.T) {
	w, c := world(t)
	log := backends.NewWriteLog()
	c.RecordWrites(log)
	w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
		l := c.NewLock(p)
		lease, err := l.Acquire("k", time.Second)
		require.NoError(t, err)
		require.NoError(t, NewGuardedStore(l).Write("x", 1, lease.Token))
	})})
	w.Run(5 * time.Second)
	assert.Empty(t, log.Writes())
}

package etcd

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lockapi"
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
			log := lockapi.NewWriteLog()
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
	log := lockapi.NewWriteLog()
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

// TestALateReplyOfADeposedLeaderIsNoRead: a leader cut off before it learnt
// that c1's read committed is deposed; the new leader commits the read, c1
// gives up on it, c2 writes 1 and c1 reads it. Once the cut heals the old
// leader applies the read and answers it, late, with the 0 it read then:
// no client takes that answer, so c1's write of 2 derives from its read of
// 1, and the record shows no lost update.
func TestALateReplyOfADeposedLeaderIsNoRead(t *testing.T) {
	w, c := world(t)
	log := lockapi.NewWriteLog()
	c.RecordWrites(log)
	log.Record(true)
	get := Txn{Then: []Op{{Type: OpGet, Key: ResourcePrefix + "x"}}}
	put := func(v string) Txn { return Txn{Then: []Op{{Type: OpPut, Key: ResourcePrefix + "x", Value: v}}} }
	w.At(900*time.Millisecond, func() {
		for _, f := range []string{"etcd2", "etcd3"} {
			w.Network().Block(w.Node(f), w.Node("etcd1"))
		}
	})
	w.At(6*time.Second, w.Network().Heal)
	var lateFrom uint64
	w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
		p.Sleep(time.Second)
		_, err := p.Call(w.Node("etcd1").ID(), Request{Cmd: Command{Type: CmdTxn, Txn: get}}, time.Second)
		require.Error(t, err, "etcd1 never learns the read committed while cut")
		p.Sleep(5*time.Second - p.World().Now())
		kv := c.NewKV(p)
		r, err := kv.Txn(p, get)
		require.NoError(t, err)
		require.Len(t, r.Results[0].Kvs, 1)
		require.Equal(t, "1", r.Results[0].Kvs[0].Value)
		p.Sleep(8*time.Second - p.World().Now())
		_, err = kv.Txn(p, put("2"))
		require.NoError(t, err)
	})})
	w.AddNode("c2", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
		p.Sleep(4 * time.Second)
		_, err := c.NewKV(p).Txn(p, put("1"))
		require.NoError(t, err)
	})})
	w.Network().AddRule(sim.Rule{Match: func(m sim.Message) bool {
		if r, ok := m.Body.(Response); ok && m.To == w.Node("c1").ID() && r.Member == 1 && w.Now() > 6*time.Second &&
			len(r.Result.Results) == 1 && len(r.Result.Results[0].Kvs) == 0 {
			lateFrom = r.Member
		}
		return false
	}})
	w.Run(10 * time.Second)

	require.Equal(t, uint64(1), lateFrom, "etcd1 answered the read late, with the 0 it read")
	ws := log.Writes()
	require.Len(t, ws, 2)
	assert.Equal(t, "c2", ws[0].Client)
	assert.Equal(t, "c1", ws[1].Client)
	assert.True(t, ws[1].HasRead)
	assert.Equal(t, int64(1), ws[1].Read, "c1's write derives from the read it received")
	assert.Equal(t, 0, ws[1].Parent)
	assert.Empty(t, log.LostUpdates())
}

// TestPresetValuesAreReadAtRevisionOneAndSurviveARestart: the resource's
// initial values (Preset) are what a read returns before any write, on the
// leader and on a member that crashed and replayed its log, and they take no
// revision: the lock's token is the same as without them.
func TestPresetValuesAreReadAtRevisionOneAndSurviveARestart(t *testing.T) {
	tests := []struct {
		name    string
		initial map[string]int64
		want    []int64 // the linearizable read, then etcd2's after its restart
	}{
		{"no initial values", nil, []int64{0, 0}},
		{"x preset to 5", map[string]int64{"x": 5, "y": 1}, []int64{5, 5}},
	}
	var tokens []uint64
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, c := world(t)
			c.Preset(tc.initial)
			w.At(2*time.Second, func() { w.Node("etcd2").Crash() })
			w.At(3*time.Second, func() { w.Node("etcd2").Restart() })
			var got []int64
			w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
				l := c.NewLock(p)
				lease, err := l.Acquire("k", time.Second)
				require.NoError(t, err)
				tokens = append(tokens, lease.Token)
				v, err := NewGuardedStore(l).Read("x", lease.Token)
				require.NoError(t, err)
				got = append(got, v)
				p.Sleep(5*time.Second - p.World().Now())
				body, err := p.Call(w.Node("etcd2").ID(), Request{Cmd: Command{Type: CmdTxn, Txn: Txn{Then: []Op{
					{Type: OpGet, Key: ResourcePrefix + "x"}}}}, Serializable: true}, time.Second)
				require.NoError(t, err)
				v = 0
				if kvs := body.(Response).Result.Results[0].Kvs; len(kvs) > 0 {
					assert.Equal(t, int64(1), kvs[0].ModRev, "preset at revision 1")
					v, err = strconv.ParseInt(kvs[0].Value, 10, 64)
					require.NoError(t, err)
				}
				got = append(got, v)
			})})
			w.Run(6 * time.Second)
			assert.Equal(t, tc.want, got)
		})
	}
	require.Len(t, tokens, 2)
	assert.Equal(t, tokens[0], tokens[1], "the preset values take no revision")
}

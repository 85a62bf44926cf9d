package etcdclient

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/backends/etcd"
	"github.com/locklab/locklab/sim"
)

// TestKVOpOfReadsEveryOption pins the reading of clientv3's Ops, whose lease,
// sort and ignore flags are read by reflection: a clientv3 that renames its
// fields fails here.
func TestKVOpOfReadsEveryOption(t *testing.T) {
	cases := []struct {
		name string
		op   clientv3.Op
		want etcd.KVOp
	}{
		{"put with lease and prevKV", clientv3.OpPut("k", "v", clientv3.WithLease(7), clientv3.WithPrevKV()),
			etcd.KVOp{Type: etcd.KVPut, Key: "k", Value: "v", Lease: 7, PrevKV: true}},
		{"put ignoring value and lease", clientv3.OpPut("k", "", clientv3.WithIgnoreValue(), clientv3.WithIgnoreLease()),
			etcd.KVOp{Type: etcd.KVPut, Key: "k", IgnoreValue: true, IgnoreLease: true}},
		{"get first create of a prefix", clientv3.OpGet("p/", append(clientv3.WithFirstCreate(), clientv3.WithPrefix())...),
			etcd.KVOp{Type: etcd.KVRange, Key: "p/", End: "p0", Limit: 1, SortTarget: etcd.SortByCreate, SortOrder: etcd.SortAscend}},
		{"get at a revision, serializable, keys only", clientv3.OpGet("k", clientv3.WithRev(3), clientv3.WithSerializable(),
			clientv3.WithKeysOnly(), clientv3.WithMaxCreateRev(9)),
			etcd.KVOp{Type: etcd.KVRange, Key: "k", Rev: 3, Serializable: true, KeysOnly: true, MaxCreateRev: 9}},
		{"delete a range with prevKV", clientv3.OpDelete("a", clientv3.WithRange("c"), clientv3.WithPrevKV()),
			etcd.KVOp{Type: etcd.KVDelete, Key: "a", End: "c", PrevKV: true}},
		{"txn", clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision("k"), "=", 0),
			clientv3.Compare(clientv3.Value("v"), "!=", "x"), clientv3.Compare(clientv3.LeaseValue("k"), ">", 2)},
			[]clientv3.Op{clientv3.OpPut("k", "1")}, []clientv3.Op{clientv3.OpGet("k")}),
			etcd.KVOp{Type: etcd.KVTxn, If: []etcd.KVCompare{{Key: "k", Target: etcd.TargetCreate, Result: "="},
				{Key: "v", Target: etcd.TargetValue, Result: "!=", Value: "x"}, {Key: "k", Target: etcd.TargetLease, Result: ">", Int: 2}},
				Then: []etcd.KVOp{{Type: etcd.KVPut, Key: "k", Value: "1"}}, Else: []etcd.KVOp{{Type: etcd.KVRange, Key: "k"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := KVOpOf(c.op)
			require.NoError(t, err)
			assert.Equal(t, c.want, got)
		})
	}
}

// userWorld runs body as client c1's process over a 3-member cluster led by
// etcd1, with calls bounded by 2 s.
func userWorld(t *testing.T, body func(p *sim.Proc, c *etcd.Cluster, cli *Client)) *sim.World {
	t.Helper()
	w, c := world(t)
	w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
		p.Sleep(2 * time.Second)
		body(p, c, New(c, p, 2*time.Second))
	})})
	return w
}

// TestTheSimulatedClientV3sRefusals: a call past request-timeout is
// context.DeadlineExceeded; a cancelled context fails at once; KeepAlive and
// a call from a goroutine other than the client's process are refused with
// ErrNotInSimulator and reported.
func TestTheSimulatedClientV3sRefusals(t *testing.T) {
	var reported []string
	errs := map[string]error{}
	w := userWorld(t, func(p *sim.Proc, c *etcd.Cluster, cli *Client) {
		cli.OnMisuse = func(call string, _ error) { reported = append(reported, call) }
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, errs["cancelled"] = cli.Put(ctx, "k", "v")
		_, errs["keep-alive"] = cli.KeepAlive(context.Background(), 1)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // a goroutine of the lock's own: refused without touching the simulator
			defer wg.Done()
			_, errs["goroutine"] = cli.Get(context.Background(), "k")
		}()
		wg.Wait()
		for _, n := range c.Nodes() {
			p.World().Network().Block(p.Node(), n)
		}
		start := p.Mono()
		_, errs["partitioned"] = cli.Put(context.Background(), "k", "v")
		assert.InDelta(t, 2*time.Second, p.Mono()-start, float64(100*time.Millisecond))
	})
	w.Run(30 * time.Second)
	assert.ErrorIs(t, errs["cancelled"], context.Canceled)
	assert.ErrorIs(t, errs["keep-alive"], ErrNotInSimulator)
	assert.ErrorIs(t, errs["goroutine"], ErrNotInSimulator)
	assert.True(t, errors.Is(errs["partitioned"], context.DeadlineExceeded), "%v", errs["partitioned"])
	assert.Equal(t, []string{"KeepAlive", "Get"}, reported)
}

// TestATxnOutOfOrderPanicsAsClientV3s pins the panics of If, Then and Else
// called out of order to clientv3's own texts.
func TestATxnOutOfOrderPanicsAsClientV3s(t *testing.T) {
	cases := []struct {
		name  string
		steps func(clientv3.Txn)
		panic string
	}{
		{"If twice", func(x clientv3.Txn) { x.If().If() }, "cannot call If twice!"},
		{"If after Then", func(x clientv3.Txn) { x.Then().If() }, "cannot call If after Then!"},
		{"If after Else", func(x clientv3.Txn) { x.Else().If() }, "cannot call If after Else!"},
		{"Then twice", func(x clientv3.Txn) { x.If().Then().Then() }, "cannot call Then twice!"},
		{"Then after Else", func(x clientv3.Txn) { x.Else().Then() }, "cannot call Then after Else!"},
		{"Else twice", func(x clientv3.Txn) { x.Then().Else().Else() }, "cannot call Else twice!"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.PanicsWithValue(t, c.panic, func() { c.steps(&userTxn{}) })
		})
	}
	assert.NotPanics(t, func() { (&userTxn{}).If().Then().Else() }, "in order")
}

// world is a world with a 3-member cluster led by etcd1 (opts: option name,
// value, ...), closed at the end of t.
func world(t *testing.T, opts ...string) (*sim.World, *etcd.Cluster) {
	t.Helper()
	o := etcd.DefaultOptions()
	o.InitialLeader = "etcd1"
	for i := 0; i+1 < len(opts); i += 2 {
		require.NoError(t, o.Set(opts[i], opts[i+1]))
	}
	w := sim.NewWorld(sim.Config{Seed: 1, Link: sim.Link{LatencyMin: time.Millisecond, LatencyMax: 2 * time.Millisecond}})
	c, err := etcd.NewCluster(w, o)
	require.NoError(t, err)
	t.Cleanup(w.Close)
	return w, c
}

// TestDoAnswersAsEachCallAndCtxIsNeverDone: Do runs an op as the call of
// its kind (the differential test against a real etcd compares the
// answers), panics on an op of no kind as clientv3 does, and Ctx is a
// context that is never cancelled.
func TestDoAnswersAsEachCallAndCtxIsNeverDone(t *testing.T) {
	var put, get, txn clientv3.OpResponse
	var errs [3]error
	var panicked any
	w := userWorld(t, func(p *sim.Proc, c *etcd.Cluster, cli *Client) {
		ctx := cli.Ctx()
		require.NoError(t, ctx.Err())
		put, errs[0] = cli.Do(ctx, clientv3.OpPut("k", "v"))
		get, errs[1] = cli.Do(ctx, clientv3.OpGet("k"))
		txn, errs[2] = cli.Do(ctx, clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision("k"), "=", 0)},
			nil, []clientv3.Op{clientv3.OpDelete("k")}))
		func() {
			defer func() { panicked = recover() }()
			_, _ = cli.Do(ctx, clientv3.Op{})
		}()
	})
	w.Run(30 * time.Second)
	require.Equal(t, [3]error{}, errs)
	require.NotNil(t, put.Put())
	require.NotNil(t, get.Get())
	require.Len(t, get.Get().Kvs, 1)
	assert.Equal(t, "v", string(get.Get().Kvs[0].Value))
	require.NotNil(t, txn.Txn())
	assert.False(t, txn.Txn().Succeeded)
	assert.Equal(t, "Unknown op", panicked)
}

package live

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/locklab/locklab/backends/etcd"
	"github.com/locklab/locklab/backends/etcd/etcdclient"
	"github.com/locklab/locklab/sim"
)

// kvAPI is the part of *clientv3.Client the script calls (useretcd.Etcd's).
type kvAPI interface {
	Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error)
	Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error)
	Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error)
	Txn(ctx context.Context) clientv3.Txn
	Grant(ctx context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error)
	Revoke(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseRevokeResponse, error)
	TimeToLive(ctx context.Context, id clientv3.LeaseID, opts ...clientv3.LeaseOption) (*clientv3.LeaseTimeToLiveResponse, error)
	KeepAliveOnce(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseKeepAliveResponse, error)
	Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error)
}

var (
	_ kvAPI = (*clientv3.Client)(nil)
	_ kvAPI = (*etcdclient.Client)(nil)
)

// transcript writes what each call answered, lease ids replaced by the order
// in which they were granted (real etcd draws them; the simulator numbers
// them by log index) and the remaining TTL by whether it is within a second
// of the granted one; member and cluster ids and raft terms are left out.
type transcript struct {
	lines  []string
	leases map[int64]string
}

func (t *transcript) lease(id clientv3.LeaseID) string {
	if s, ok := t.leases[int64(id)]; ok {
		return s
	}
	if id == 0 {
		return "0"
	}
	return "unknown-lease"
}

func kvText(kv *mvccpb.KeyValue, t *transcript) string {
	if kv == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s=%q(c%d m%d v%d l%s)", kv.Key, kv.Value, kv.CreateRevision, kv.ModRevision, kv.Version,
		t.lease(clientv3.LeaseID(kv.Lease)))
}

func kvsText(kvs []*mvccpb.KeyValue, t *transcript) string {
	var out []string
	for _, kv := range kvs {
		out = append(out, kvText(kv, t))
	}
	return "[" + strings.Join(out, " ") + "]"
}

func (t *transcript) add(step string, resp any, err error) {
	if err != nil {
		t.lines = append(t.lines, fmt.Sprintf("%s: error %v", step, err))
		return
	}
	var s string
	switch r := resp.(type) {
	case *clientv3.PutResponse:
		s = fmt.Sprintf("rev %d prev %s", r.Header.Revision, kvText(r.PrevKv, t))
	case *clientv3.GetResponse:
		s = fmt.Sprintf("rev %d count %d more %v %s", r.Header.Revision, r.Count, r.More, kvsText(r.Kvs, t))
	case *clientv3.DeleteResponse:
		s = fmt.Sprintf("rev %d deleted %d prev %s", r.Header.Revision, r.Deleted, kvsText(r.PrevKvs, t))
	case *clientv3.TxnResponse:
		s = fmt.Sprintf("rev %d succeeded %v", r.Header.Revision, r.Succeeded)
		for _, op := range r.Responses {
			switch x := op.Response.(type) {
			case *etcdserverpb.ResponseOp_ResponseRange:
				s += fmt.Sprintf(" | get count %d %s", x.ResponseRange.Count, kvsText(x.ResponseRange.Kvs, t))
			case *etcdserverpb.ResponseOp_ResponsePut:
				s += fmt.Sprintf(" | put prev %s", kvText(x.ResponsePut.PrevKv, t))
			case *etcdserverpb.ResponseOp_ResponseDeleteRange:
				s += fmt.Sprintf(" | delete %d prev %s", x.ResponseDeleteRange.Deleted, kvsText(x.ResponseDeleteRange.PrevKvs, t))
			}
		}
	case *clientv3.LeaseGrantResponse:
		name := fmt.Sprintf("L%d", len(t.leases)+1)
		t.leases[int64(r.ID)] = name
		s = fmt.Sprintf("%s ttl %d", name, r.TTL)
	case *clientv3.LeaseRevokeResponse:
		s = fmt.Sprintf("rev %d", r.Header.Revision)
	case *clientv3.LeaseKeepAliveResponse:
		s = fmt.Sprintf("%s ttl %d", t.lease(r.ID), r.TTL)
	case *clientv3.LeaseTimeToLiveResponse:
		left := "expired"
		if r.TTL >= 0 {
			left = fmt.Sprintf("within a second of granted: %v", r.TTL >= r.GrantedTTL-1 && r.TTL <= r.GrantedTTL)
		}
		var keys []string
		for _, k := range r.Keys {
			keys = append(keys, string(k))
		}
		s = fmt.Sprintf("%s granted %d %s keys %v", t.lease(r.ID), r.GrantedTTL, left, keys)
	}
	t.lines = append(t.lines, step+": "+s)
}

// script makes the calls of the differential test and returns what they
// answered: puts, gets with revisions, ranges, limits and sorts, deletes
// with prevKV, txns with compares on create/mod revision, version and value
// (over a key and a prefix), leases granted, renewed, asked after, revoked,
// and the errors etcd returns for a missing lease, a future revision, a key
// not found, a duplicate key in a txn.
func script(cli kvAPI) []string {
	ctx := context.Background()
	t := &transcript{leases: map[int64]string{}}
	put := func(step, k, v string, opts ...clientv3.OpOption) {
		r, err := cli.Put(ctx, k, v, opts...)
		t.add(step, r, err)
	}
	get := func(step, k string, opts ...clientv3.OpOption) {
		r, err := cli.Get(ctx, k, opts...)
		t.add(step, r, err)
	}
	put("put a", "a", "1")
	put("put a prev", "a", "2", clientv3.WithPrevKV())
	get("get a", "a")
	put("put b/1", "b/1", "x")
	put("put b/3", "b/3", "z")
	put("put b/2", "b/2", "y")
	get("get b/ limit 2", "b/", clientv3.WithPrefix(), clientv3.WithLimit(2))
	get("get b/ by create descending", "b/", clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByCreateRevision, clientv3.SortDescend))
	get("get b/ first create", "b/", append(clientv3.WithFirstCreate(), clientv3.WithPrefix())...)
	get("get b/ last create max 4", "b/", append(clientv3.WithLastCreate(), clientv3.WithPrefix(), clientv3.WithMaxCreateRev(4))...)
	get("get b/ keys only", "b/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	get("get b/ count only", "b/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	get("get range b/1..b/3", "b/1", clientv3.WithRange("b/3"))
	get("get from b/2", "b/2", clientv3.WithFromKey())
	get("get a at rev 2", "a", clientv3.WithRev(2))
	get("get a at a future rev", "a", clientv3.WithRev(1000))
	get("get a serializable", "a", clientv3.WithSerializable())
	g, err := cli.Grant(ctx, 10)
	t.add("grant 10", g, err)
	if err != nil {
		return t.lines
	}
	put("put l under the lease", "l", "me", clientv3.WithLease(g.ID))
	txn := func(step string, cmps []clientv3.Cmp, then, els []clientv3.Op) {
		r, err := cli.Txn(ctx).If(cmps...).Then(then...).Else(els...).Commit()
		t.add(step, r, err)
	}
	txn("txn create(l)==0", []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision("l"), "=", 0)},
		[]clientv3.Op{clientv3.OpPut("l", "other", clientv3.WithLease(g.ID))}, []clientv3.Op{clientv3.OpGet("l")})
	txn("txn create(m)==0", []clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision("m"), "=", 0)},
		[]clientv3.Op{clientv3.OpPut("m", "mine", clientv3.WithLease(g.ID)), clientv3.OpGet("m")}, nil)
	txn("txn value(a)==2 and version(b/)>0", []clientv3.Cmp{clientv3.Compare(clientv3.Value("a"), "=", "2"),
		clientv3.Compare(clientv3.Version("b/").WithPrefix(), ">", 0)},
		[]clientv3.Op{clientv3.OpDelete("b/", clientv3.WithPrefix(), clientv3.WithPrevKV())}, nil)
	txn("txn value(missing)!=x", []clientv3.Cmp{clientv3.Compare(clientv3.Value("missing"), "!=", "x")},
		nil, []clientv3.Op{clientv3.OpGet("missing")})
	txn("txn mod(m) < 2", []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision("m"), "<", 2)}, nil,
		[]clientv3.Op{clientv3.OpDelete("m")})
	txn("txn duplicate put", nil, []clientv3.Op{clientv3.OpPut("d", "1"), clientv3.OpPut("d", "2")}, nil)
	ttl, err := cli.TimeToLive(ctx, g.ID, clientv3.WithAttachedKeys())
	t.add("time to live", ttl, err)
	ka, err := cli.KeepAliveOnce(ctx, g.ID)
	t.add("keep alive once", ka, err)
	rv, err := cli.Revoke(ctx, g.ID)
	t.add("revoke", rv, err)
	get("get l after revoke", "l")
	ka, err = cli.KeepAliveOnce(ctx, g.ID)
	t.add("keep alive once after revoke", ka, err)
	ttl, err = cli.TimeToLive(ctx, g.ID)
	t.add("time to live after revoke", ttl, err)
	rv, err = cli.Revoke(ctx, g.ID)
	t.add("revoke again", rv, err)
	put("put under the revoked lease", "x", "1", clientv3.WithLease(g.ID))
	put("put ignore-value on a missing key", "nothing", "", clientv3.WithIgnoreValue())
	put("put ignore-value", "a", "", clientv3.WithIgnoreValue(), clientv3.WithPrevKV())
	do := func(step string, op clientv3.Op) {
		r, err := cli.Do(ctx, op)
		switch {
		case err != nil:
			t.add(step, nil, err)
		case r.Get() != nil:
			t.add(step, r.Get(), nil)
		case r.Put() != nil:
			t.add(step, r.Put(), nil)
		case r.Del() != nil:
			t.add(step, r.Del(), nil)
		default:
			t.add(step, r.Txn(), nil)
		}
	}
	do("do put e", clientv3.OpPut("e", "1", clientv3.WithPrevKV()))
	do("do get e", clientv3.OpGet("e"))
	do("do txn create(e)==0", clientv3.OpTxn([]clientv3.Cmp{clientv3.Compare(clientv3.CreateRevision("e"), "=", 0)},
		[]clientv3.Op{clientv3.OpPut("e", "2")}, []clientv3.Op{clientv3.OpGet("e")}))
	do("do delete e", clientv3.OpDelete("e", clientv3.WithPrevKV()))
	do("do get at a future rev", clientv3.OpGet("e", clientv3.WithRev(1000)))
	dr, err := cli.Delete(ctx, "a", clientv3.WithPrevKV())
	t.add("delete a", dr, err)
	dr, err = cli.Delete(ctx, "a")
	t.add("delete a again", dr, err)
	get("get everything", "", clientv3.WithPrefix())
	return t.lines
}

// simulatedScript runs the script on the simulated clientv3 against a
// simulated 3-member cluster.
func simulatedScript(t *testing.T) []string {
	o := etcd.DefaultOptions()
	o.InitialLeader = "etcd1"
	w := sim.NewWorld(sim.Config{Seed: 1, Link: sim.Link{LatencyMin: time.Millisecond, LatencyMax: 2 * time.Millisecond}})
	t.Cleanup(w.Close)
	c, err := etcd.NewCluster(w, o)
	require.NoError(t, err)
	var out []string
	w.AddNode("c1", sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
		p.Sleep(2 * time.Second) // the first leader
		out = script(etcdclient.New(c, p, 5*time.Second))
	})})
	w.Run(time.Minute)
	return out
}

// TestTheSimulatedClientV3AnswersAsARealEtcd: the simulated clientv3 a
// user's lock gets (etcdclient.Client) answers the script's calls as
// *clientv3.Client does against a real etcd: the same revisions, keys,
// values, counts, compares' outcomes and errors.
func TestTheSimulatedClientV3AnswersAsARealEtcd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a real etcd cluster (-short)")
	}
	if _, err := Binary(); err != nil {
		t.Skipf("needs etcd-server: %v", err)
	}
	sim := simulatedScript(t)
	require.NotEmpty(t, sim)

	o := etcd.DefaultOptions()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Start(ctx, o, t.TempDir(), 30*time.Second)
	require.NoError(t, err)
	defer c.Close()
	cli, err := clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer cli.Close()
	real := script(cli)
	t.Logf("real etcd:\n%s", strings.Join(real, "\n"))
	assert.Equal(t, strings.Join(real, "\n"), strings.Join(sim, "\n"))
}

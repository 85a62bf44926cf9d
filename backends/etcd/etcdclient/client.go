// Package etcdclient is clientv3 in the simulator: the client a user's lock
// written against the clientv3 API (package userlock's Etcd) is given in a
// simulated run, over the simulated etcd cluster of package etcd. It is
// apart from package etcd so that the simulated cluster, and every program
// that runs it without a user's etcd lock, builds without clientv3 and
// gRPC.
package etcdclient

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"time"

	"go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/backends/etcd"
	"github.com/locklab/locklab/sim"
)

// Client is clientv3 in the simulator, for a lock a user wrote against
// the clientv3 API (package userlock): its methods are *clientv3.Client's,
// with the same arguments, replies and errors, so the user's code runs
// unchanged against it and, live, against the real client. It is the client
// of one simulated client process and speaks the members' generic KV API
// (KVRequest, LeaseTTLRequest) and their lease messages.
//
// Like clientv3, it finds the leader (following NotLeader hints, rotating on
// a member that does not answer within attempt-timeout) and retries until
// the call's deadline: request-timeout on the client's monotonic clock, past
// which the call returns context.DeadlineExceeded (its outcome unknown: a
// write may have applied). The context's own deadline is on the machine's
// clock and is not used (it would make a run depend on the machine); a
// context already cancelled fails the call with context.Canceled.
//
// What the simulator cannot offer is refused, never faked: KeepAlive and
// Watch return channels that clientv3 feeds from goroutines of its own, and a
// simulated client cannot block on a Go channel (it is a coroutine the kernel
// resumes). KeepAlive returns an error naming the alternative
// (KeepAliveOnce from the lock's own calls); Watch returns a closed channel
// whose only response is cancelled (poll with Get and WithRev instead). Both
// are reported to the run's conduct record (OnMisuse). A nested Txn is
// refused with an error. A call from a goroutine other than the client's
// process does not touch the simulator: it returns an error and is reported.
type Client struct {
	kv      *etcd.KVClient
	p       *sim.Proc
	owner   *sim.Owner[struct{}] // the process's goroutine (a stray call is reported at once, by OnMisuse)
	timeout time.Duration
	// OnMisuse, when set, is told of every call the client refused because
	// the lock used it in a way the simulator cannot run (call names it).
	OnMisuse func(call string, err error)
}

// New returns the clientv3-shaped client of process p, whose calls
// are bounded by timeout. Call it from p.
func New(c *etcd.Cluster, p *sim.Proc, timeout time.Duration) *Client {
	return &Client{kv: c.NewKV(p), p: p, owner: sim.NewOwner[struct{}](), timeout: timeout}
}

// ErrNotInSimulator is wrapped by the errors of calls the simulated client
// refuses because the simulator cannot run them.
var ErrNotInSimulator = errors.New("not offered by the simulated etcd client")

// enter checks that the call comes from the client's process and that ctx is
// not cancelled.
func (c *Client) enter(ctx context.Context, call string) error {
	if !c.owner.Mine() || c.p.World().Running() != c.p {
		err := fmt.Errorf("etcd: %s called from a goroutine other than client %s's process (a goroutine the lock "+
			"started?): in the simulator a client's calls must come from its own process: %w", call, c.p.Node().Name(),
			ErrNotInSimulator)
		c.misuse(call, err)
		return err
	}
	if ctx != nil && errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	return nil
}

func (c *Client) misuse(call string, err error) {
	if c.OnMisuse != nil {
		c.OnMisuse(call, err)
	}
}

// call sends req until a member (the leader, but for a serializable read)
// answers it, or the call's deadline passes.
func (c *Client) call(req any) (any, error) {
	return c.kv.CallLeader(c.p, req, c.p.Mono()+c.timeout)
}

// rpcErrors are the errors clientv3 returns for etcd's refusals, by text.
var rpcErrors = map[string]error{
	etcd.ErrLeaseNotFound:     rpctypes.ErrLeaseNotFound,
	etcd.ErrTextKeyNotFound:   rpctypes.ErrKeyNotFound,
	etcd.ErrTextFutureRev:     rpctypes.ErrFutureRev,
	etcd.ErrTextDuplicateKey:  rpctypes.ErrDuplicateKey,
	etcd.ErrTextEmptyKey:      rpctypes.ErrEmptyKey,
	etcd.ErrTextValueProvided: rpctypes.ErrValueProvided,
	etcd.ErrTextLeaseProvided: rpctypes.ErrLeaseProvided,
	etcd.ErrTextTooManyOps:    rpctypes.ErrTooManyOps,
}

func refusal(text string) error {
	if err, ok := rpcErrors[text]; ok {
		return err
	}
	return errors.New(text)
}

// do runs one KV op through the cluster.
func (c *Client) do(ctx context.Context, call string, op clientv3.Op) (etcd.KVResponse, error) {
	if err := c.enter(ctx, call); err != nil {
		return etcd.KVResponse{}, err
	}
	o, err := KVOpOf(op)
	if err != nil {
		return etcd.KVResponse{}, err
	}
	body, err := c.call(etcd.KVRequest{Op: o})
	if err != nil {
		return etcd.KVResponse{}, err
	}
	r := body.(etcd.KVResponse)
	if r.Result.Err != "" {
		return etcd.KVResponse{}, refusal(r.Result.Err)
	}
	return r, nil
}

// Put puts a key, as clientv3's KV.Put (WithLease, WithPrevKV,
// WithIgnoreValue, WithIgnoreLease).
func (c *Client) Put(ctx context.Context, key, val string, opts ...clientv3.OpOption) (*clientv3.PutResponse, error) {
	r, err := c.do(ctx, "Put", clientv3.OpPut(key, val, opts...))
	if err != nil {
		return nil, err
	}
	return (*clientv3.PutResponse)(putResponse(r.Result, header(r))), nil
}

// Get reads a key or a range, as clientv3's KV.Get (WithPrefix, WithRange,
// WithFromKey, WithRev, WithLimit, WithSort and WithFirstCreate & co.,
// WithKeysOnly, WithCountOnly, WithSerializable, the min/max revisions).
func (c *Client) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	r, err := c.do(ctx, "Get", clientv3.OpGet(key, opts...))
	if err != nil {
		return nil, err
	}
	return (*clientv3.GetResponse)(rangeResponse(r.Result, header(r))), nil
}

// Delete deletes a key or a range, as clientv3's KV.Delete (WithPrefix,
// WithRange, WithFromKey, WithPrevKV).
func (c *Client) Delete(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.DeleteResponse, error) {
	r, err := c.do(ctx, "Delete", clientv3.OpDelete(key, opts...))
	if err != nil {
		return nil, err
	}
	return (*clientv3.DeleteResponse)(deleteResponse(r.Result, header(r))), nil
}

// Txn starts a transaction, as clientv3's KV.Txn: If with compares on
// CreateRevision, ModRevision, Version, Value and LeaseValue (over a key or,
// WithRange/WithPrefix, a range), Then and Else with Put, Get and Delete.
func (c *Client) Txn(ctx context.Context) clientv3.Txn { return &userTxn{c: c, ctx: ctx} }

// userTxn is a Txn of the simulated client; like clientv3's, it panics when
// If, Then and Else come out of order.
type userTxn struct {
	c         *Client
	ctx       context.Context
	cmps      []clientv3.Cmp
	then, els []clientv3.Op
	called    [len(txnSteps)]bool // If, Then, Else
}

// txnSteps are the steps of a Txn, in the order they may come.
var txnSteps = [...]string{"If", "Then", "Else"}

// step marks step i called, panicking with clientv3's text when it or a
// later step was called already.
func (t *userTxn) step(i int) {
	for j := i; j < len(txnSteps); j++ {
		switch {
		case t.called[j] && j == i:
			panic("cannot call " + txnSteps[i] + " twice!")
		case t.called[j]:
			panic("cannot call " + txnSteps[i] + " after " + txnSteps[j] + "!")
		}
	}
	t.called[i] = true
}

func (t *userTxn) If(cs ...clientv3.Cmp) clientv3.Txn {
	t.step(0)
	t.cmps = append(t.cmps, cs...)
	return t
}

func (t *userTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	t.step(1)
	t.then = append(t.then, ops...)
	return t
}

func (t *userTxn) Else(ops ...clientv3.Op) clientv3.Txn {
	t.step(2)
	t.els = append(t.els, ops...)
	return t
}

func (t *userTxn) Commit() (*clientv3.TxnResponse, error) { return t.commit("Txn") }

// commit runs the transaction as the call named call (Txn, or Do of a Txn op).
func (t *userTxn) commit(call string) (*clientv3.TxnResponse, error) {
	r, err := t.c.do(t.ctx, call, clientv3.OpTxn(t.cmps, t.then, t.els))
	if err != nil {
		return nil, err
	}
	h := header(r)
	resp := &clientv3.TxnResponse{Header: h, Succeeded: r.Result.Succeeded}
	ops := t.els
	if r.Result.Succeeded {
		ops = t.then
	}
	for i, res := range r.Result.Responses {
		inner := &etcdserverpb.ResponseHeader{Revision: res.Revision}
		switch {
		case ops[i].IsGet():
			resp.Responses = append(resp.Responses, &etcdserverpb.ResponseOp{
				Response: &etcdserverpb.ResponseOp_ResponseRange{ResponseRange: rangeResponse(res, inner)}})
		case ops[i].IsPut():
			resp.Responses = append(resp.Responses, &etcdserverpb.ResponseOp{
				Response: &etcdserverpb.ResponseOp_ResponsePut{ResponsePut: putResponse(res, inner)}})
		case ops[i].IsDelete():
			resp.Responses = append(resp.Responses, &etcdserverpb.ResponseOp{
				Response: &etcdserverpb.ResponseOp_ResponseDeleteRange{ResponseDeleteRange: deleteResponse(res, inner)}})
		}
	}
	return resp, nil
}

// Do runs op, as clientv3's KV.Do: an op made by clientv3.OpGet, OpPut,
// OpDelete or OpTxn, answered as Get, Put, Delete or Txn answer it (the
// OpResponse's Get, Put, Del or Txn). Like clientv3's, it panics on an op
// made by none of them.
func (c *Client) Do(ctx context.Context, op clientv3.Op) (clientv3.OpResponse, error) {
	switch {
	case op.IsTxn():
		cmps, thn, els := op.Txn()
		r, err := (&userTxn{c: c, ctx: ctx, cmps: cmps, then: thn, els: els}).commit("Do")
		if err != nil {
			return clientv3.OpResponse{}, err
		}
		return r.OpResponse(), nil
	case !op.IsGet() && !op.IsPut() && !op.IsDelete():
		panic("Unknown op")
	}
	r, err := c.do(ctx, "Do", op)
	switch {
	case err != nil:
		return clientv3.OpResponse{}, err
	case op.IsGet():
		return (*clientv3.GetResponse)(rangeResponse(r.Result, header(r))).OpResponse(), nil
	case op.IsPut():
		return (*clientv3.PutResponse)(putResponse(r.Result, header(r))).OpResponse(), nil
	}
	return (*clientv3.DeleteResponse)(deleteResponse(r.Result, header(r))).OpResponse(), nil
}

// Ctx is the client's context, as clientv3's Client.Ctx (the context
// concurrency.NewSession derives its own from, which a lock copied from it
// uses): in the simulator a context that is never cancelled, the client
// ending with its run.
func (c *Client) Ctx() context.Context { return context.Background() }

// Grant creates a lease of ttl seconds (raised to the server's minimum, 1.5
// election timeouts rounded up to seconds, as etcd does).
func (c *Client) Grant(ctx context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error) {
	if err := c.enter(ctx, "Grant"); err != nil {
		return nil, err
	}
	if ttl > 9000000000 {
		return nil, rpctypes.ErrLeaseTTLTooLarge
	}
	r, h, err := c.leaseCall(etcd.Command{Type: etcd.CmdLeaseGrant, TTL: max(time.Duration(ttl)*time.Second, c.kv.MinTTL())})
	if err != nil {
		return nil, err
	}
	return &clientv3.LeaseGrantResponse{ResponseHeader: h, ID: clientv3.LeaseID(r.Result.Lease),
		TTL: int64(r.Result.TTL / time.Second)}, nil
}

// leaseCall sends a lease command (grant, revoke) through the cluster: the
// result and its response header, or etcd's refusal.
func (c *Client) leaseCall(cmd etcd.Command) (etcd.Response, *etcdserverpb.ResponseHeader, error) {
	body, err := c.call(etcd.Request{Cmd: cmd})
	if err != nil {
		return etcd.Response{}, nil, err
	}
	r := body.(etcd.Response)
	if r.Result.Err != "" {
		return etcd.Response{}, nil, refusal(r.Result.Err)
	}
	return r, &etcdserverpb.ResponseHeader{MemberId: r.Member, Revision: r.Result.Revision}, nil
}

// Revoke revokes a lease, deleting its keys at one revision.
func (c *Client) Revoke(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseRevokeResponse, error) {
	if err := c.enter(ctx, "Revoke"); err != nil {
		return nil, err
	}
	_, h, err := c.leaseCall(etcd.Command{Type: etcd.CmdLeaseRevoke, Lease: int64(id)})
	if err != nil {
		return nil, err
	}
	return &clientv3.LeaseRevokeResponse{Header: h}, nil
}

// TimeToLive asks the leader how long a lease has left (whole seconds,
// rounded down; TTL -1 when the lease is gone), with its keys when given
// clientv3.WithAttachedKeys.
func (c *Client) TimeToLive(ctx context.Context, id clientv3.LeaseID, opts ...clientv3.LeaseOption) (*clientv3.LeaseTimeToLiveResponse, error) {
	if err := c.enter(ctx, "TimeToLive"); err != nil {
		return nil, err
	}
	var lo clientv3.LeaseOp
	for _, o := range opts {
		o(&lo)
	}
	body, err := c.call(etcd.LeaseTTLRequest{Lease: int64(id), Keys: reflect.ValueOf(lo).FieldByName("attachedKeys").Bool()})
	if err != nil {
		return nil, err
	}
	r := body.(etcd.LeaseTTLResponse)
	resp := &clientv3.LeaseTimeToLiveResponse{ResponseHeader: &etcdserverpb.ResponseHeader{MemberId: r.Member,
		Revision: r.Revision, RaftTerm: r.Term}, ID: id, TTL: -1}
	if r.Found {
		resp.TTL, resp.GrantedTTL = int64(r.Remaining/time.Second), int64(r.Granted/time.Second)
		for _, k := range r.Keys {
			resp.Keys = append(resp.Keys, []byte(k))
		}
	}
	return resp, nil
}

// KeepAliveOnce renews a lease at the leader; rpctypes.ErrLeaseNotFound when
// it is gone (expired or revoked).
func (c *Client) KeepAliveOnce(ctx context.Context, id clientv3.LeaseID) (*clientv3.LeaseKeepAliveResponse, error) {
	if err := c.enter(ctx, "KeepAliveOnce"); err != nil {
		return nil, err
	}
	body, err := c.call(etcd.KeepAlive{Lease: int64(id)})
	if err != nil {
		return nil, err
	}
	r := body.(etcd.KeepAliveResp)
	if r.TTL <= 0 {
		return nil, rpctypes.ErrLeaseNotFound
	}
	return &clientv3.LeaseKeepAliveResponse{ResponseHeader: &etcdserverpb.ResponseHeader{}, ID: id,
		TTL: int64(r.TTL / time.Second)}, nil
}

// KeepAlive is not offered in the simulator: clientv3 feeds its channel from
// a goroutine of its own, and a simulated client cannot block on a Go
// channel. It returns an error wrapping ErrNotInSimulator (and reports the
// call): renew with KeepAliveOnce from the lock's own calls instead.
func (c *Client) KeepAlive(ctx context.Context, id clientv3.LeaseID) (<-chan *clientv3.LeaseKeepAliveResponse, error) {
	if err := c.enter(ctx, "KeepAlive"); err != nil {
		return nil, err
	}
	err := fmt.Errorf("etcd: etcd.KeepAlive(%x): %w: its channel is fed by a goroutine of the client library and a "+
		"simulated client cannot block on a Go channel; renew with KeepAliveOnce from the lock's own calls", int64(id),
		ErrNotInSimulator)
	c.misuse("KeepAlive", err)
	return nil, err
}

// Watch is not offered in the simulator, for the reason KeepAlive is not: it
// returns a closed channel whose one response is cancelled (so a range over
// it ends at once), and reports the call. Wait for a change by polling with
// Get (WithRev, WithMinModRev) and the Env's Sleep instead.
func (c *Client) Watch(ctx context.Context, key string, opts ...clientv3.OpOption) clientv3.WatchChan {
	ch := make(chan clientv3.WatchResponse, 1)
	if err := c.enter(ctx, "Watch"); err == nil {
		c.misuse("Watch", fmt.Errorf("etcd: Watch(%q): %w: its channel is fed by a goroutine of the client library "+
			"and a simulated client cannot block on a Go channel; poll with Get and WithRev instead", key,
			ErrNotInSimulator))
	}
	ch <- clientv3.WatchResponse{Canceled: true}
	close(ch)
	return ch
}

// header is the response header of r.
func header(r etcd.KVResponse) *etcdserverpb.ResponseHeader {
	return &etcdserverpb.ResponseHeader{MemberId: r.Member, Revision: r.Result.Revision, RaftTerm: r.Term}
}

func keyValue(kv etcd.KV) *mvccpb.KeyValue {
	out := &mvccpb.KeyValue{Key: []byte(kv.Key), CreateRevision: kv.CreateRev, ModRevision: kv.ModRev,
		Version: kv.Version, Lease: kv.Lease}
	if kv.Value != "" {
		out.Value = []byte(kv.Value)
	}
	return out
}

func keyValues(kvs []etcd.KV) []*mvccpb.KeyValue {
	var out []*mvccpb.KeyValue
	for _, kv := range kvs {
		out = append(out, keyValue(kv))
	}
	return out
}

func rangeResponse(r etcd.KVResult, h *etcdserverpb.ResponseHeader) *etcdserverpb.RangeResponse {
	return &etcdserverpb.RangeResponse{Header: h, Kvs: keyValues(r.Kvs), More: r.More, Count: r.Count}
}

func putResponse(r etcd.KVResult, h *etcdserverpb.ResponseHeader) *etcdserverpb.PutResponse {
	resp := &etcdserverpb.PutResponse{Header: h}
	if len(r.PrevKvs) > 0 {
		resp.PrevKv = keyValue(r.PrevKvs[0])
	}
	return resp
}

func deleteResponse(r etcd.KVResult, h *etcdserverpb.ResponseHeader) *etcdserverpb.DeleteRangeResponse {
	return &etcdserverpb.DeleteRangeResponse{Header: h, Deleted: r.Deleted, PrevKvs: keyValues(r.PrevKvs)}
}

// KVOpOf reads a clientv3.Op into the members' KVOp. clientv3 exports no
// accessor for an Op's lease, sort and ignore-value/ignore-lease flags; they
// are read from its fields by reflection (TestKVOpOfReadsEveryOption pins
// them, so a clientv3 that renames them fails the test, not a run).
func KVOpOf(op clientv3.Op) (etcd.KVOp, error) {
	o := etcd.KVOp{Key: string(op.KeyBytes()), End: string(op.RangeBytes()), PrevKV: op.IsPrevKV()}
	v := reflect.ValueOf(op)
	switch {
	case op.IsGet():
		o.Type, o.Rev, o.Limit = etcd.KVRange, op.Rev(), op.Limit()
		o.KeysOnly, o.CountOnly, o.Serializable = op.IsKeysOnly(), op.IsCountOnly(), op.IsSerializable()
		o.MinModRev, o.MaxModRev, o.MinCreateRev, o.MaxCreateRev = op.MinModRev(), op.MaxModRev(), op.MinCreateRev(), op.MaxCreateRev()
		if s := v.FieldByName("sort"); !s.IsNil() {
			o.SortTarget, o.SortOrder = etcd.SortTarget(s.Elem().Field(0).Int()), etcd.SortOrder(s.Elem().Field(1).Int())
		}
	case op.IsPut():
		o.Type, o.Value = etcd.KVPut, string(op.ValueBytes())
		o.Lease = v.FieldByName("leaseID").Int()
		o.IgnoreValue, o.IgnoreLease = v.FieldByName("ignoreValue").Bool(), v.FieldByName("ignoreLease").Bool()
	case op.IsDelete():
		o.Type = etcd.KVDelete
	case op.IsTxn():
		o.Type = etcd.KVTxn
		cmps, then, els := op.Txn()
		for _, c := range cmps {
			kc, err := kvCompareOf(c)
			if err != nil {
				return etcd.KVOp{}, err
			}
			o.If = append(o.If, kc)
		}
		for _, branch := range []struct {
			ops []clientv3.Op
			out *[]etcd.KVOp
		}{{then, &o.Then}, {els, &o.Else}} {
			for _, x := range branch.ops {
				k, err := KVOpOf(x)
				if err != nil {
					return etcd.KVOp{}, err
				}
				*branch.out = append(*branch.out, k)
			}
		}
	default:
		return etcd.KVOp{}, fmt.Errorf("etcd: an op that is neither get, put, delete nor txn: %w", ErrNotInSimulator)
	}
	return o, nil
}

// kvCompareOf reads a clientv3.Cmp.
func kvCompareOf(c clientv3.Cmp) (etcd.KVCompare, error) {
	pc := c.GetCompare()
	kc := etcd.KVCompare{Key: string(pc.GetKey()), End: string(pc.GetRangeEnd())}
	switch pc.GetResult() {
	case etcdserverpb.Compare_EQUAL:
		kc.Result = "="
	case etcdserverpb.Compare_NOT_EQUAL:
		kc.Result = "!="
	case etcdserverpb.Compare_LESS:
		kc.Result = "<"
	case etcdserverpb.Compare_GREATER:
		kc.Result = ">"
	default:
		return etcd.KVCompare{}, fmt.Errorf("etcd: compare result %v: %w", pc.GetResult(), ErrNotInSimulator)
	}
	switch pc.GetTarget() {
	case etcdserverpb.Compare_VERSION:
		kc.Target, kc.Int = etcd.TargetVersion, pc.GetVersion()
	case etcdserverpb.Compare_CREATE:
		kc.Target, kc.Int = etcd.TargetCreate, pc.GetCreateRevision()
	case etcdserverpb.Compare_MOD:
		kc.Target, kc.Int = etcd.TargetMod, pc.GetModRevision()
	case etcdserverpb.Compare_VALUE:
		kc.Target, kc.Value = etcd.TargetValue, string(pc.GetValue())
	case etcdserverpb.Compare_LEASE:
		kc.Target, kc.Int = etcd.TargetLease, pc.GetLease()
	default:
		return etcd.KVCompare{}, fmt.Errorf("etcd: compare target %v: %w", pc.GetTarget(), ErrNotInSimulator)
	}
	return kc, nil
}

package kubernetes

import (
	"errors"
	"fmt"

	"github.com/locklab/locklab/backends/etcd"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// APIServer is one kube-apiserver: a node that serves the Lease verbs by
// reading and writing the Lease's key in etcd over its own etcd client
// connection (clientv3 to the cluster's members). It keeps nothing of its
// own: a crash loses only the requests in flight. Each request is served by
// a process of its own, as the real server serves requests concurrently.
type APIServer struct {
	cluster *Cluster
	name    string
	node    *sim.Node
	kv      *etcd.KVClient
}

var _ sim.Handler = (*APIServer)(nil)

// Start forgets the etcd connection: the first request after a (re)start
// opens a new one.
func (a *APIServer) Start(n *sim.Node) {
	a.node = n
	a.kv = nil
}

// Receive serves a Lease request in a process of its own.
func (a *APIServer) Receive(n *sim.Node, m sim.Message) {
	req, ok := m.Body.(Request)
	if !ok {
		return
	}
	n.Spawn(a.name+"/"+string(req.Verb), func(p *sim.Proc) {
		resp := a.serve(p, req)
		resp.Server = a.name
		n.Reply(m, resp)
	})
}

// serve does what the API server's registry does for the verb: a create or
// update whose spec fails validation is refused (422 Invalid); a get reads
// the key (a quorum read); a create puts it only if absent (409
// AlreadyExists); an update is a compare-and-swap on the key's mod revision,
// the object's resourceVersion (409 Conflict when stale, 404 when absent).
func (a *APIServer) serve(p *sim.Proc, req Request) Response {
	if a.kv == nil {
		a.kv = a.cluster.etcd.NewKV(p)
	}
	if req.Verb == VerbCreate || req.Verb == VerbUpdate {
		if err := req.Record.validate(req.Name); err != nil {
			return Response{Status: StatusInvalid, Reason: err.Error()}
		}
	}
	key := leaseKey(req.Name)
	get := etcd.Op{Type: etcd.OpGet, Key: key}
	var txn etcd.Txn
	switch req.Verb {
	case VerbGet:
		res, err := a.kv.Get(p, etcd.Op{Key: key})
		if err != nil {
			return failed(err)
		}
		if len(res.Results) == 0 || len(res.Results[0].Kvs) == 0 {
			return Response{Status: StatusNotFound, Reason: "NotFound"}
		}
		return a.answer(p, req, StatusOK, res.Results[0].Kvs[0])
	case VerbCreate:
		txn = etcd.Txn{If: []etcd.Compare{{Key: key, Target: etcd.TargetCreate, Result: "=", Int: 0}},
			Then: []etcd.Op{{Type: etcd.OpPut, Key: key, Value: req.Record.encode()}, get}, Else: []etcd.Op{get}}
	case VerbUpdate:
		txn = etcd.Txn{If: []etcd.Compare{{Key: key, Target: etcd.TargetMod, Result: "=", Int: req.ResourceVersion}},
			Then: []etcd.Op{{Type: etcd.OpPut, Key: key, Value: req.Record.encode()}, get}, Else: []etcd.Op{get}}
	default:
		return Response{Status: StatusInternal, Reason: fmt.Sprintf("unknown verb %q", req.Verb)}
	}
	r, err := a.kv.Do(p, etcd.Command{Type: etcd.CmdTxn, Txn: txn}, false)
	if err != nil {
		return failed(err)
	}
	res := r.Result
	var cur []etcd.KV
	if n := len(res.Results); n > 0 {
		cur = res.Results[n-1].Kvs
	}
	switch {
	case res.Succeeded && len(cur) == 1:
		st := StatusOK
		if req.Verb == VerbCreate {
			st = StatusCreated
		}
		return a.answer(p, req, st, cur[0])
	case r.Retried:
		// An earlier attempt timed out: it may be the one that wrote, and
		// this one found its own write. Nobody can tell.
		return Response{Status: StatusTimeout, Reason: "Timeout: etcd request retried after a timeout, outcome unknown"}
	case len(cur) == 0:
		return Response{Status: StatusNotFound, Reason: "NotFound"}
	case req.Verb == VerbCreate:
		a.seen(p, cur[0])
		return Response{Status: StatusConflict, Reason: "AlreadyExists"}
	}
	a.seen(p, cur[0])
	return Response{Status: StatusConflict, Reason: fmt.Sprintf("Conflict: the object has been modified (resourceVersion %d, want %d)",
		cur[0].ModRev, req.ResourceVersion)}
}

// answer is a successful response with kv's record, noted in the record of
// holders.
func (a *APIServer) answer(p *sim.Proc, req Request, st Status, kv etcd.KV) Response {
	rec, err := decodeRecord(kv.Value)
	if err != nil {
		return Response{Status: StatusInternal, Reason: err.Error()}
	}
	writer := req.Client
	if req.Verb == VerbGet {
		writer = ""
	}
	a.cluster.saw(a.name, req.Name, writer, kv.ModRev, rec, p.World().Now())
	return Response{Status: st, Record: rec, ResourceVersion: kv.ModRev}
}

// seen notes a record the server read while refusing a write.
func (a *APIServer) seen(p *sim.Proc, kv etcd.KV) {
	if rec, err := decodeRecord(kv.Value); err == nil {
		a.cluster.saw(a.name, leaseName(kv.Key), "", kv.ModRev, rec, p.World().Now())
	}
}

// failed is the answer to a request etcd did not serve: 504 when the write
// may have happened, 500 when it certainly did not.
func failed(err error) Response {
	if errors.Is(err, lockapi.ErrUnknown) {
		return Response{Status: StatusTimeout, Reason: "Timeout: " + err.Error()}
	}
	return Response{Status: StatusInternal, Reason: "InternalError: " + err.Error()}
}

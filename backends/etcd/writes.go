package etcd

import (
	"strconv"
	"strings"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// WritesResource is the name of the resource kept in etcd (resource=etcd) in
// a lockapi.WriteLog.
const WritesResource = "etcd"

// writeTruth records the writes the cluster applied to the resource kept in
// etcd (the keys under ResourcePrefix) and the reads of it the members
// served, as the ground truth of the data of a simulated run. A write is a
// Put of a guarded Txn that succeeded, recorded once, when the first member
// applies its log entry: it took effect for good then (the entry was
// committed), so it is committed at once. A Txn whose guard failed applied
// nothing and is not recorded. A read is recorded when a member answers it:
// a linearizable read when the leader that proposed it applies it first and
// replies (not when a deposed leader catching up applies it again and
// replies late: its client gave up long before), a serializable one when any
// member answers it from what it has applied, perhaps stale. The write a read returned is the one whose
// revision is the key's mod revision in the answering member's store, so a
// stale read derives from the write it saw, not the write in force.
type writeTruth struct {
	log      *lockapi.WriteLog
	recorded uint64               // the highest log index recorded
	byRev    map[int64]int        // revision of a recorded put -> its index in the log
	asked    map[uint64]clientReq // command id of a resource write -> the request it came from
}

// clientReq is the client node that sent a request and the request's message
// id: a network that duplicates the message makes the leader propose it
// again, as the same request.
type clientReq struct {
	client string
	msg    uint64
}

// RecordWrites makes the cluster record in log every write it applies to the
// resource kept in etcd and every read of it a member serves (resource
// "etcd", keys without ResourcePrefix). The log records only once its
// Record(true) is called; recording changes nothing of the run.
func (c *Cluster) RecordWrites(log *lockapi.WriteLog) {
	c.writes = &writeTruth{log: log, byRev: map[int64]int{}, asked: map[uint64]clientReq{}}
}

func (t *writeTruth) on() bool { return t != nil && t.log.Recording() }

// resourceKey is the resource's cell a key of the keyspace holds.
func resourceKey(key string) (string, bool) {
	if !strings.HasPrefix(key, ResourcePrefix) {
		return "", false
	}
	return strings.TrimPrefix(key, ResourcePrefix), true
}

// writesResource reports whether cmd may put a resource key.
func writesResource(cmd Command) bool {
	if cmd.Type != CmdTxn {
		return false
	}
	for _, ops := range [][]Op{cmd.Txn.Then, cmd.Txn.Else} {
		for _, op := range ops {
			if _, ok := resourceKey(op.Key); ok && op.Type == OpPut {
				return true
			}
		}
	}
	return false
}

// proposed notes that the command with id is the request m.
func (t *writeTruth) proposed(id uint64, cmd Command, n *sim.Node, m sim.Message) {
	if t.on() && writesResource(cmd) {
		t.asked[id] = clientReq{client: clientName(n, m), msg: m.ID}
	}
}

// applied records the resource writes of the entry at index, the first time
// a member (s) applies it, and reports whether this is the first time.
func (t *writeTruth) applied(s *Server, index, id uint64, cmd Command, res Result) bool {
	if !t.on() || index <= t.recorded {
		return false
	}
	t.recorded = index
	req, asked := t.asked[id]
	if !asked {
		return true
	}
	delete(t.asked, id)
	var token uint64
	for _, c := range cmd.Txn.If {
		if c.Target == TargetCreate && c.Result == "=" {
			token = uint64(c.Int)
		}
	}
	for _, e := range res.Events {
		key, ok := resourceKey(e.KV.Key)
		if !ok || e.Type != EventPut {
			continue
		}
		v, err := strconv.ParseInt(e.KV.Value, 10, 64)
		if err != nil {
			continue // not a value the resource's clients write
		}
		i := t.log.Applied(WritesResource, s.node.Name(), key, req.client, req.msg, token, v, s.node.World().Now(), true)
		t.byRev[e.KV.ModRev] = i
	}
	return true
}

// served records the read of the resource in cmd, if it is one, that member
// s answers to the request m with res.
func (t *writeTruth) served(s *Server, m sim.Message, cmd Command, res Result) {
	if !t.on() || cmd.Type != CmdTxn || len(cmd.Txn.If) > 0 || len(cmd.Txn.Then) != 1 || res.Err != "" ||
		len(res.Results) != 1 {
		return
	}
	op := cmd.Txn.Then[0]
	key, ok := resourceKey(op.Key)
	if !ok || op.Type != OpGet || op.Prefix {
		return
	}
	var v int64
	parent := -1
	if kvs := res.Results[0].Kvs; len(kvs) > 0 {
		var err error
		if v, err = strconv.ParseInt(kvs[0].Value, 10, 64); err != nil {
			return // the client fails to read it: no read served
		}
		if i, known := t.byRev[kvs[0].ModRev]; known {
			parent = i
		}
	}
	t.log.ReadOf(WritesResource, key, clientName(s.node, m), v, s.node.World().Now(), parent)
}

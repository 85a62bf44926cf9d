package raftkv

import (
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/backends/raftkv/lockfsm"
)

// decodeSlots is the size of the decode cache: more than the entries a
// follower can lag behind the first node to apply them in a steady run.
const decodeSlots = 256

// decoder decodes the commands of log entries for every node of a cluster.
// Entries travel between nodes shared, not copied (raftnode.Outbound): each
// node's log holds its own copy of an entry, but the data of every copy is
// the very array the leader proposed. So an entry is decoded once rather
// than once per node: a direct-mapped cache by index remembers the data each
// command was decoded from, and a hit needs the same data (the same array,
// the same length), which nothing writes once proposed and which the cache
// keeps alive, so it cannot be reused for other bytes. What a node applies
// is the same with or without the cache; only the work differs.
type decoder struct {
	slots [decodeSlots]struct {
		data *byte // the first byte of the entry's data
		n    int   // the data's length
		cmd  lockfsm.Command
	}
	strs lockfsm.Strings // the strings of decoded commands, interned
}

// decode returns the command of e. The command's Context is shared by every
// node that applies e: read-only, as the state machine copies it.
func (d *decoder) decode(e *pb.Entry) (lockfsm.Command, error) {
	if len(e.Data) == 0 {
		return lockfsm.Decode(e.Data)
	}
	slot := &d.slots[e.Index%decodeSlots]
	if slot.data == &e.Data[0] && slot.n == len(e.Data) {
		return slot.cmd, nil
	}
	if d.strs == nil {
		d.strs = lockfsm.Strings{}
	}
	cmd, err := lockfsm.DecodeInterned(e.Data, d.strs)
	if err != nil {
		return lockfsm.Command{}, err
	}
	slot.data, slot.n, slot.cmd = &e.Data[0], len(e.Data), cmd
	return cmd, nil
}

package raftkv

import (
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/backends/raftkv/lockfsm"
)

// decodeSlots is the size of the decode cache: more than the entries a
// follower can lag behind the first node to apply them in a steady run.
const decodeSlots = 256

// decoder decodes the commands of log entries for every node of a cluster.
// Entries travel between nodes shared, not copied (raftnode.Outbound), so
// each node applies the very *pb.Entry the leader appended, and an entry is
// decoded once rather than once per node: a direct-mapped cache by index
// remembers the entry each command was decoded from, and a hit needs the
// same entry (pointer), which never changes once appended. What a node
// applies is the same with or without the cache; only the work differs.
type decoder struct {
	slots [decodeSlots]struct {
		e   *pb.Entry
		cmd lockfsm.Command
	}
	strs lockfsm.Strings // the strings of decoded commands, interned
}

// decode returns the command of e. The command's Context is shared by every
// node that applies e: read-only, as the state machine copies it.
func (d *decoder) decode(e *pb.Entry) (lockfsm.Command, error) {
	slot := &d.slots[e.GetIndex()%decodeSlots]
	if slot.e == e {
		return slot.cmd, nil
	}
	if d.strs == nil {
		d.strs = lockfsm.Strings{}
	}
	cmd, err := lockfsm.DecodeInterned(e.GetData(), d.strs)
	if err != nil {
		return lockfsm.Command{}, err
	}
	slot.e, slot.cmd = e, cmd
	return cmd, nil
}

package raftkv

import (
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/backends/raftkv/lockfsm"
)

// decodeChunk is how many log indexes one chunk of the decode table covers.
const decodeChunk = 1024

// decoded is the command decoded at one log index, with the data it was
// decoded from.
type decoded struct {
	data *byte // the first byte of the entry's data
	n    int   // the data's length
	cmd  lockfsm.Command
}

// decoder decodes the commands of log entries for every node of a cluster.
// Entries travel between nodes shared, not copied (raftnode.Outbound): each
// node's log holds its own copy of an entry, but the data of every copy is
// the very array the leader proposed. So an entry is decoded once rather
// than once per node and once more per replay after a restart: a table by
// log index remembers the data each command was decoded from, and a hit
// needs the same data (the same array, the same length), which nothing
// writes once proposed and which the table keeps alive, so it cannot be
// reused for other bytes. What a node applies is the same with or without
// the table; only the work differs.
type decoder struct {
	chunks [][]decoded     // chunk i covers indexes [i·decodeChunk, (i+1)·decodeChunk), allocated on first use
	strs   lockfsm.Strings // the strings of decoded commands, interned
	mem    *memory         // zeroed chunks of a released cluster (nil: none)
}

// decode returns the command of e. The command's Context is shared by every
// node that applies e (it is a slice of the entry's data): read-only, as the
// state machine copies it.
func (d *decoder) decode(e *pb.Entry) (lockfsm.Command, error) {
	if len(e.Data) == 0 {
		return lockfsm.Decode(e.Data)
	}
	slot := d.slot(e.Index)
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
	*slot = decoded{data: &e.Data[0], n: len(e.Data), cmd: cmd}
	return cmd, nil
}

// proposed notes that the entry at index holds data, which a leader encoded
// from cmd (lockfsm.Encode): the leader need not decode what it encoded.
// The command is kept as decoding would give it (an empty context is nil);
// one whose op the codec does not know is left for decode to refuse.
func (d *decoder) proposed(index uint64, data []byte, cmd lockfsm.Command) {
	if len(data) == 0 || !lockfsm.KnownOp(cmd.Op) {
		return
	}
	if len(cmd.Context) == 0 {
		cmd.Context = nil
	}
	*d.slot(index) = decoded{data: &data[0], n: len(data), cmd: cmd}
}

// slot is the table's entry for a log index.
func (d *decoder) slot(index uint64) *decoded {
	c := int(index / decodeChunk)
	for len(d.chunks) <= c {
		d.chunks = append(d.chunks, nil)
	}
	if d.chunks[c] == nil {
		d.chunks[c] = d.mem.takeChunk()
		if d.chunks[c] == nil {
			d.chunks[c] = make([]decoded, decodeChunk)
		}
	}
	return &d.chunks[c][index%decodeChunk]
}

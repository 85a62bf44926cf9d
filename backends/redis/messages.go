package redis

// MessageTypes returns one value of every message type that Redis servers,
// the monitor and the clients of the redis system send (commands, replies,
// replication and monitoring), so that a fault schedule can be checked for a
// delay whose "match" names a type that is never sent. Incr is Redlock's
// (its fence).
func MessageTypes() []any {
	return []any{
		SetNX{}, SetNXFence{}, Get{}, Del{}, DelIfValue{}, ExpireIfValue{}, HoldLock{}, UnholdLock{}, Reply{},
		Replicate{}, Snapshot{}, ReplAck{}, Wait{}, Ping{}, Pong{}, Promote{}, ReplicaOf{},
		GetPrimary{}, PrimaryIs{},
	}
}

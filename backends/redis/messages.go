package redis

// MessageTypes returns one value of every message type that Redis servers,
// the monitor and the clients send (commands, replies, replication and
// monitoring), so that a fault schedule can be checked for a delay whose
// "match" names a type that is never sent.
func MessageTypes() []any {
	return []any{
		SetNX{}, SetNXFence{}, Get{}, Del{}, DelIfValue{}, ExpireIfValue{}, Incr{}, HoldLock{}, UnholdLock{}, Reply{},
		Replicate{}, Snapshot{}, ReplAck{}, Wait{}, Ping{}, Pong{}, Promote{}, ReplicaOf{},
		GetPrimary{}, PrimaryIs{},
	}
}

package engine

// cmdPublish is PUBLISH channel message (and SPUBLISH): the number of
// clients that received the message. The engine holds a data set, not
// connections: nobody is subscribed to it, so the answer is always 0, as a
// redis-server with no subscriber answers. A client that waits for the
// message (Redisson's lock waiters) is not woken by it; such clients poll.
func cmdPublish(_ *DB, _ int64, _ []string, _ string) Reply {
	return int64(0)
}

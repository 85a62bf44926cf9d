package redis

import "time"

// Commands understood by the server. Each runs atomically, as a Redis command or
// a Lua script does. TTLs are relative; the server turns them into absolute
// times on its wall clock.

// SetNX is SET key value NX PX ttl.
type SetNX struct {
	Key, Value string
	TTL        time.Duration
}

// SetNXFence is the script: if SET key value NX PX ttl then return INCR fenceKey.
type SetNXFence struct {
	Key, Value, FenceKey string
	TTL                  time.Duration
}

// Get is GET key.
type Get struct{ Key string }

// Del is DEL key.
type Del struct{ Key string }

// DelIfValue is the script: if GET key == value then DEL key, else return the
// value the key holds (empty: none).
type DelIfValue struct{ Key, Value string }

// ExpireIfValue is the script: if GET key == value then PEXPIRE key ttl (renewal).
type ExpireIfValue struct {
	Key, Value string
	TTL        time.Duration
}

// Incr is INCR key.
type Incr struct{ Key string }

// HoldLock is the Redisson-style reentrant acquire: if the hash key is absent or
// its owner is Owner, HINCRBY key owner 1 and PEXPIRE key ttl; if FenceKey is set
// and the count became 1, INCR it for a token.
type HoldLock struct {
	Key, Owner, FenceKey string
	TTL                  time.Duration
}

// UnholdLock is the reentrant release: if Owner owns key, decrement its count,
// delete the key at zero, otherwise PEXPIRE it by ttl.
type UnholdLock struct {
	Key, Owner string
	TTL        time.Duration
}

// Reply answers every command. OK: the command did what was asked (SET happened,
// key exists, script condition held). Int: an integer result (token, counter,
// number of keys deleted, remaining holds, replicas that acknowledged). Value: a
// string result (GET). Err: the instance did not execute the command
// (ErrReadOnly, ErrRestarting).
type Reply struct {
	OK    bool
	Int   int64
	Value string
	Err   string
}

// The replies that recur, boxed once: a message body is an interface value,
// and boxing a Reply allocates. Bodies are never mutated, so sharing is safe.
var (
	bodyNo         any = Reply{}
	bodyYes        any = Reply{OK: true}
	bodyOne        any = Reply{OK: true, Int: 1}
	bodyReadOnly   any = Reply{Err: ErrReadOnly}
	bodyRestarting any = Reply{Err: ErrRestarting}
)

// recurring returns r boxed once if it is one of the recurring replies. It
// compares fields, not whole Replies: a Reply's equality compares strings.
func (r Reply) recurring() (any, bool) {
	if r.Value != "" || r.Err != "" {
		return nil, false
	}
	switch {
	case !r.OK && r.Int == 0:
		return bodyNo, true
	case r.OK && r.Int == 0:
		return bodyYes, true
	case r.OK && r.Int == 1:
		return bodyOne, true
	}
	return nil, false
}

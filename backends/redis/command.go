package redis

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/backends/redis/engine"
	"github.com/locklab/locklab/sim"
)

// Command is any command of the engine's command set (package engine: SET
// with its options, SETNX, GET, GETRANGE, DEL, EXISTS, INCR, the expiry and
// TTL commands, the hash, list and sorted-set commands the lock libraries
// use, PUBLISH, EVAL and EVALSHA with their read-only forms, SCRIPT), as a
// client written against go-redis sends it: Args are the command's name and
// arguments. It is what a user's own lock sends (GoRedisClient); the typed
// commands (SetNX, DelIfValue, ...) stay the built-in clients'.
//
// The instance executes it on a data set of its own (engine.DB, made at the
// first Command), apart from the typed commands' keys, with the same
// persistence, replication (a replica runs the command at the primary's
// clock reading, so TTLs are the same absolute times on every copy), restart
// delay and READONLY refusal as the typed commands.
type Command struct{ Args []string }

// CommandReply answers a Command with the engine's reply (an *engine.Error
// for an error reply). A refused command (a replica, an instance within its
// restart delay) is answered with a Reply whose Err says why, as the typed
// commands are.
type CommandReply struct{ Reply engine.Reply }

// CommandMessageTypes are MessageTypes with the generic command and its
// reply: the messages of a deployment whose clients send Commands.
func CommandMessageTypes() []any { return append(MessageTypes(), Command{}, CommandReply{}) }

// exec runs a Command at the expiry-clock reading at and reports whether it
// may have changed the data set (for persistence and replication).
func (k *Keyspace) exec(args []string, at time.Duration) (engine.Reply, bool) {
	if k.eng == nil {
		k.eng = engine.New()
	}
	r := k.eng.Do(at.Milliseconds(), args...)
	return r, mayChange(args, r)
}

// mayChange reports whether a command with reply r may have changed the
// data set: not a read, nor an error of a command other than a script (a
// script's writes before its error stay, as in Redis).
func mayChange(args []string, r engine.Reply) bool {
	if len(args) == 0 {
		return false
	}
	name := strings.ToLower(args[0])
	switch name {
	case "eval_ro", "evalsha_ro":
		return false
	case "script":
		return len(args) > 1 && !strings.EqualFold(args[1], "exists")
	case "eval", "evalsha":
		return true
	}
	if engine.IsRead(name) {
		return false
	}
	_, failed := r.(*engine.Error)
	return !failed
}

// commandKeys are the keys a command names: the first argument of the
// single-key commands, every argument of DEL and EXISTS, a script's KEYS.
// A script that touches keys it did not declare in KEYS (which Redis
// discourages) hides them from the record of grants.
func commandKeys(args []string) []string {
	if len(args) < 2 {
		return nil
	}
	switch strings.ToLower(args[0]) {
	case "del", "exists":
		return args[1:]
	case "eval", "evalsha", "eval_ro", "evalsha_ro":
		if len(args) < 3 {
			return nil
		}
		n, err := strconv.Atoi(args[2])
		if err != nil || n < 0 || 3+n > len(args) {
			return nil
		}
		return args[3 : 3+n]
	case "ping", "script":
		return nil
	}
	return args[1:2]
}

// WatchLockKeys makes the instance record, in the log given to
// RecordGrants, what Commands do to the keys isLock accepts: the keys a
// user's lock stores its lock in. The record reads each such key a command
// names before and after the command:
//
//   - absent, then a value: Granted to that value (the holder), asked by
//     the command's client, until the key's TTL runs out counted from now
//     (no TTL: a grant without a lease);
//   - the same value with another expiry: Renewed until the new one (a
//     renewal only extends the promise; a key made persistent is renewed
//     for ever);
//   - deleted: Removed, which is a release when the grant's own client
//     deleted it and a removal of someone else's lock otherwise;
//   - another value: the old one Removed as above, the new one Granted.
//
// It cannot see keys a script touches without declaring them in KEYS, nor
// tell which process of a client node sent a command (it names the node).
func (s *Server) WatchLockKeys(isLock func(key string) bool) { s.lockKey = isLock }

// keyState is one lock key as a command found or left it.
type keyState struct {
	key      string
	value    string
	expireAt int64 // engine milliseconds; 0: none
	ok       bool
}

// lockStates reads the lock keys args names at the clock reading at.
func (s *Server) lockStates(args []string, at time.Duration) []keyState {
	var out []keyState
	for _, k := range commandKeys(args) {
		if !s.lockKey(k) {
			continue
		}
		dup := false
		for _, o := range out {
			dup = dup || o.key == k
		}
		if dup {
			continue
		}
		st := keyState{key: k}
		if s.data.eng != nil {
			st.value, st.expireAt, st.ok = s.data.eng.Peek(k, at.Milliseconds())
		}
		out = append(out, st)
	}
	return out
}

// command executes a Command as a primary and replies.
func (s *Server) command(n *sim.Node, m sim.Message, c Command) {
	at := s.now(n)
	var before []keyState
	watch := s.lockKey != nil && s.grants.Recording()
	if watch {
		before = s.lockStates(c.Args, at)
	}
	r, changed := s.data.exec(c.Args, at)
	if changed {
		s.persist()
		s.propagate(n, m.From, c, at)
	}
	if watch && len(before) > 0 {
		s.noteCommand(n, m, before, at)
	}
	if e, ok := r.(*engine.Error); ok && s.errs != nil {
		s.errs.note(c.Args, e.Msg, n.World().Nodes()[m.From].Name(), n.World().Now())
	}
	n.Reply(m, CommandReply{Reply: r})
}

// RecordCommandErrors makes the instance record in e the error replies to
// Commands that a lock does not expect (a script's error, an unknown
// command; see CommandErrors). Instances of one deployment share one.
func (s *Server) RecordCommandErrors(e *CommandErrors) { s.errs = e }

// noteCommand records what a Command did to the lock keys it named (see
// WatchLockKeys); before is their state before it.
func (s *Server) noteCommand(n *sim.Node, m sim.Message, before []keyState, at time.Duration) {
	now := n.World().Now()
	client := n.World().Nodes()[m.From].Name()
	atMs := at.Milliseconds()
	until := func(expireAt int64, forever time.Duration) time.Duration {
		if expireAt == 0 {
			return forever
		}
		return now + time.Duration(expireAt-atMs)*time.Millisecond
	}
	for _, b := range before {
		a := keyState{key: b.key}
		a.value, a.expireAt, a.ok = s.data.eng.Peek(b.key, atMs)
		switch {
		case !b.ok && a.ok:
			s.grants.Granted(s.scope, n.Name(), a.key, a.value, client, now, until(a.expireAt, 0))
		case b.ok && !a.ok:
			s.grants.Removed(s.scope, b.key, b.value, client, now)
		case b.ok && a.ok && a.value != b.value:
			s.grants.Removed(s.scope, b.key, b.value, client, now)
			s.grants.Granted(s.scope, n.Name(), a.key, a.value, client, now, until(a.expireAt, 0))
		case b.ok && a.ok && a.expireAt != b.expireAt:
			s.grants.Renewed(s.scope, a.key, a.value, now, until(a.expireAt, math.MaxInt64))
		}
	}
}

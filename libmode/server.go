package libmode

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/backends/redis/engine"
)

// sessionState is a connection's state at its instance.
type sessionState = *engine.Session

// server is one simulated Redis instance: the engine's data set behind the
// RESP front end, with its own wall clock (true time plus an offset a clock
// jump moves) and the servers' record of what its commands did to the
// lock keys.
type server struct {
	w      *world
	name   string
	addr   string
	db     *engine.DB
	offset time.Duration // the wall clock's offset from true time
	down   bool
	conns  []*conn // open connections, reset by a crash
}

// epoch is the wall clock every instance starts at: the bubble's own start
// (2000-01-01 UTC) as Unix time, so a TTL in a reply reads as Redis's.
var epoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// wallMs is the instance's wall clock in Unix milliseconds.
func (s *server) wallMs() int64 {
	return epoch.Add(s.w.elapsed() + s.offset).UnixMilli()
}

// open makes the state of a new connection.
func (s *server) open(c *conn) sessionState { return engine.NewSession(s.db, c.id) }

// receive parses what arrived on c and executes every whole command, in
// order, replying in one message (w.mu held).
func (s *server) receive(c *conn, b []byte) {
	c.sbuf = append(c.sbuf, b...)
	var out []byte
	reset := false
	for len(c.sbuf) > 0 && !reset {
		args, n, err := engine.ParseCommand(c.sbuf)
		if errors.Is(err, engine.ErrIncomplete) {
			break
		}
		if err != nil {
			out = engine.AppendReply(out, &engine.Error{Msg: "ERR Protocol error: " + err.Error()}, c.sess.Proto())
			c.sbuf, reset = nil, true
			break
		}
		c.sbuf = c.sbuf[n:]
		if len(args) == 0 {
			continue
		}
		r := s.exec(c, args)
		out = engine.AppendReply(out, r, c.sess.Proto())
		reset = c.sess.Quit
	}
	if len(out) > 0 || reset {
		s.w.sendDown(c, out, reset)
	}
}

// exec runs one command and records what it did to the lock keys it names.
func (s *server) exec(c *conn, args []string) engine.Reply {
	now := s.wallMs()
	keys := s.lockKeys(args)
	type state struct {
		value    string
		expireAt int64
		ok       bool
	}
	before := make([]state, len(keys))
	for i, k := range keys {
		before[i].value, before[i].expireAt, before[i].ok = s.db.Peek(k, now)
	}
	r := c.sess.Exec(now, args)
	at := s.w.elapsed()
	until := func(expireAt int64, forever time.Duration) time.Duration {
		if expireAt == 0 {
			return forever
		}
		return at + time.Duration(expireAt-now)*time.Millisecond
	}
	g := s.w.grants
	for i, k := range keys {
		b := before[i]
		var a state
		a.value, a.expireAt, a.ok = s.db.Peek(k, now)
		switch {
		case !b.ok && a.ok:
			g.Granted(s.name, s.name, k, a.value, c.client, at, until(a.expireAt, 0))
		case b.ok && !a.ok:
			g.Removed(s.name, k, b.value, c.client, at)
		case b.ok && a.ok && a.value != b.value:
			g.Removed(s.name, k, b.value, c.client, at)
			g.Granted(s.name, s.name, k, a.value, c.client, at, until(a.expireAt, 0))
		case b.ok && a.ok && a.expireAt != b.expireAt:
			g.Renewed(s.name, k, a.value, at, until(a.expireAt, math.MaxInt64))
		}
	}
	return r
}

// lockKeys are the lock keys a command names (the first argument of a
// single-key command, every argument of DEL, UNLINK and EXISTS, a script's
// KEYS), as the run's configuration says which keys are locks.
func (s *server) lockKeys(args []string) []string {
	var named []string
	switch strings.ToLower(args[0]) {
	case "del", "unlink", "exists":
		named = args[1:]
	case "eval", "evalsha", "eval_ro", "evalsha_ro":
		if len(args) >= 3 {
			if n, err := strconv.Atoi(args[2]); err == nil && n >= 0 && 3+n <= len(args) {
				named = args[3 : 3+n]
			}
		}
	case "ping", "script", "hello", "client", "auth", "select", "quit":
	default:
		if len(args) > 1 {
			named = args[1:2]
		}
	}
	var out []string
	for _, k := range named {
		if s.w.cfg.isLockKey(k) && !contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

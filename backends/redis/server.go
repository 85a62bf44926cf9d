package redis

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// Role is what an instance does in a replicated deployment.
type Role string

// Roles.
const (
	RolePrimary Role = "primary"
	RoleReplica Role = "replica"
)

// Error replies (Reply.Err) of an instance that does not execute a command.
const (
	// ErrReadOnly is a replica's answer to a client command.
	ErrReadOnly = "READONLY You can't write against a read only replica."
	// ErrRestarting is the answer of an instance within its restart delay.
	ErrRestarting = "TRYAGAIN the instance restarted and refuses requests for its restart delay"
)

// ServerConfig configures one Redis instance. The zero value is a primary
// without persistence whose TTLs follow its wall clock.
type ServerConfig struct {
	// Persistence decides what survives a crash: none (default), everysec, always.
	Persistence Persistence
	// ExpiryClock is the clock TTLs are measured on: wall (default, as Redis
	// does) or mono (immune to clock jumps).
	ExpiryClock Clock
	// RestartDelay makes an instance that restarted after a crash refuse every
	// command for that long on its monotonic clock (antirez's remedy for locks
	// lost in a restart: wait one TTL). Default 0.
	RestartDelay time.Duration
	// Replica starts the instance as a replica of ReplicaOf.
	Replica   bool
	ReplicaOf sim.NodeID
}

// Server is a Redis instance: a keyspace, persistence, and (when replicated)
// its part of asynchronous replication. It is a sim.Handler.
//
// Durable across a crash: what the persistence mode wrote to disk, and the
// replication configuration (role, primary, config epoch), as Redis keeps it
// in its config file. Everything else is volatile.
type Server struct {
	cfg   ServerConfig
	data  *Keyspace
	disk  *Keyspace // what a restart recovers
	dirty bool
	// Commands counts the client commands served, for reports.
	Commands int

	// durable replication configuration
	role    Role
	primary sim.NodeID
	epoch   uint64

	refuseUntil time.Duration // monotonic; within the restart delay
	repl        replState
	acking      bool // a replica's ack timer is running

	grants  *lockapi.GrantLog     // the ground truth, when recorded (see RecordGrants)
	errs    *CommandErrors        // the unexpected error replies to Commands (see RecordCommandErrors)
	lockKey func(key string) bool // the keys of Commands recorded (see WatchLockKeys)

	// the last reply boxed that is not a recurring one: a contended key gets
	// the same "held by VALUE" reply many times in a row
	lastReply Reply
	lastBody  any
	scope     string
}

// NewServer returns a primary instance with an empty keyspace, the given
// persistence and wall-clock expiry.
func NewServer(p Persistence) *Server { return NewServerWith(ServerConfig{Persistence: p}) }

// NewServerWith returns an instance configured by cfg.
func NewServerWith(cfg ServerConfig) *Server {
	if cfg.Persistence == "" {
		cfg.Persistence = PersistNone
	}
	if cfg.ExpiryClock == "" {
		cfg.ExpiryClock = ClockWall
	}
	s := &Server{cfg: cfg, data: NewKeyspace(), disk: NewKeyspace(), role: RolePrimary}
	if cfg.Replica {
		s.role, s.primary = RoleReplica, cfg.ReplicaOf
	}
	return s
}

// Start recovers the keyspace from disk, starts the fsync timer and, in a
// replicated deployment, replication.
func (s *Server) Start(n *sim.Node) {
	s.data = s.disk.Clone()
	s.dirty = false
	s.refuseUntil, s.acking = 0, false
	if n.Incarnation() > 0 && s.cfg.RestartDelay > 0 {
		s.refuseUntil = n.Mono() + s.cfg.RestartDelay
	}
	if s.cfg.Persistence == PersistEverySec {
		s.scheduleFsync(n)
	}
	s.startReplication(n)
}

func (s *Server) scheduleFsync(n *sim.Node) {
	n.SetTimer(time.Second, func() {
		if s.dirty {
			s.disk = s.data.Clone()
			s.dirty = false
		}
		s.scheduleFsync(n)
	})
}

// Crash loses everything that was not persisted; Start will recover the disk.
func (s *Server) Crash(n *sim.Node) { s.data = nil }

// now is the server's reading of the clock its TTLs follow.
func (s *Server) now(n *sim.Node) time.Duration {
	if s.cfg.ExpiryClock == ClockMono {
		return n.Mono()
	}
	return n.Wall()
}

// Receive executes a client command and replies, or handles a replication or
// monitor message.
func (s *Server) Receive(n *sim.Node, m sim.Message) {
	if s.receiveControl(n, m) {
		return
	}
	s.Commands++
	switch {
	case s.refuseUntil > 0 && n.Mono() < s.refuseUntil:
		n.Reply(m, bodyRestarting)
	case s.role == RoleReplica:
		n.Reply(m, bodyReadOnly)
	default:
		if w, ok := m.Body.(Wait); ok {
			s.wait(n, m, w)
			return
		}
		if c, ok := m.Body.(Command); ok {
			s.command(n, m, c)
			return
		}
		at := s.now(n)
		recording := s.grants.Recording() // else nothing to gather for the record
		var before string
		if recording {
			before = s.holderBefore(m.Body, at)
		}
		r, changed := s.data.Apply(m.Body, at)
		if changed {
			s.persist()
			s.propagate(n, m.From, m.Body, at)
		}
		if recording {
			s.noteGrant(n, m, r, before)
		}
		n.Reply(m, s.body(r))
	}
}

// body is r as a message body, boxed once per run of equal replies.
func (s *Server) body(r Reply) any {
	if b, ok := r.recurring(); ok {
		return b
	}
	if l := &s.lastReply; s.lastBody == nil || l.OK != r.OK || l.Int != r.Int || l.Value != r.Value || l.Err != r.Err {
		s.lastReply, s.lastBody = r, r
	}
	return s.lastBody
}

// persist records a change according to the persistence mode.
func (s *Server) persist() {
	switch s.cfg.Persistence {
	case PersistAlways:
		s.disk = s.data.Clone()
	case PersistEverySec:
		s.dirty = true
	}
}

// Keyspace exposes the live keyspace (for tests).
func (s *Server) Keyspace() *Keyspace { return s.data }

// Role is the instance's current role.
func (s *Server) Role() Role { return s.role }

// String describes the instance's replication state, for tests and logs.
func (s *Server) String() string {
	return fmt.Sprintf("%s epoch %d offset %d", s.role, s.epoch, s.repl.offset)
}

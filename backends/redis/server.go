package redis

import (
	"time"

	"github.com/locklab/locklab/sim"
)

// Server is a Redis instance: a keyspace plus persistence. It is a sim.Handler.
type Server struct {
	// Persistence decides what survives a crash.
	Persistence Persistence
	data        *Keyspace
	disk        *Keyspace // what a restart recovers
	dirty       bool
	// Commands counts the commands served, for reports.
	Commands int
}

// NewServer returns an instance with an empty keyspace.
func NewServer(p Persistence) *Server {
	if p == "" {
		p = PersistNone
	}
	return &Server{Persistence: p, data: NewKeyspace(), disk: NewKeyspace()}
}

// Start recovers the keyspace from disk and starts the fsync timer.
func (s *Server) Start(n *sim.Node) {
	s.data = s.disk.Clone()
	s.dirty = false
	if s.Persistence == PersistEverySec {
		s.scheduleFsync(n)
	}
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

// Receive executes a command and replies.
func (s *Server) Receive(n *sim.Node, m sim.Message) {
	r, changed := s.data.Apply(m.Body, n.Wall())
	s.Commands++
	if changed {
		switch s.Persistence {
		case PersistAlways:
			s.disk = s.data.Clone()
		case PersistEverySec:
			s.dirty = true
		}
	}
	n.Reply(m, r)
}

// Keyspace exposes the live keyspace (for tests).
func (s *Server) Keyspace() *Keyspace { return s.data }

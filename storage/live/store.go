// Package live is the protected storage of live mode: an in-process server
// with the same cells and fencing rule as storage, reached by each
// client through a faultnet.Net, so that its links can be cut and its writes
// delayed. The messages are storage's types, so a fault schedule's
// "match": "storage.WriteReq" means the same thing live and simulated.
//
// This package is live-only: nothing simulated imports it.
package live

import (
	"slices"
	"sync"
	"time"

	"github.com/locklab/locklab/internal/faultnet"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/storage"
)

// Name is the storage's node name.
const Name = "storage"

// Server is the storage: storage's cells under its fencing rule, behind a
// lock. Safe for concurrent use.
type Server struct {
	mu    sync.Mutex
	cells storage.Cells
	late  storage.LateLog
}

// LateWrite is a write that reached the storage after its client had given
// up on it (storage.LateWrite): the simulated storage keeps the same record.
type LateWrite = storage.LateWrite

// NewServer returns a storage server with o's mode and initial values.
func NewServer(o storage.Options) *Server {
	if o.Mode == "" {
		o.Mode = storage.Unfenced
	}
	return &Server{cells: storage.NewCells(o)}
}

// Serve answers one request (storage.ReadReq or storage.WriteReq).
func (s *Server) Serve(req any) storage.Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cells.Serve(req)
}

// ServeFrom answers one request of client, delivered as d, and keeps the
// record of the writes that landed after their client gave up (LateWrites).
func (s *Server) ServeFrom(client string, req any, d faultnet.Delivery) storage.Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	reply := s.cells.Serve(req)
	switch r := req.(type) {
	case storage.ReadReq:
		s.late.Read(r.Key, reply.Rejected, d.Abandoned)
	case storage.WriteReq:
		s.late.Write(client, r, reply.Rejected, d.Abandoned, d.Sent, d.Arrived)
	}
	return reply
}

// LateWrites are the writes that reached the storage after their client had
// given up on them, in the order they landed.
func (s *Server) LateWrites() []LateWrite {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.late.Writes())
}

// Value is the current value of key.
func (s *Server) Value(key string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cells.Value(key)
}

// Client is one client node's storage client.
type Client struct {
	Net     *faultnet.Net
	Node    string
	Server  *Server
	Timeout time.Duration // 0: storage.DefaultTimeout
}

var _ lockapi.Storage = (*Client)(nil)

func (c *Client) call(req any) (storage.Reply, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = storage.DefaultTimeout
	}
	return faultnet.CallDelivered(c.Net, c.Node, Name, req, timeout, func(d faultnet.Delivery) storage.Reply {
		return c.Server.ServeFrom(c.Node, req, d)
	})
}

// Read returns the value of key.
func (c *Client) Read(key string, token uint64) (int64, error) {
	return storage.Do(c.call, storage.ReadReq{Key: key, Token: token})
}

// Write sets key to value.
func (c *Client) Write(key string, value int64, token uint64) error {
	_, err := storage.Do(c.call, storage.WriteReq{Key: key, Value: value, Token: token})
	return err
}

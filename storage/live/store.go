// Package live is the protected storage of live mode: an in-process server
// with the same cells and fencing rule as storage, reached by each
// client through a faultnet.Net, so that its links can be cut and its writes
// delayed. The messages are storage's types, so a fault schedule's
// "match": "storage.WriteReq" means the same thing live and simulated.
//
// This package is live-only: nothing simulated imports it.
package live

import (
	"fmt"
	"sync"
	"time"

	"github.com/locklab/locklab/internal/faultnet"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/storage"
)

// Name is the storage's node name.
const Name = "storage"

type cell struct {
	value   int64
	highest uint64
}

// Server is the storage: numbered cells, fenced or not. Safe for concurrent use.
type Server struct {
	opts  storage.Options
	mu    sync.Mutex
	cells map[string]*cell
}

// NewServer returns a storage server with o's mode and initial values.
func NewServer(o storage.Options) *Server {
	if o.Mode == "" {
		o.Mode = storage.Unfenced
	}
	s := &Server{opts: o, cells: map[string]*cell{}}
	for k, v := range o.Initial {
		s.cells[k] = &cell{value: v}
	}
	return s
}

func (s *Server) cell(key string) *cell {
	c := s.cells[key]
	if c == nil {
		c = &cell{}
		s.cells[key] = c
	}
	return c
}

// admit applies the fencing rule (the same as storage's).
func (s *Server) admit(c *cell, token uint64, isWrite bool) bool {
	if s.opts.Mode != storage.Fenced || (!isWrite && !s.opts.FenceReads) {
		return true
	}
	if token < c.highest {
		return false
	}
	c.highest = token
	return true
}

// Serve answers one request (storage.ReadReq or storage.WriteReq).
func (s *Server) Serve(req any) storage.Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch r := req.(type) {
	case storage.ReadReq:
		c := s.cell(r.Key)
		if !s.admit(c, r.Token, false) {
			return storage.Reply{Rejected: true, Highest: c.highest}
		}
		return storage.Reply{Value: c.value}
	case storage.WriteReq:
		c := s.cell(r.Key)
		if !s.admit(c, r.Token, true) {
			return storage.Reply{Rejected: true, Highest: c.highest}
		}
		c.value = r.Value
		return storage.Reply{Value: c.value}
	}
	panic(fmt.Sprintf("store: unexpected request %T", req))
}

// Value is the current value of key.
func (s *Server) Value(key string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cells[key]; c != nil {
		return c.value
	}
	return 0
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
	r, err := faultnet.Call(c.Net, c.Node, Name, req, timeout, func() storage.Reply { return c.Server.Serve(req) })
	if err != nil {
		return storage.Reply{}, fmt.Errorf("storage: %w: %w", lockapi.ErrUnknown, err)
	}
	return r, nil
}

// Read returns the value of key.
func (c *Client) Read(key string, token uint64) (int64, error) {
	r, err := c.call(storage.ReadReq{Key: key, Token: token})
	if err != nil {
		return 0, err
	}
	if r.Rejected {
		return 0, fmt.Errorf("storage: read %s with token %d (highest %d): %w", key, token, r.Highest, lockapi.ErrRejected)
	}
	return r.Value, nil
}

// Write sets key to value.
func (c *Client) Write(key string, value int64, token uint64) error {
	r, err := c.call(storage.WriteReq{Key: key, Value: value, Token: token})
	if err != nil {
		return err
	}
	if r.Rejected {
		return fmt.Errorf("storage: write %s with token %d (highest %d): %w", key, token, r.Highest, lockapi.ErrRejected)
	}
	return nil
}

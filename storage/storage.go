package storage

import (
	"fmt"
	"strings"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// Mode selects how the storage treats fencing tokens.
type Mode string

// Storage modes.
const (
	Unfenced Mode = "unfenced"
	Fenced   Mode = "fenced"
	// Check asks the lock service whether the writer's token is still
	// current before each write (Chubby's CheckSequencer): a round trip, so
	// the check and the write are not atomic.
	Check Mode = "check"
)

// ModeDoc is a storage mode and what it does, for help texts.
type ModeDoc struct {
	Mode Mode
	Doc  string
}

// Modes lists the storage modes; ParseMode accepts exactly these.
var Modes = []ModeDoc{
	{Unfenced, "accepts every read and write: mutual exclusion is the lock's job alone"},
	{Fenced, "Kleppmann's fencing: each cell rejects a write whose token is below the highest it " +
		"accepted; with FenceReads (--fence-reads) reads too, without it a read under an old token can " +
		"still lose an update"},
	{Check, "Chubby's CheckSequencer: before each write the storage asks the lock service whether the " +
		"writer's sequencer is still current (a round trip: the check and the write are not atomic); " +
		"only systems with sequencers"},
}

// ParseMode parses a mode name.
func ParseMode(s string) (Mode, error) {
	names := make([]string, len(Modes))
	for i, m := range Modes {
		if string(m.Mode) == s {
			return m.Mode, nil
		}
		names[i] = string(m.Mode)
	}
	return "", fmt.Errorf("unknown storage mode %q (want %s)", s, strings.Join(names, " or "))
}

// Options configure the storage server.
type Options struct {
	// Mode is unfenced (default) or fenced.
	Mode Mode
	// FenceReads makes reads in fenced mode check and raise the token too. Default false.
	FenceReads bool
	// Initial sets cells to values before the run (others start at 0).
	Initial map[string]int64
	// Checker asks the lock service, from a process of the storage node,
	// whether token is still the current grant of the lock key (check mode).
	Checker func(p *sim.Proc, key string, token uint64) (current bool, err error)
	// Writes, when set and recording, is given every write the storage
	// applies and every read it serves, in true time: the ground truth of
	// the data (see lockapi.WriteLog), kept out of the history.
	Writes *lockapi.WriteLog
}

// Resource is the name of the storage node's writes in a lockapi.WriteLog.
const Resource = "storage"

// ReadReq asks for the value of a cell.
type ReadReq struct {
	Key   string
	Token uint64
}

// WriteReq sets a cell.
type WriteReq struct {
	Key   string
	Value int64
	Token uint64
}

// Reply answers both requests.
type Reply struct {
	Value    int64
	Rejected bool
	// Highest is the cell's highest accepted token, reported with a rejection.
	Highest uint64
}

type cell struct {
	value   int64
	highest uint64
	// body is Reply{Value: bodyOf} boxed, reused while the value stays (a
	// message body is an interface value, and boxing allocates)
	body   any
	bodyOf int64
}

// valueBody is the reply carrying the cell's value as a message body.
func (c *cell) valueBody() any {
	if c.body == nil || c.bodyOf != c.value {
		c.body, c.bodyOf = Reply{Value: c.value}, c.value
	}
	return c.body
}

// Cells are the storage's numbered cells under its fencing rule: the state
// of a storage server, the simulated one and live mode's alike. Not safe for
// concurrent use; make them with NewCells.
type Cells struct {
	mode       Mode
	fenceReads bool
	cells      map[string]*cell
}

// NewCells returns the cells o.Initial sets (others start at 0), fenced as
// o.Mode and o.FenceReads say.
func NewCells(o Options) Cells {
	cs := Cells{mode: o.Mode, fenceReads: o.FenceReads, cells: map[string]*cell{}}
	for k, v := range o.Initial { // determinism:ok filling a map; order cannot matter
		cs.cells[k] = &cell{value: v}
	}
	return cs
}

func (cs *Cells) cell(key string) *cell {
	c := cs.cells[key]
	if c == nil {
		c = &cell{}
		cs.cells[key] = c
	}
	return c
}

// admit applies the fencing rule to token for c and reports whether it passes.
func (cs *Cells) admit(c *cell, token uint64, isWrite bool) bool {
	if cs.mode != Fenced || (!isWrite && !cs.fenceReads) {
		return true
	}
	if token < c.highest {
		return false
	}
	c.highest = token
	return true
}

// Serve answers a ReadReq or a WriteReq under the fencing rule, applying an
// admitted write: the whole of a storage server that neither checks
// sequencers nor records its writes (live mode's).
func (cs *Cells) Serve(req any) Reply {
	switch r := req.(type) {
	case ReadReq:
		c := cs.cell(r.Key)
		if !cs.admit(c, r.Token, false) {
			return Reply{Rejected: true, Highest: c.highest}
		}
		return Reply{Value: c.value}
	case WriteReq:
		c := cs.cell(r.Key)
		if !cs.admit(c, r.Token, true) {
			return Reply{Rejected: true, Highest: c.highest}
		}
		c.value = r.Value
		return Reply{Value: c.value}
	}
	panic(fmt.Sprintf("storage: unexpected request %T", req))
}

// Value is the current value of key.
func (cs *Cells) Value(key string) int64 {
	if c := cs.cells[key]; c != nil {
		return c.value
	}
	return 0
}

// Server is the storage node's model.
type Server struct {
	Options Options
	cells   Cells
	late    LateLog
}

// NewServer returns a storage server.
func NewServer(o Options) *Server {
	if o.Mode == "" {
		o.Mode = Unfenced
	}
	return &Server{Options: o, cells: NewCells(o)}
}

// Start keeps the cells: the storage is durable and never crashes by design.
func (s *Server) Start(n *sim.Node) {}

// Receive serves reads and writes.
func (s *Server) Receive(n *sim.Node, m sim.Message) {
	switch req := m.Body.(type) {
	case ReadReq:
		c := s.cells.cell(req.Key)
		if !s.cells.admit(c, req.Token, false) {
			n.Reply(m, Reply{Rejected: true, Highest: c.highest})
			return
		}
		s.late.Read(req.Key, false, !n.Awaited(m))
		if s.Options.Writes.Recording() {
			s.Options.Writes.Read(Resource, req.Key, clientName(n, m), c.value, n.World().Now())
		}
		n.Reply(m, c.valueBody())
	case WriteReq:
		if s.Options.Mode == Check {
			n.Spawn(fmt.Sprintf("storage/check-%d", m.ID), func(p *sim.Proc) { s.checkedWrite(n, p, m, req) })
			return
		}
		c := s.cells.cell(req.Key)
		if !s.cells.admit(c, req.Token, true) {
			s.late.Write(clientName(n, m), req, true, !n.Awaited(m), m.Sent, n.World().Now())
			n.Reply(m, Reply{Rejected: true, Highest: c.highest})
			return
		}
		c.value = req.Value
		s.applied(n, m, req)
		n.Reply(m, c.valueBody())
	default:
		panic(fmt.Sprintf("storage: unexpected message %T", m.Body))
	}
}

// checkedWrite asks the lock service whether the writer's token is current,
// then writes (or rejects the write) when the answer comes.
func (s *Server) checkedWrite(n *sim.Node, p *sim.Proc, m sim.Message, req WriteReq) {
	if s.Options.Checker == nil {
		panic("storage: check mode without a checker")
	}
	current, err := s.Options.Checker(p, req.Key, req.Token)
	if err != nil || !current {
		s.late.Write(clientName(n, m), req, true, !n.Awaited(m), m.Sent, n.World().Now())
		n.Reply(m, Reply{Rejected: true})
		return
	}
	c := s.cells.cell(req.Key)
	c.value = req.Value
	s.applied(n, m, req)
	n.Reply(m, c.valueBody())
}

// applied records the write req of m, just applied, in the write log and,
// when its client had given up on it, in the record of late writes.
func (s *Server) applied(n *sim.Node, m sim.Message, req WriteReq) {
	s.late.Write(clientName(n, m), req, false, !n.Awaited(m), m.Sent, n.World().Now())
	if s.Options.Writes.Recording() {
		s.Options.Writes.Applied(Resource, n.Name(), req.Key, clientName(n, m), m.ID, req.Token, req.Value, n.World().Now(), true)
	}
}

// clientName is the name of the node that sent m.
func clientName(n *sim.Node, m sim.Message) string {
	return n.World().Nodes()[m.From].Name()
}

// LateWrites are the writes that reached the storage after their client
// had given up on them (its call timed out, or it crashed), in the order
// they landed, as the live storage records them.
func (s *Server) LateWrites() []LateWrite { return s.late.Writes() }

// Value returns the current value of key (for tests and reports).
func (s *Server) Value(key string) int64 {
	return s.cells.Value(key)
}

// Client is the storage client a workload process uses.
type Client struct {
	P       *sim.Proc
	Server  sim.NodeID
	Timeout time.Duration
}

// DefaultTimeout is the client's request timeout when Client.Timeout is zero.
const DefaultTimeout = 500 * time.Millisecond

var _ lockapi.Storage = (*Client)(nil)

// Read returns the value of key.
func (c *Client) Read(key string, token uint64) (int64, error) {
	return Do(c.call, ReadReq{Key: key, Token: token})
}

// Write sets key to value.
func (c *Client) Write(key string, value int64, token uint64) error {
	_, err := Do(c.call, WriteReq{Key: key, Value: value, Token: token})
	return err
}

func (c *Client) call(req any) (Reply, error) {
	timeout := c.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	r, err := c.P.Call(c.Server, req, timeout)
	if err != nil {
		return Reply{}, err
	}
	return r.(Reply), nil
}

// Do sends req (a ReadReq or a WriteReq) by call, a storage client's
// transport, and returns the value read or written, or the error a
// lockapi.Storage returns: lockapi.ErrUnknown when no reply came,
// lockapi.ErrRejected when the storage fenced the token off.
func Do(call func(req any) (Reply, error), req any) (int64, error) {
	op, key, token := "read", "", uint64(0)
	switch r := req.(type) {
	case ReadReq:
		key, token = r.Key, r.Token
	case WriteReq:
		op, key, token = "write", r.Key, r.Token
	}
	r, err := call(req)
	if err != nil {
		return 0, fmt.Errorf("storage: %w: %w", lockapi.ErrUnknown, err)
	}
	if r.Rejected {
		return 0, fmt.Errorf("storage: %s %s with token %d (highest %d): %w", op, key, token, r.Highest, lockapi.ErrRejected)
	}
	return r.Value, nil
}

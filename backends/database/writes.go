package database

import (
	"strings"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// WritesResource is the name of the database's data rows in a lockapi.WriteLog.
const WritesResource = "database"

// RecordWrites makes the server record in log every write of a data row it
// applies and every read of one it serves, in true time, keyed by the row's
// name without its "data/" prefix (the key of the history): an autocommit
// write (optimistic, or unique-row and advisory with resource=db) is
// committed when it is applied; a write inside a transaction is applied
// uncommitted when the server takes it into the transaction and committed
// (lockapi.WriteLog.Commit) when the transaction commits, or never, when
// it is rolled back, aborted by the server, lost in a crash, or superseded
// by a later write of the same row in the same transaction. A read that
// returns the transaction's own uncommitted write derives from what that
// write derived from (lockapi.WriteLog.ReadOwn). The record is the ground
// truth of a simulated run; it changes nothing of the run.
func (s *Server) RecordWrites(log *lockapi.WriteLog) { s.writes = log }

// dataKey is the history's key of a data row ("data/<key>").
func dataKey(row string) string { return strings.TrimPrefix(row, "data/") }

// readServed records the read of row req served to c (m is its request),
// which returned value: the transaction's own write when own.
func (s *Server) readServed(c *conn, req Req, m sim.Message, value int64) {
	if !s.writes.Recording() {
		return
	}
	if c.txn != nil {
		if i, own := c.txn.recorded[req.Key]; own {
			s.writes.ReadOwn(WritesResource, dataKey(req.Key), s.clientOf(m), value, s.now(), i)
			return
		}
	}
	s.writes.Read(WritesResource, dataKey(req.Key), s.clientOf(m), value, s.now())
}

// writeApplied records the write req of c (m is its request), just
// applied: committed when c has no transaction open, otherwise pending the
// transaction's commit (committed).
func (s *Server) writeApplied(c *conn, req Req, m sim.Message) {
	if !s.writes.Recording() {
		return
	}
	i := s.writes.Applied(WritesResource, s.node.Name(), dataKey(req.Key), s.clientOf(m), m.ID, req.Token, req.Value,
		s.now(), c.txn == nil)
	if c.txn != nil {
		if c.txn.recorded == nil {
			c.txn.recorded = map[string]int{}
		}
		c.txn.recorded[req.Key] = i // a write of the row before it is superseded: never committed
	}
}

// committed records that c's transaction committed its write of row.
func (s *Server) committed(c *conn, row string) {
	if i, ok := c.txn.recorded[row]; ok {
		s.writes.Commit(i, s.now())
	}
}

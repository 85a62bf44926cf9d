package database

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// TestTheServersRecordOfWrites: the server records each write of a data row
// it applies: an autocommit write committed at once; a write in a
// transaction committed when its transaction commits, never when it is
// rolled back, aborted for a silent connection, lost in a crash or
// superseded by a later write of the row in the same transaction; a read of
// the transaction's own write derives from what that write derived from.
// Two transactions that read the same value and both commit are a lost
// update in the record.
func TestTheServersRecordOfWrites(t *testing.T) {
	type op struct {
		at     time.Duration
		client string
		op     OpType
		value  int64
	}
	o := func(at time.Duration, client string, typ OpType, value ...int64) op {
		x := op{at: at, client: client, op: typ}
		if len(value) > 0 {
			x.value = value[0]
		}
		return x
	}
	ms := time.Millisecond
	tests := []struct {
		name   string
		ops    []op
		faults func(w *sim.World, db *sim.Node)
		// writes are the record's writes (client=value, committed when
		// applied, later or never), lost its lost updates (the overwriting
		// write's client and value).
		writes, lost []string
	}{
		{"autocommit: committed when applied", []op{o(10*ms, "c1", OpRead), o(20*ms, "c1", OpWrite, 1),
			o(30*ms, "c2", OpRead), o(40*ms, "c2", OpWrite, 2)}, nil,
			[]string{"c1=1 committed", "c2=2 committed"}, nil},
		{"a transaction's write commits at its commit", []op{o(10*ms, "c1", OpBegin), o(20*ms, "c1", OpRead),
			o(30*ms, "c1", OpWrite, 1), o(500*ms, "c1", OpCommit)}, nil,
			[]string{"c1=1 committed 470ms later"}, nil},
		{"rolled back: never committed", []op{o(10*ms, "c1", OpBegin), o(20*ms, "c1", OpRead),
			o(30*ms, "c1", OpWrite, 1), o(40*ms, "c1", OpRollback), o(50*ms, "c1", OpCommit)}, nil,
			[]string{"c1=1 never committed"}, nil},
		{"aborted for a silent connection: never committed", []op{o(10*ms, "c1", OpBegin), o(30*ms, "c1", OpWrite, 1),
			o(7*time.Second, "c1", OpCommit)}, nil,
			[]string{"c1=1 never committed"}, nil},
		{"lost in a crash: never committed", []op{o(10*ms, "c1", OpBegin), o(30*ms, "c1", OpWrite, 1),
			o(2*time.Second, "c1", OpCommit)}, func(w *sim.World, db *sim.Node) {
			w.At(time.Second, db.Crash)
			w.At(1500*ms, db.Restart)
		}, []string{"c1=1 never committed"}, nil},
		{"superseded in its transaction; a read of its own write derives from its read", []op{o(10*ms, "c1", OpBegin),
			o(20*ms, "c1", OpRead), o(30*ms, "c1", OpWrite, 1), o(40*ms, "c1", OpRead), o(50*ms, "c1", OpWrite, 2),
			o(60*ms, "c1", OpCommit), o(70*ms, "c2", OpRead), o(80*ms, "c2", OpWrite, 3)}, nil,
			[]string{"c1=1 never committed", "c1=2 committed 10ms later", "c2=3 committed"}, nil},
		{"a commit between a transaction's read and its commit: a lost update", []op{o(10*ms, "c1", OpBegin),
			o(20*ms, "c1", OpRead), o(30*ms, "c1", OpWrite, 1), o(40*ms, "c2", OpBegin), o(50*ms, "c2", OpRead),
			o(60*ms, "c2", OpWrite, 1), o(70*ms, "c2", OpCommit), o(80*ms, "c1", OpCommit)}, nil,
			[]string{"c1=1 committed 50ms later", "c2=1 committed 10ms later"}, []string{"c1=1"}},
		{"a read of its own write after another commit: still a lost update", []op{o(10*ms, "c1", OpBegin),
			o(20*ms, "c1", OpRead), o(30*ms, "c1", OpWrite, 1), o(40*ms, "c2", OpRead), o(50*ms, "c2", OpWrite, 1),
			o(60*ms, "c1", OpRead), o(70*ms, "c1", OpWrite, 2), o(80*ms, "c1", OpCommit)}, nil,
			[]string{"c1=1 never committed", "c2=1 committed", "c1=2 committed 10ms later"}, []string{"c1=2"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w, db, srv, _ := setup(t, "mode", "for-update", "resource", "db")
			log := lockapi.NewWriteLog()
			log.Record(true)
			srv.RecordWrites(log)
			for _, name := range []string{"c1", "c2"} {
				w.AddNode(name, sim.NodeOptions{Handler: sim.Program(func(p *sim.Proc) {
					for _, x := range tc.ops {
						if x.client != name {
							continue
						}
						p.Sleep(x.at - p.World().Now())
						_, _ = p.Call(db.ID(), Req{Conn: name + "/1", Op: x.op, Key: "data/k", Value: x.value, IfVersion: -1,
							Token: 7}, time.Second)
					}
				})})
			}
			if tc.faults != nil {
				tc.faults(w, db)
			}
			w.Run(10 * time.Second)
			var writes, lost []string
			for _, x := range log.Writes() {
				state := "never committed"
				switch {
				case x.Committed && x.CommittedAt == x.At:
					state = "committed"
				case x.Committed:
					state = fmt.Sprintf("committed %v later", (x.CommittedAt - x.At).Round(10*ms))
				}
				writes = append(writes, fmt.Sprintf("%s=%d %s", x.Client, x.Value, state))
				require.Equal(t, "k", x.Key, "the history's key")
				require.Equal(t, uint64(7), x.Token)
			}
			for _, u := range log.LostUpdates() {
				lost = append(lost, fmt.Sprintf("%s=%d", u.By.Client, u.By.Value))
			}
			assert.Equal(t, tc.writes, writes)
			assert.Equal(t, tc.lost, lost)
		})
	}
}

package harness

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// raftTracesFile holds the SHA-256 of the message trace of each case of
// TestRaftTracesAreUnchanged: recorded before the raft hot path was
// optimised, and recorded again (same runs, on etcd raft v3.7.0) when the
// trace moved from protobuf's wire encoding of raft messages to their
// canonical text, which does not depend on the protobuf library.
var raftTraceGolden = golden{file: "raft_trace_hashes.txt", header: []string{
	"SHA-256 of the message trace and history of each case of TestRaftTracesAreUnchanged (harness).",
	"Rewrite with: go test ./harness -run TestRaftTracesAreUnchanged -update-hashes",
}}

// raftTraceCases are the runs the systems built on raft declare traced
// (System.Recorded with Trace): random faults and single fault families.
func raftTraceCases() []guardCase { return recordedCases(true) }

// raftTrace runs the simulation of tc and returns every message the network
// was given (send time, sender, receiver, and the body: raft messages in
// their canonical text, appendRaftMessage, other bodies as %+v), then the
// history.
func raftTrace(t testing.TB, tc scenario.Test) []byte {
	t.Helper()
	p, err := Prepare(tc)
	require.NoError(t, err)
	var b bytes.Buffer
	world := p.World
	world.Network().AddRule(sim.Rule{Match: func(m sim.Message) bool {
		fmt.Fprintf(&b, "%d %d %d>%d %d ", world.Now(), m.ID, m.From, m.To, m.ReplyTo)
		rm, ok := raftMessageOf(m.Body)
		if !ok {
			fmt.Fprintf(&b, "%T %+v\n", m.Body, m.Body)
			return false
		}
		b.Write(appendRaftMessage(nil, raftFieldsOf(rm)))
		b.WriteByte('\n')
		return false // observe only: the rule never applies
	}})
	require.NoError(t, p.simulate(Watch{}))
	p.World.Close()
	require.NoError(t, history.Write(&b, p.Log.Events()))
	return b.Bytes()
}

// TestRaftTracesAreUnchanged guards the optimisations of the raft hot path
// (backends/raftnode, backends/raftkv) more tightly than the history hashes:
// every message the raft-based systems send, with its time and content, is
// what it was before (backends/<system>/testdata/raft_trace_hashes.txt). Rewrite the file with
// -update-hashes only after a deliberate behaviour change.
func TestRaftTracesAreUnchanged(t *testing.T) {
	cases := raftTraceCases()
	got := map[string]string{}
	var names []string
	for _, c := range cases {
		tr := raftTrace(t, c.test)
		require.Greater(t, bytes.Count(tr, []byte("\n")), 1000, c.name)
		sum := sha256.Sum256(tr)
		got[c.name] = hex.EncodeToString(sum[:])
		names = append(names, c.name)
	}
	if *updateHashes {
		systemOf := map[string]string{}
		for _, c := range cases {
			systemOf[c.name] = c.test.System
		}
		raftTraceGolden.write(t, got, systemOf)
		return
	}
	want, _ := raftTraceGolden.read(t)
	require.Len(t, want, len(names), "the recorded cases are the cases")
	for _, n := range names {
		assert.Equal(t, want[n], got[n], "%s: the messages or the history changed", n)
	}
}

// TestRaftTraceIsDeterministic: the trace's premise — the same run gives the
// same trace — holds for every system it covers.
func TestRaftTraceIsDeterministic(t *testing.T) {
	for _, s := range raftSystems() {
		tc := scenario.Test{System: s, Nemesis: "random", Seed: 1, Time: 10 * time.Second}
		assert.Equal(t, raftTrace(t, tc), raftTrace(t, tc), s)
	}
}

// TestOutboundMessagesAreNeverWritten proves what raftnode.Outbound relies on
// to share raft messages' entries between nodes instead of copying them:
// over whole runs of every raft-based system under random faults, on a
// network that duplicates and reorders messages, each message sent still
// reads as the text it read as when it was sent, entries included.
func TestOutboundMessagesAreNeverWritten(t *testing.T) {
	for _, s := range raftSystems() {
		t.Run(s, func(t *testing.T) {
			p, err := Prepare(scenario.Test{System: s, Nemesis: "random", Seed: 3, Time: 30 * time.Second})
			require.NoError(t, err)
			link := sim.DefaultLink
			link.Duplicate, link.Reorder, link.ReorderDelay = 0.05, 0.05, 5*time.Millisecond
			p.World.Network().SetDefaultLink(link)
			type sent struct {
				m   raftMessage
				enc []byte
			}
			var all []sent
			encode := func(m raftMessage) []byte { return appendRaftMessage(nil, raftFieldsOf(m)) }
			p.World.Network().AddRule(sim.Rule{Match: func(m sim.Message) bool {
				if rm, ok := raftMessageOf(m.Body); ok {
					all = append(all, sent{rm, encode(rm)})
				}
				return false
			}})
			require.NoError(t, p.simulate(Watch{}))
			p.World.Close()
			require.Greater(t, len(all), 1000)
			entries := 0
			for i, x := range all {
				f := raftFieldsOf(x.m)
				entries += len(f.entries)
				require.Equal(t, string(x.enc), string(encode(x.m)), "message %d (%s) was written to after it was sent", i, f.typ)
			}
			assert.Positive(t, entries, "the messages carried entries")
			assert.Positive(t, p.World.Network().Stats().Duplicated, "some messages were delivered twice")
		})
	}
}

// raftMessage is what the raft-based systems' message bodies hold: a message
// of its own, which the test keeps to read again at the end of the run.
type raftMessage = *pb.Message

// raftMessageOf is the raft message a body carries, if it carries one: a
// system built on raft wraps each raft message in a struct of its own whose
// field M holds it (raftkv.RaftMessage, etcd.RaftMessage, ...).
func raftMessageOf(body any) (raftMessage, bool) {
	v := reflect.ValueOf(body)
	if v.Kind() != reflect.Struct {
		return nil, false
	}
	f := v.FieldByName("M")
	if !f.IsValid() || !f.CanInterface() {
		return nil, false
	}
	m, ok := f.Interface().(raftMessage)
	return m, ok
}

// raftSystems are the registered systems that declare traced runs (built
// on raft), in name order.
func raftSystems() []string {
	var out []string
	for _, s := range system.All() {
		if slices.ContainsFunc(s.Recorded, func(r system.Recorded) bool { return r.Trace }) {
			out = append(out, s.Name)
		}
	}
	return out
}

// raftFields are the fields of a raft message the traces record, as plain
// values: a field that is absent and one that holds its zero value read the
// same, whichever protobuf library the raft messages are generated with.
type raftFields struct {
	typ                                                      string
	to, from, term, logTerm, index, commit, vote, rejectHint uint64
	reject                                                   bool
	context                                                  []byte
	entries                                                  []raftEntry
	snapshot                                                 bool // a snapshot with a non-zero index, term or data
	snapshotIndex, snapshotTerm                              uint64
	snapshotData                                             []byte
	responses                                                []raftFields
}

// raftEntry is a log entry's fields as plain values.
type raftEntry struct {
	term, index uint64
	typ         int32
	data        []byte
}

// raftFieldsOf reads m's fields: the one place the traces depend on how the
// raft library represents a message.
func raftFieldsOf(m raftMessage) raftFields {
	f := raftFields{
		typ: pb.MessageType_name[int32(m.Type)], to: m.To, from: m.From, term: m.Term,
		logTerm: m.LogTerm, index: m.Index, commit: m.Commit, vote: m.Vote,
		rejectHint: m.RejectHint, reject: m.Reject, context: m.Context,
	}
	for _, e := range m.Entries {
		f.entries = append(f.entries, raftEntry{term: e.Term, index: e.Index, typ: int32(e.Type), data: e.Data})
	}
	if s := m.Snapshot; s != nil {
		f.snapshotIndex, f.snapshotTerm, f.snapshotData = s.Metadata.Index, s.Metadata.Term, s.Data
		f.snapshot = f.snapshotIndex != 0 || f.snapshotTerm != 0 || len(f.snapshotData) > 0
	}
	for i := range m.Responses {
		f.responses = append(f.responses, raftFieldsOf(&m.Responses[i]))
	}
	return f
}

// appendRaftMessage appends the canonical text of a raft message's fields to
// b: every field, zero or not, in a fixed order, bytes in hex.
func appendRaftMessage(b []byte, f raftFields) []byte {
	b = fmt.Appendf(b, "%s to=%d from=%d term=%d logTerm=%d index=%d commit=%d vote=%d reject=%t rejectHint=%d ctx=%x",
		f.typ, f.to, f.from, f.term, f.logTerm, f.index, f.commit, f.vote, f.reject, f.rejectHint, f.context)
	b = fmt.Appendf(b, " entries=%d", len(f.entries))
	for _, e := range f.entries {
		b = fmt.Appendf(b, " [%d %d %d %x]", e.term, e.index, e.typ, e.data)
	}
	if f.snapshot {
		b = fmt.Appendf(b, " snapshot=[%d %d %x]", f.snapshotIndex, f.snapshotTerm, f.snapshotData)
	}
	if len(f.responses) > 0 {
		b = fmt.Appendf(b, " responses=%d", len(f.responses))
		for _, r := range f.responses {
			b = append(b, " {"...)
			b = appendRaftMessage(b, r)
			b = append(b, '}')
		}
	}
	return b
}

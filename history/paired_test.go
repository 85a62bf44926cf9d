package history

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomHistory draws a history of n events that is not always well formed:
// processes invoke twice, complete without an invoke, fill in node, key and
// owner on either event or both (sometimes differently), and the nemesis
// interleaves faults; a third of the operations' events carry a deadline,
// a third a token.
func randomHistory(r *rand.Rand, n int) []Event {
	pick := func(vals ...string) string { return vals[r.IntN(len(vals))] }
	var out []Event
	for i := range n {
		e := Event{Index: i, Time: int64(i), Process: r.IntN(6) - 1}
		if e.Process == NemesisProcess {
			e.Type, e.F, e.Targets = Type(pick("start", "stop")), pick("pause", "partition"), []string{pick("a", "b")}
		} else {
			e.Type = Type(pick("invoke", "invoke", "ok", "fail", "info"))
			e.F = pick(FAcquire, FRelease, FRead, FWrite, FRenew, FAppend, "cas")
			e.Node, e.Key, e.Owner = pick("", "c1", "c2"), pick("", "", "k", "j"), pick("", "", "o1", "o2")
			if r.IntN(3) == 0 {
				e.Deadline = Ptr(int64(i + r.IntN(50)))
			}
			if r.IntN(3) == 0 {
				e.Token = Ptr(uint64(i))
			}
		}
		out = append(out, e)
	}
	return out
}

// TestPairIsCompleteAndOperations: Pair pairs like Operations and completes
// like Complete (the same events, the same first mismatch), and
// PairRecorded pairs the events as recorded.
func TestPairIsCompleteAndOperations(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fills, errs := 0, 0
	for i := range 3000 {
		events := randomHistory(r, r.IntN(40))
		name := fmt.Sprintf("history %d", i)
		recorded := PairRecorded(events)
		assertPairs(t, Operations(events), recorded, name+" recorded")
		assert.Equal(t, events, recorded.Events(), name)

		want, wantErr := Complete(events)
		p, err := Pair(events)
		if wantErr != nil {
			errs++
			require.Error(t, err, name)
			assert.Equal(t, wantErr.Error(), err.Error(), name)
			continue
		}
		require.NoError(t, err, name)
		if len(events) > 0 && &want[0] != &events[0] {
			fills++
		}
		assert.Equal(t, want, p.Events(), name)
		for j := range want {
			assert.Equal(t, want[j], *p.At(j), "%s event %d", name, j)
		}
		assertPairs(t, Operations(want), p, name)
		assert.Equal(t, FaultWindows(want), p.Faults(), name)
		assertScanned(t, events, p, name)
		assertScanned(t, events, recorded, name+" recorded")
	}
	assert.Greater(t, fills, 100, "histories with fields filled in")
	assert.Greater(t, errs, 100, "histories with mismatches")
}

func assertPairs(t *testing.T, want []Operation, p *Paired, name string) {
	t.Helper()
	require.Len(t, p.Ops(), len(want), name)
	for k, o := range p.Ops() {
		assert.Equal(t, want[k], o.Operation(), "%s op %d", name, k)
		assert.Equal(t, want[k].Outcome(), o.Outcome(), "%s op %d", name, k)
		assert.Equal(t, want[k].Invoke.F, o.Func(), "%s op %d", name, k)
		assert.Equal(t, want[k].ReturnIndex(), o.ReturnIndex(), "%s op %d", name, k)
	}
	counts := map[string]int{}
	for _, o := range want {
		counts[o.Invoke.F]++
	}
	for _, f := range []string{FAcquire, FRelease, FRenew, FRead, FWrite, FAppend, "unheard-of"} {
		assert.Equal(t, counts[f], p.OpsOf(f), "%s: operations of %s", name, f)
	}
}

// TestPairedOpBuiltByHandReadsItsEvents: an operation the pairing did not
// make (a test's, a tool's) has nothing noted, and its function and outcome
// are read from its events, as the pairing would have noted them.
func TestPairedOpBuiltByHandReadsItsEvents(t *testing.T) {
	inv := Event{Type: Invoke, F: FWrite}
	tests := []struct {
		name    string
		op      PairedOp
		f       string
		outcome Type
		ret     int64
	}{
		{"completed ok", PairedOp{Invoke: &inv, Completion: &Event{Index: 3, Type: OK, F: FWrite}}, FWrite, OK, 3},
		{"failed", PairedOp{Invoke: &inv, Completion: &Event{Index: 4, Type: Fail, F: FWrite}}, FWrite, Fail, 4},
		{"never completed", PairedOp{Invoke: &inv}, FWrite, Info, math.MaxInt64},
		{"a function of its own", PairedOp{Invoke: &Event{Type: Invoke, F: "cas"}, Completion: &Event{Index: 5, Type: Info}}, "cas", Info, math.MaxInt64},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.f, tc.op.Func())
			assert.Equal(t, tc.outcome, tc.op.Outcome())
			assert.Equal(t, tc.ret, tc.op.ReturnIndex())
		})
	}
}

// TestPairSharesTheRecordedEvents: a history with nothing to fill in is not
// copied, and the recorded events are never written.
func TestPairSharesTheRecordedEvents(t *testing.T) {
	events := []Event{
		{Index: 0, Process: 0, Node: "c1", Type: Invoke, F: FAcquire, Key: "k", Owner: "o"},
		{Index: 1, Process: 0, Node: "c1", Type: OK, F: FAcquire, Key: "k", Owner: "o"},
		{Index: 2, Process: 0, Node: "c1", Type: Invoke, F: FRelease, Key: "k"},
		{Index: 3, Process: 0, Node: "c1", Type: OK, F: FRelease, Key: "k", Owner: "o"},
	}
	p, err := Pair(events[:2])
	require.NoError(t, err)
	assert.Same(t, &events[0], &p.Events()[0], "nothing filled in: the recorded events")
	assert.Same(t, &events[1], p.Ops()[0].Completion)

	p, err = Pair(events)
	require.NoError(t, err)
	assert.Equal(t, "o", p.At(2).Owner, "the release's invoke gets its completion's owner")
	assert.Empty(t, events[2].Owner, "the recorded event is left as it is")
	assert.Same(t, &events[0], p.At(0), "events that gain nothing are shared")
	assert.Equal(t, int64(0), p.End())
}

// TestGrantsCountsTheAcquiresThatCompletedOK: Grants counts the acquire
// operations whose completion is ok, whichever event names the function.
func TestGrantsCountsTheAcquiresThatCompletedOK(t *testing.T) {
	events := []Event{
		{Index: 0, Process: 0, Type: Invoke, F: FAcquire},
		{Index: 1, Process: 1, Type: Invoke, F: FAcquire},
		{Index: 2, Process: 0, Type: OK, F: FAcquire},
		{Index: 3, Process: 1, Type: Fail, F: FAcquire},
		{Index: 4, Process: 2, Type: Invoke, F: FAcquire},
		{Index: 5, Process: 2, Type: Info, F: FAcquire},
		{Index: 6, Process: 0, Type: Invoke, F: FRelease},
		{Index: 7, Process: 0, Type: OK, F: FRelease},
		{Index: 8, Process: 1, Type: Invoke, F: FAcquire},
		{Index: 9, Process: 1, Type: OK},
		{Index: 10, Process: 3, Type: OK, F: FAcquire}, // no invocation: no operation
	}
	p, err := Pair(events)
	require.NoError(t, err)
	assert.Equal(t, 2, p.Grants())
	assert.Equal(t, 2, PairRecorded(events).Grants())
}

// TestPairEventsCompletesAsPairDoes: PairEvents completes every event as Pair
// does, counts the same grants and reports the same mismatch, without the
// operations.
func TestPairEventsCompletesAsPairDoes(t *testing.T) {
	events := []Event{
		{Index: 0, Process: 0, Type: Invoke, F: FAcquire, Key: "k", Owner: "o1"},
		{Index: 1, Process: 1, Type: Invoke, F: FAcquire, Key: "k", Owner: "o2"},
		{Index: 2, Process: 0, Type: OK, F: FAcquire, Node: "c1"},
		{Index: 3, Process: 1, Type: Fail, F: FAcquire},
		{Index: 4, Process: 0, Type: Invoke, F: FRelease},
		{Index: 5, Process: 0, Type: OK, F: FRelease, Key: "k", Owner: "o1"},
	}
	want, err := Pair(events)
	require.NoError(t, err)
	got, err := PairEvents(events)
	require.NoError(t, err)
	assert.Equal(t, want.Events(), got.Events())
	for i := range events {
		assert.Equal(t, *want.At(i), *got.At(i))
	}
	assert.Equal(t, want.Grants(), got.Grants())
	assert.Empty(t, got.Ops())
	assert.Len(t, want.Ops(), 3)

	bad := append(slices.Clone(events), Event{Index: 6, Process: 1, Type: Invoke, F: FAcquire, Key: "k"},
		Event{Index: 7, Process: 1, Type: OK, F: FAcquire, Key: "other"})
	_, wantErr := Pair(bad)
	_, gotErr := PairEvents(bad)
	require.Error(t, wantErr)
	assert.Equal(t, wantErr, gotErr)
}

// TestLogPairIsPairInTheLogsMemory: a log's pairing is Pair of its events,
// in memory that goes, with the log's storage, to the next log: history
// after history, none of the earlier pairings shows through.
func TestLogPairIsPairInTheLogsMemory(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	reused := 0
	for i := range 500 {
		l := NewLog()
		mem := l.logBuffers
		if cap(mem.pair.ops) > 0 {
			reused++
		}
		for _, e := range randomHistory(r, r.IntN(40)) {
			l.Append(e)
		}
		events := l.Events()
		name := fmt.Sprintf("history %d", i)
		want, wantErr := Pair(slices.Clone(events))
		got, err := l.Pair()
		if wantErr != nil {
			require.Error(t, err, name)
			assert.Equal(t, wantErr.Error(), err.Error(), name)
			l.Release()
			continue
		}
		require.NoError(t, err, name)
		for j := range events {
			assert.Equal(t, *want.At(j), *got.At(j), "%s event %d", name, j)
		}
		require.Len(t, got.Ops(), len(want.Ops()), name)
		for k := range want.Ops() {
			assert.Equal(t, want.Ops()[k].Operation(), got.Ops()[k].Operation(), "%s op %d", name, k)
		}
		assert.Equal(t, want.Grants(), got.Grants(), name)
		l.Release()
	}
	assert.Greater(t, reused, 400, "logs that paired in an earlier log's memory")
}

// assertScanned holds what pairing notes on the way (the start and stop
// events, the acquires that returned ok and their leases) to a scan of the
// events.
func assertScanned(t *testing.T, events []Event, p *Paired, name string) {
	t.Helper()
	marks := []int32{}
	var want Acquires
	for i, e := range events {
		if e.Type == Start || e.Type == Stop {
			marks = append(marks, int32(i))
		}
		if e.Type == OK && e.F == FAcquire {
			want.OK++
			if e.Deadline != nil {
				want.Leased++
				want.LongestLease = max(want.LongestLease, time.Duration(*e.Deadline-e.Time))
			}
			if e.Token != nil {
				want.Tokened++
			}
		}
	}
	assert.Equal(t, marks, p.Marks(), name)
	assert.Equal(t, want, p.Acquired(), name)
}

package history

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type fakeClock struct{ now, local time.Duration }

func (c *fakeClock) Now() time.Duration                       { return c.now }
func (c *fakeClock) Local() time.Duration                     { return c.local }
func (c *fakeClock) TrueAt(local time.Duration) time.Duration { return c.now + (local - c.local) }

func TestRecorderPairsOperationsAndRetiresAfterInfo(t *testing.T) {
	log := NewLog()
	clk := &fakeClock{now: time.Second, local: 2 * time.Second}
	rec := log.NewRecorder("c1", clk)
	op := rec.Invoke(Event{F: FAcquire, Key: "k"})
	clk.now += time.Millisecond
	clk.local += time.Millisecond
	done := op.Complete(OK, Event{Owner: "o1", Token: Ptr(uint64(3)), Deadline: rec.Deadline(clk.local + 10*time.Second)})
	assert.Equal(t, int64(time.Second+time.Millisecond+10*time.Second), *done.Deadline)
	assert.Equal(t, "k", done.Key)
	assert.Equal(t, 0, rec.Process())

	rec.Invoke(Event{F: FWrite, Key: "k", Value: Ptr(int64(1))}).Complete(Info, Event{Detail: "timeout"})
	assert.Equal(t, 1, rec.Process(), "an info completion retires the process")
	assert.Equal(t, 2, rec.Sibling().Process())

	require.NoError(t, Validate(log.Events()))
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, log.Events()))
	back, err := Read(&buf, "mem")
	require.NoError(t, err)
	assert.Equal(t, log.Events(), back)
}

func TestObserversSeeEveryEvent(t *testing.T) {
	log := NewLog()
	var seen []string
	log.Observe(func(e Event) { seen = append(seen, string(e.Type)+" "+e.F) })
	rec := log.NewRecorder("c1", &fakeClock{})
	rec.Invoke(Event{F: FAcquire}).Complete(Fail, Event{})
	assert.Equal(t, []string{"invoke acquire", "fail acquire"}, seen)
}

func TestRecorderRefusesTwoOpenOperations(t *testing.T) {
	rec := NewLog().NewRecorder("c1", &fakeClock{})
	rec.Invoke(Event{F: FRead})
	assert.Panics(t, func() { rec.Invoke(Event{F: FWrite}) })
}

func TestReadRejectsMalformedInputWithFileAndLine(t *testing.T) {
	const hdr = `{"format":"locklab-history","version":1}` + "\n"
	const inv = `{"index":0,"time":5,"process":0,"type":"invoke","f":"acquire","key":"k"}` + "\n"
	tests := []struct {
		name, input string
		line        int
		reason      string
	}{
		{"not json", hdr + "hello\n", 2, "not a JSON event"},
		{"truncated object", `{"time":1,"process":0`, 1, "not a JSON event"},
		{"missing time", `{"process":0,"type":"invoke","f":"read"}`, 1, `missing field "time"`},
		{"missing f", `{"time":0,"process":0,"type":"invoke"}`, 1, `missing field "f"`},
		{"unknown field", `{"time":0,"process":0,"type":"invoke","f":"read","colour":"red"}`, 1, `unknown field "colour"`},
		{"wrong type", `{"time":"soon","process":0,"type":"invoke","f":"read"}`, 1, `field "time"`},
		{"unknown type", `{"time":0,"process":0,"type":"maybe","f":"read"}`, 1, `unknown type "maybe"`},
		{"time goes back", inv + `{"index":1,"time":4,"process":0,"type":"ok","f":"acquire"}`, 2, "earlier than the previous"},
		{"index gap", inv + `{"index":5,"time":6,"process":0,"type":"ok","f":"acquire"}`, 2, "out of sequence"},
		{"completion without invoke", `{"time":0,"process":3,"type":"ok","f":"read"}`, 1, "without a preceding invoke"},
		{"mismatched completion", inv + `{"time":6,"process":0,"type":"ok","f":"release"}`, 2, "does not match its invoke acquire"},
		{"double invoke", inv + `{"time":6,"process":0,"type":"invoke","f":"read"}`, 2, "still open"},
		{"continues after info", inv + `{"time":6,"process":0,"type":"info","f":"acquire"}` + "\n" + `{"time":7,"process":0,"type":"invoke","f":"read"}`, 3, "after an info completion"},
		{"nemesis with a process", `{"time":0,"process":2,"type":"start","f":"pause"}`, 1, "must be -1"},
		{"negative process op", `{"time":0,"process":-1,"type":"invoke","f":"read"}`, 1, "negative process"},
		{"future version", `{"format":"locklab-history","version":9}`, 1, "version 9 is not supported"},
		{"wrong format", `{"format":"jepsen","version":1}`, 1, `header format "jepsen"`},
		{"field name in another case", `{"Time":0,"process":0,"type":"invoke","f":"read"}`, 1, `field "Time": field names are lower case ("time")`},
		{"required field null", `{"time":null,"process":0,"type":"invoke","f":"read"}`, 1, `missing field "time"`},
		{"array instead of an object", `[1,2]`, 1, "not a JSON event"},
		{"escaped unknown field", `{"time":0,"process":0,"type":"invoke","f":"read","\u0063olour":1}`, 1, `unknown field "colour"`},
		{"field given twice", `{"time":0,"time":5,"process":0,"type":"invoke","f":"read"}`, 1, `field "time" appears twice`},
		{"header field in another case", `{"format":"locklab-history","Version":1}`, 1, `field names are lower case`},
		{"blank line inside", inv + "\n" + `{"time":6,"process":0,"type":"ok","f":"acquire"}`, 2, "blank line"},
		{"completion names another key", inv + `{"time":6,"process":0,"type":"ok","f":"acquire","key":"j"}`, 2, `key "j" of the completion differs from key "k" of its invoke (event 0)`},
		{"completion names another owner", `{"time":0,"process":0,"type":"invoke","f":"release","owner":"a1"}` + "\n" + `{"time":6,"process":0,"type":"ok","f":"release","owner":"b1"}`, 2, `owner "b1" of the completion differs`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.input), "h.jsonl")
			require.Error(t, err)
			var pe *ParseError
			require.True(t, errors.As(err, &pe), "want a ParseError, got %v", err)
			assert.Equal(t, "h.jsonl", pe.File)
			assert.Equal(t, tc.line, pe.Line)
			assert.Contains(t, pe.Reason, tc.reason)
			assert.True(t, strings.HasPrefix(err.Error(), "h.jsonl:"))
		})
	}
}

func TestReadAcceptsHandWrittenHistories(t *testing.T) {
	// No header, no indexes, trailing blank line: all fine.
	in := `{"time":0,"process":0,"node":"a","type":"invoke","f":"acquire","key":"k"}
{"time":10,"process":0,"node":"a","type":"ok","f":"acquire","key":"k","token":1}
{"time":11,"process":-1,"type":"start","f":"pause","targets":["a"]}
{"time":12,"process":0,"node":"a","type":"invoke","f":"write","key":"k","value":1,"token":1}

`
	evs, err := Read(strings.NewReader(in), "x")
	require.NoError(t, err)
	require.Len(t, evs, 4)
	assert.Equal(t, 3, evs[3].Index)
	assert.Equal(t, uint64(1), *evs[1].Token)
	assert.Equal(t, []string{"a"}, evs[2].Targets)
}

func TestLongLineIsRejected(t *testing.T) {
	in := `{"time":0,"process":0,"type":"invoke","f":"` + strings.Repeat("x", MaxLineBytes) + `"}`
	_, err := Read(strings.NewReader(in), "big")
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, pe.Reason, "longer than")
}

func TestListValuesRoundTrip(t *testing.T) {
	in := `{"time":0,"process":0,"type":"invoke","f":"read","key":"l"}
{"time":1,"process":0,"type":"ok","f":"read","key":"l","values":[]}
{"time":2,"process":0,"type":"invoke","f":"append","key":"l","value":7}
{"time":3,"process":0,"type":"ok","f":"append","key":"l","value":7}
{"time":4,"process":0,"type":"invoke","f":"read","key":"l"}
{"time":5,"process":0,"type":"ok","f":"read","key":"l","values":[7]}
`
	evs, err := Read(strings.NewReader(in), "list")
	require.NoError(t, err)
	require.NotNil(t, evs[1].Values, "an empty list read is not a missing one")
	assert.Empty(t, evs[1].Values)
	assert.Nil(t, evs[0].Values)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, evs))
	assert.Contains(t, buf.String(), `"values":[]`)
	back, err := Read(&buf, "again")
	require.NoError(t, err)
	assert.Equal(t, evs, back)
	assert.Contains(t, evs[5].String(), "values=[7]")
}

func TestWriteRefusesLinesReadWouldRefuse(t *testing.T) {
	// A detail of control characters is short on input but six times longer
	// once escaped; Write must not produce a line Read rejects.
	e := Event{Time: 0, Process: 0, Type: Invoke, F: FRead, Detail: strings.Repeat("\x01", MaxLineBytes/4)}
	var buf bytes.Buffer
	err := Write(&buf, []Event{e})
	require.ErrorIs(t, err, ErrLineTooLong)
	assert.NoError(t, Write(&buf, []Event{{Type: Invoke, F: FRead, Detail: "<ok & fine>"}}))
	assert.Contains(t, buf.String(), "<ok & fine>", "no HTML escaping")
}

// lineOf builds an event line of exactly n bytes by padding its detail.
func lineOf(t *testing.T, n int, prefix string) string {
	t.Helper()
	head := prefix + `"detail":"`
	line := head + strings.Repeat("x", n-len(head)-2) + `"}`
	require.Len(t, line, n)
	return line
}

// Read and Write share one line limit: whatever Read accepts, Write writes
// back, and Read reads the result again. A line that would grow past the
// limit when written back (its index added, U+2028 escaped) is refused by
// Read with its line, not by Write after the checks ran.
func TestReaderAndWriterAgreeOnTheLineLimit(t *testing.T) {
	const withIndex = `{"index":0,"time":0,"process":-1,"type":"start","f":"pause",`
	const noIndex = `{"time":0,"process":-1,"type":"start","f":"pause",`
	tests := []struct {
		name   string
		line   string
		reason string // empty: accepted, and it must round-trip
	}{
		{"exactly the limit", lineOf(t, MaxLineBytes, withIndex), ""},
		{"exactly the limit, CRLF", lineOf(t, MaxLineBytes, withIndex) + "\r", ""},
		{"just under the limit", lineOf(t, MaxLineBytes-1, withIndex), ""},
		{"one byte over", lineOf(t, MaxLineBytes+1, withIndex), "line longer than 1048576 bytes"},
		{"far over", lineOf(t, 3*MaxLineBytes, withIndex), "line longer than 1048576 bytes"},
		{"no index, 1,048,570 bytes: the index would not fit", lineOf(t, 1_048_570, noIndex),
			"the event takes 1048580 bytes when written back"},
		{"raw U+2028 is escaped when written", noIndex + `"detail":"` + strings.Repeat("\u2028", MaxLineBytes/4) + `"}`,
			"when written back"},
		{"escaped U+2028 stays as long", noIndex + `"detail":"` + strings.Repeat(`\u2028`, MaxLineBytes/7) + `"}`, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			evs, err := Read(strings.NewReader(tc.line+"\n"), "h.jsonl")
			if tc.reason != "" {
				var pe *ParseError
				require.ErrorAs(t, err, &pe)
				assert.Equal(t, 1, pe.Line)
				assert.Contains(t, pe.Reason, tc.reason)
				return
			}
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, Write(&buf, evs), "Write must write back what Read accepted")
			back, err := Read(&buf, "again")
			require.NoError(t, err)
			assert.Equal(t, evs, back)
		})
	}
}

// JSON text is UTF-8; encoding/json would quietly replace each invalid byte
// with U+FFFD (three bytes, six once escaped), so two different owners could
// read as one. Read refuses the line instead.
func TestReadRefusesInvalidUTF8WithFileAndLine(t *testing.T) {
	const ok = `{"time":1,"process":0,"type":"ok","f":"acquire","key":"k","owner":"c1-`
	in := `{"time":0,"process":0,"type":"invoke","f":"acquire","key":"k"}` + "\n" + ok + "\xff\xfe" + `"}` + "\n"
	_, err := Read(strings.NewReader(in), "h.jsonl")
	var pe *ParseError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, 2, pe.Line)
	assert.Equal(t, fmt.Sprintf("h.jsonl:2: not valid UTF-8 (byte %d of the line): a history is UTF-8 text", len(ok)+1), err.Error())
}

func FuzzRead(f *testing.F) {
	f.Add([]byte(`{"format":"locklab-history","version":1}` + "\n" + `{"index":0,"time":5,"process":0,"type":"invoke","f":"acquire","key":"k"}`))
	f.Add([]byte(`{"time":0,"process":-1,"type":"start","f":"pause","targets":["a"]}`))
	f.Add([]byte(`{"time":0,"process":0,"type":"invoke","f":"read"}` + "\n" + `{"time":1,"process":0,"type":"info","f":"read","value":3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs, err := Read(bytes.NewReader(data), "fuzz")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error is not a ParseError: %v", err)
			}
			return
		}
		// Whatever was accepted is valid, and survives a round trip.
		if err := Validate(evs); err != nil {
			t.Fatalf("accepted an invalid history: %v", err)
		}
		var buf bytes.Buffer
		if err := Write(&buf, evs); err != nil {
			t.Fatalf("Read accepted a history Write cannot write back: %v", err)
		}
		back, err := Read(&buf, "again")
		if err != nil {
			t.Fatalf("round trip failed: %v", err)
		}
		if !reflect.DeepEqual(back, evs) {
			t.Fatalf("round trip changed the history:\n%v\n%v", evs, back)
		}
		for _, e := range evs {
			_ = e.String()
		}
	})
}

func TestCompleteFillsIdentityFieldsFromEitherEvent(t *testing.T) {
	events := []Event{
		{Index: 0, Process: 0, Node: "c1", Type: Invoke, F: FAcquire, Key: "k", Owner: "c1-1"},
		{Index: 1, Process: 0, Type: OK, F: FAcquire},
		{Index: 2, Process: 0, Node: "c1", Type: Invoke, F: FRelease},
		{Index: 3, Process: 0, Node: "c1", Type: OK, F: FRelease, Key: "k", Owner: "c1-1"},
	}
	done, err := Complete(events)
	require.NoError(t, err)
	for _, e := range done {
		assert.Equal(t, "c1", e.Node, "event %d", e.Index)
		assert.Equal(t, "k", e.Key, "event %d", e.Index)
		assert.Equal(t, "c1-1", e.Owner, "event %d", e.Index)
	}
	assert.Empty(t, events[1].Key, "the input is not modified")

	events[1].Key = "j"
	_, err = Complete(events)
	var me *MismatchError
	require.ErrorAs(t, err, &me)
	assert.Equal(t, "key", me.Field)
	assert.Equal(t, 1, me.Completion)
}

// TestLogKeepsEveryFieldOfEveryEvent: the compact form gives back exactly
// what was appended (optional fields, nil and empty slices kept apart,
// strings), also when Events is asked again after more appends.
func TestLogKeepsEveryFieldOfEveryEvent(t *testing.T) {
	in := []Event{
		{Time: 1, Process: 0, Node: "c1", Type: Invoke, F: FWrite, Key: "k", Owner: "o", Token: Ptr(uint64(7)),
			Value: Ptr(int64(-3)), Clock: Ptr(int64(11)), Deadline: Ptr(int64(99)), Detail: "d"},
		{Time: 2, Process: 0, Node: "c1", Type: OK, F: FWrite, Key: "k", Values: []int64{}},
		{Time: 3, Process: 1, Node: "c2", Type: Invoke, F: FRead, Key: "k", Values: []int64{1, 2}},
		{Time: 4, Process: NemesisProcess, Type: Start, F: "pause", Targets: []string{"c1"}, Detail: "for 1s"},
		{Time: 5, Process: NemesisProcess, Type: Stop, F: "pause", Targets: []string{}},
	}
	log := NewLog()
	for i, e := range in[:3] {
		got := log.Append(e)
		assert.Equal(t, i, got.Index)
	}
	first := log.Events()
	require.Len(t, first, 3)
	for _, e := range in[3:] {
		log.Append(e)
	}
	got := log.Events()
	require.Len(t, got, len(in))
	for i := range in {
		want := in[i]
		want.Index = i
		assert.Equal(t, want, got[i], "event %d", i)
	}
	assert.NotNil(t, got[1].Values, "an empty slice stays empty, not nil")
	assert.Nil(t, got[0].Values)
	assert.Equal(t, got[:3], first, "asking again returns the same events")
}

// TestRecorderOperationsAreValues: an Op completed twice, or after its
// recorder invoked another, panics; Invocation is the recorded invoke.
func TestRecorderOperationsAreValues(t *testing.T) {
	rec := NewLog().NewRecorder("c1", &fakeClock{now: 5, local: 9})
	op := rec.Invoke(Event{F: FRead, Key: "k", Owner: "o"})
	inv := op.Invocation()
	assert.Equal(t, Event{Index: 0, Time: 5, Process: 0, Node: "c1", Type: Invoke, F: FRead, Key: "k", Owner: "o", Clock: Ptr(int64(9))}, inv)
	done := op.Complete(OK, Event{Value: Ptr(int64(4))})
	assert.Equal(t, Event{Index: 1, Time: 5, Process: 0, Node: "c1", Type: OK, F: FRead, Key: "k", Owner: "o",
		Value: Ptr(int64(4)), Clock: Ptr(int64(9))}, done)
	assert.Panics(t, func() { op.Complete(OK, Event{}) }, "completed twice")
	rec.Invoke(Event{F: FWrite})
	assert.Panics(t, func() { op.Complete(OK, Event{}) }, "another operation is open")
}

// liveClock is a clock shared by goroutines, advancing at every reading (as
// a live recorder's does).
type liveClock struct {
	mu  sync.Mutex
	now time.Duration
}

func (c *liveClock) Now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now++
	return c.now
}
func (c *liveClock) Local() time.Duration                     { return c.Now() }
func (c *liveClock) TrueAt(local time.Duration) time.Duration { return local }

// TestLogRecordsConcurrentClientsInTimeOrder: recorders of several
// goroutines (live mode) append at once; the log keeps every operation, in
// time order, and stays valid.
func TestLogRecordsConcurrentClientsInTimeOrder(t *testing.T) {
	log := NewLog()
	clk := &liveClock{}
	var wg sync.WaitGroup
	for c := range 4 {
		rec := log.NewRecorder(fmt.Sprintf("c%d", c), clk)
		wg.Go(func() {
			for i := range 300 {
				op := rec.Invoke(Event{F: FWrite, Key: "k", Owner: fmt.Sprintf("o%d", i%7), Value: Ptr(int64(i))})
				op.Complete(OK, Event{Detail: fmt.Sprint(i % 3)})
			}
		})
	}
	wg.Wait()
	events := log.Events()
	require.Len(t, events, 4*300*2)
	require.NoError(t, Validate(events))
	for i := 1; i < len(events); i++ {
		require.Less(t, events[i-1].Time, events[i].Time)
	}
}

package history

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordHistory records n operations of two clients with every optional
// field (values, deadlines, tokens, clocks) and a few faults, into log, and
// returns the log's events.
func recordHistory(log *Log, n int, tag string) []Event {
	clock := &fakeClock{}
	recs := []*Recorder{log.NewRecorder("c1", clock), log.NewRecorder("c2-"+tag, clock)}
	for i := range n {
		clock.now, clock.local = clockStep(i), clockStep(i)+3
		if i%50 == 0 {
			log.Append(Event{Time: int64(clock.now), Process: NemesisProcess, Type: Start, F: "pause",
				Targets: []string{"c1", tag}, Detail: fmt.Sprintf("for %ds", i)})
		}
		r := recs[i%2]
		op := r.Invoke(Event{F: FAcquire, Key: "k-" + tag, Owner: fmt.Sprint("o", i%7)})
		done := Event{Token: Ptr(uint64(i)), Deadline: Ptr(int64(i) * 10)}
		typ := OK
		if i%9 == 0 {
			typ, done.Detail = Info, "timeout "+tag
		}
		if i%4 == 0 {
			done.Values = []int64{int64(i), -1}
		}
		got := op.Complete(typ, done)
		if *got.Clock != int64(clock.local) {
			panic("clock")
		}
	}
	return log.Events()
}

func clockStep(i int) time.Duration { return time.Duration(i) * 1000 }

// fill records a history of n operations into log; with mid, half as many
// first, and the events asked for in between.
func fill(log *Log, n int, tag string, mid bool) []Event {
	if mid {
		recordHistory(log, n/2+1, tag+"-first") // which asks for the events
	}
	return recordHistory(log, n, tag)
}

// TestReleasedLogRecordsTheNextHistoryAsAFreshOne: a log made after Release
// (which takes the released storage) records every history exactly as a
// fresh log does, whether it is longer or shorter than the released one, and
// whether Events was asked for along the way.
func TestReleasedLogRecordsTheNextHistoryAsAFreshOne(t *testing.T) {
	for _, c := range []struct {
		name  string
		sizes []int
	}{
		{"growing", []int{10, 300, 1000}},
		{"shrinking", []int{1000, 300, 10}},
		{"empty in between", []int{700, 0, 700}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for round, n := range c.sizes {
				tag := fmt.Sprint(c.name, round)
				for _, mid := range []bool{false, true} {
					want := cloneEvents(fill(&Log{logBuffers: new(logBuffers)}, n, tag, mid))
					log := NewLog()
					got := fill(log, n, tag, mid)
					require.Len(t, got, len(want), "round %d", round)
					assert.Equal(t, want, cloneEvents(got), "round %d, mid %v", round, mid)
					log.Release()
				}
			}
		})
	}
}

// cloneEvents copies events with their own optional fields.
func cloneEvents(in []Event) []Event {
	if in == nil {
		return nil
	}
	out := make([]Event, len(in))
	for i, e := range in {
		if e.Clock != nil {
			e.Clock = Ptr(*e.Clock)
		}
		if e.Value != nil {
			e.Value = Ptr(*e.Value)
		}
		if e.Deadline != nil {
			e.Deadline = Ptr(*e.Deadline)
		}
		if e.Token != nil {
			e.Token = Ptr(*e.Token)
		}
		out[i] = e
	}
	return out
}

// TestFillSetsEveryFieldOfAnEvent: Log.fill writes an event into an array
// that held an earlier history, field by field; a field it does not know
// would keep the earlier event's value. A new Event field must be added
// there (and here).
func TestFillSetsEveryFieldOfAnEvent(t *testing.T) {
	var names []string
	for f := range reflect.TypeFor[Event]().Fields() {
		names = append(names, f.Name)
	}
	assert.Equal(t, []string{"Index", "Time", "Process", "Node", "Type", "F", "Key", "Owner", "Token", "Value", "Values",
		"Clock", "Deadline", "Targets", "Detail"}, names)
	log := NewLog()
	log.Append(Event{Time: 1, Process: 3, Node: "n", Type: Invoke, F: FWrite, Key: "k", Owner: "o", Token: Ptr(uint64(1)),
		Value: Ptr(int64(2)), Values: []int64{3}, Clock: Ptr(int64(4)), Deadline: Ptr(int64(5)), Targets: []string{"t"}, Detail: "d"})
	e := log.Events()[0]
	log.fill(&e, 0, &record{})
	assert.Equal(t, Event{}, e, "a record with nothing set leaves nothing of the earlier event")
}

package models

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

// seenCheck records the events it was given.
type seenCheck struct {
	name  string
	audit bool
	seen  *[]history.Event
}

func (c seenCheck) Name() string         { return c.name }
func (c seenCheck) ReadsNoHistory() bool { return c.audit }
func (c seenCheck) Check(events []history.Event) Verdict {
	*c.seen = events
	return Verdict{Result: Valid, Reason: "recorded"}
}

// TestAnAuditCheckIsGivenNoEvents: a check that reads no history (an audit of
// the servers) is given nil, every other check the completed events.
func TestAnAuditCheckIsGivenNoEvents(t *testing.T) {
	events := []history.Event{
		{Index: 0, Time: 1, Process: 1, Type: history.Invoke, F: history.FAcquire, Key: "k"},
		{Index: 1, Time: 2, Process: 1, Type: history.OK, F: history.FAcquire, Owner: "c1"},
	}
	var byAudit, byCheck []history.Event
	vs := RunAll([]Check{seenCheck{"audit", true, &byAudit}, seenCheck{"history", false, &byCheck}}, events)
	require.Len(t, vs, 2)
	for _, v := range vs {
		assert.Equal(t, Valid, v.Result, "%s: %s", v.Check, v.Reason)
	}
	assert.Nil(t, byAudit)
	require.Len(t, byCheck, 2)
	assert.Equal(t, "k", byCheck[1].Key, "the completed history: the completion gained the invocation's key")
}

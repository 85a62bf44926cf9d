package scenario

import (
	"cmp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
)

func TestGrantedBy(t *testing.T) {
	assert.True(t, grantedBy("granted by redis-a,redis-c,redis-e (3/5), validity 9s", []string{"redis-c"}))
	assert.False(t, grantedBy("granted by redis-a,redis-b (2/5)", []string{"redis-c"}))
	assert.True(t, grantedBy("granted by replica1, WAIT 1: 1 replica(s) acknowledged", []string{"replica1"}))
	assert.False(t, grantedBy("", []string{"redis"}))
}

// TestNonOwnerReleaseNeedsALockThatHadPassedOn: a third client's release
// between two overlapping grants is a non-owner release only when its own
// grant came before the earlier holder's (the lock had passed from it to
// that holder, and its delete removed the holder's lock). A third client
// granted after the earlier holder took the lock over (a lease cut short
// by the server's clock, say) and released its own: that is not the kind.
func TestNonOwnerReleaseNeedsALockThatHadPassedOn(t *testing.T) {
	ms := func(n int64) int64 { return n * 1e6 }
	type op struct {
		node         string
		f            string
		invoke, done int64
		owner        string
		deadline     int64 // 0: none
		ok           bool
	}
	build := func(ops []op) []history.Event {
		var ev []history.Event
		for p, o := range ops {
			ev = append(ev, history.Event{Time: ms(o.invoke), Process: p, Node: o.node, Type: history.Invoke, F: o.f, Key: "k"})
			done := history.Event{Time: ms(o.done), Process: p, Node: o.node, Type: history.OK, F: o.f, Key: "k", Owner: o.owner}
			if o.f == history.FRelease {
				ev[len(ev)-1].Owner = o.owner
			}
			if o.deadline > 0 {
				done.Deadline = history.Ptr(ms(o.deadline))
			}
			ev = append(ev, done)
		}
		slices.SortStableFunc(ev, func(a, b history.Event) int { return cmp.Compare(a.Time, b.Time) })
		for i := range ev {
			ev[i].Index = i
		}
		return ev
	}
	holders := []op{
		{node: "c2", f: history.FAcquire, invoke: 11000, done: 11100, owner: "o2", deadline: 16100},
		{node: "c1", f: history.FAcquire, invoke: 11000, done: 11215, owner: "o1", deadline: 16215},
		{node: "c2", f: history.FRelease, invoke: 12600, done: 12613, owner: "o2"},
		{node: "c1", f: history.FRelease, invoke: 12700, done: 12719, owner: "o1"},
	}
	tests := []struct {
		name  string
		third []op
		want  bool
	}{
		{"granted before the holder: its late delete removed the holder's lock", []op{
			{node: "c3", f: history.FAcquire, invoke: 5900, done: 6000, owner: "o3", deadline: 11000},
			{node: "c3", f: history.FRelease, invoke: 7600, done: 11203, owner: "o3"},
		}, true},
		{"no grant in the history: counted", []op{
			{node: "c3", f: history.FRelease, invoke: 7600, done: 11203, owner: "o3"},
		}, true},
		{"granted after the holder: it released its own lock", []op{
			{node: "c3", f: history.FAcquire, invoke: 11000, done: 11150, owner: "o3", deadline: 16150},
			{node: "c3", f: history.FRelease, invoke: 11190, done: 11203, owner: "o3"},
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ev := build(append(slices.Clone(holders), tc.third...))
			assert.Equal(t, tc.want, slices.Contains(ViolationKinds(ev), KindNonOwnerRelease), "%v", ViolationKinds(ev))
			story := strings.Join(StoryOf(Result{Events: ev}, KindNonOwnerRelease), "\n")
			if tc.want {
				assert.Contains(t, story, `The cause: c3 released "k" at 11.203s although it no longer held it`)
			} else {
				assert.NotContains(t, story, "The cause:")
			}
		})
	}
}

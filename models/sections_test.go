package models

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
)

func TestCriticalSectionsUnknownInitialValue(t *testing.T) {
	evs := parseHistory(t, `
		0   p0 c1 invoke read k
		1   p0 c1 ok     read k value=41
		2   p0 c1 invoke write k value=42
		3   p0 c1 ok     write k value=42`)
	assert.Equal(t, Valid, Run(CriticalSections{}, evs).Result, "with no initial value any first read is fine")
	assert.Equal(t, Invalid, Run(CriticalSections{Initial: history.Ptr(int64(0))}, evs).Result)
}

type panicky struct{}

func (panicky) Name() string                         { return "panicky" }
func (panicky) Check(events []history.Event) Verdict { panic("bug in the check") }

func TestACrashingCheckIsUnknownNeverValid(t *testing.T) {
	v := Run(panicky{}, nil)
	assert.Equal(t, Unknown, v.Result)
	assert.Contains(t, v.Reason, "bug in the check")
}

func TestMerge(t *testing.T) {
	assert.Equal(t, Valid, Merge(Valid, Valid))
	assert.Equal(t, Unknown, Merge(Valid, Unknown, Valid))
	assert.Equal(t, Invalid, Merge(Unknown, Invalid, Valid))
	assert.Equal(t, Unknown, Merge(), "nothing checked is not valid")
}

// TestLostUpdateBehindAFenceIsExplained: a lost update whose writes a fenced
// storage both accepted says why the fence let them through — the token the
// storage had seen at each write, that the newer holder had only read — and
// names the remedy (issue 10, item 3b). Without fencing, or with fenced reads,
// there is nothing to say about a fence.
func TestLostUpdateBehindAFenceIsExplained(t *testing.T) {
	fx := loadFixture(t, "testdata/histories/fenced-lost-update-reads-not-fenced.txtar")
	tests := []struct {
		name          string
		fenced, reads bool
		want          []string
	}{
		{"fenced writes", true, false, []string{
			"reads are not fenced",
			"When c1 wrote with token 490 at 0.222s, the storage had seen token 489",
			"c2 held the newer token 491 but had only read with it (at 0.150s)",
			"When c2 wrote with token 491 at 0.250s, the storage had seen token 490",
			"--fence-reads", "c1's write with 490 would have been rejected", "compare-and-set",
		}},
		{"unfenced", false, false, nil},
		{"fenced reads", true, true, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := CriticalSections{InitialByKey: map[string]int64{"k": 488}, StorageFenced: tc.fenced, ReadsFenced: tc.reads}
			v := Run(c, fx.events)
			assert.Equal(t, Invalid, v.Result)
			assert.Contains(t, v.Reason, "lost update (c1 and c2 both read 489 and both wrote)")
			text := v.Reason + "\n" + strings.Join(v.Counterexample.Explanation, "\n")
			for _, w := range tc.want {
				assert.Contains(t, text, w)
			}
			if tc.want == nil {
				assert.NotContains(t, text, "fence")
			}
		})
	}
}

// TestSectionsAreCountedBeforeTheyAreFound: extractSections allocates the
// sections it finds once, at their number: countSections walks the
// operations as extractSections does (every fixture, and synthetic histories
// with writes of unknown outcome and lost updates).
func TestSectionsAreCountedBeforeTheyAreFound(t *testing.T) {
	paths, err := filepath.Glob("testdata/histories/*.txtar")
	require.NoError(t, err)
	histories := map[string][]history.Event{
		"synth":         synth{ops: 2000, seed: 1}.events(),
		"synth-unknown": synth{ops: 2000, seed: 2, unknown: 0.3, lostUpdateAt: 40}.events(),
	}
	for _, p := range paths {
		histories[p] = loadFixture(t, p).events
	}
	for name, events := range histories {
		ops := completed(events).Ops()
		secs, _ := extractSections(ops, newInterner())
		var pending procSlots
		assert.Equal(t, len(secs), countSections(ops, &pending), name)
		assert.Equal(t, len(secs), cap(secs), name)
	}
}

// TestATransactionalWriteAppliesOnlyWhenItsTransactionCommits (issue 28,
// item 2): c1 reads 5 and writes 6 inside a transaction (its begin, on a
// process of its own, linked by owner), then c2 reads 5 and writes 6. Only
// a committed transaction makes that a lost update; one whose commit failed,
// is unknown or never came (aborted, lost in a crash) did not apply c1's
// write. And a committed write takes effect at the commit, not at the write:
// a read between the two still sees the old value.
func TestATransactionalWriteAppliesOnlyWhenItsTransactionCommits(t *testing.T) {
	const c1 = `
		10  p0 c1 invoke read k owner=c1#1
		11  p0 c1 ok     read k value=5
		12  p9 c1 invoke begin k owner=c1#1
		12  p9 c1 ok     begin k owner=c1#1
		13  p0 c1 invoke write k value=6 owner=c1#1
		14  p0 c1 ok     write k value=6`
	const c2 = `
		30  p1 c2 invoke read k owner=c2#1
		31  p1 c2 ok     read k value=5
		32  p1 c2 invoke write k value=6 owner=c2#1
		33  p1 c2 ok     write k value=6`
	tests := []struct {
		name    string
		history string
		want    Result
		says    string
	}{
		{"no transaction (autocommit): lost update", strings.ReplaceAll(c1, "begin", "beginx") + c2, Invalid, "write applied"},
		{"commit ok: lost update", c1 + `
		20  p9 c1 invoke commit owner=c1#1
		21  p9 c1 ok     commit owner=c1#1` + c2, Invalid, "write applied when its transaction committed at 0.021s"},
		{"commit fail: c1's write never applied", c1 + `
		20  p9 c1 invoke commit owner=c1#1
		21  p9 c1 fail   commit owner=c1#1` + c2, Valid, ""},
		{"commit info: c1's write may not have applied", c1 + `
		20  p9 c1 invoke commit owner=c1#1
		21  p9 c1 info   commit owner=c1#1` + c2, Valid, ""},
		{"no commit (the transaction was aborted): c1's write never applied", c1 + c2, Valid, ""},
		{"the begin noted while the write is in flight: no commit, never applied", `
		10  p0 c1 invoke read k owner=c1#1
		11  p0 c1 ok     read k value=5
		13  p0 c1 invoke write k value=6 owner=c1#1
		13  p9 c1 invoke begin k owner=c1#1
		13  p9 c1 ok     begin k owner=c1#1
		14  p0 c1 ok     write k value=6` + c2, Valid, ""},
		{"a read before the commit sees the old value", c1 + `
		15  p2 c3 invoke read k owner=c3#1
		16  p2 c3 ok     read k value=5
		20  p9 c1 invoke commit owner=c1#1
		21  p9 c1 ok     commit owner=c1#1
		40  p3 c4 invoke read k owner=c4#1
		41  p3 c4 ok     read k value=6`, Valid, ""},
		{"a read after the commit must see the new value", c1 + `
		20  p9 c1 invoke commit owner=c1#1
		21  p9 c1 ok     commit owner=c1#1
		25  p2 c3 invoke read k owner=c3#1
		26  p2 c3 ok     read k value=5`, Invalid, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := Run(CriticalSections{Initial: history.Ptr(int64(5))}, parseHistory(t, tc.history))
			require.Equal(t, tc.want, v.Result, describe(v))
			if tc.says != "" {
				assert.Contains(t, describe(v), tc.says)
			}
		})
	}
}

package harness

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

// span is a stretch of true time (ns) in which the history shows an owner
// holding a lock: [from, to).
type span struct{ from, to int64 }

// holderKey names an owner's holding of one key.
type holderKey struct{ key, owner string }

// historyHolds are the spans in which the history shows each owner holding
// each key: what its client relied on. A span opens when an acquire (or a
// renewal) of the owner returns ok, and closes at whichever comes first: the
// invocation of the owner's release that gives back its last acquire (the
// client lets go when it asks, whatever the answer), the lease deadline
// recorded with the acquire or renewal that opened it, or the end of the
// history. An acquire that failed or whose outcome is unknown opens
// nothing: its client never learnt of the grant.
func historyHolds(events []history.Event) (map[holderKey][]span, error) {
	events, err := history.Complete(events)
	if err != nil {
		return nil, fmt.Errorf("complete the history: %w", err)
	}
	var end int64
	if len(events) > 0 {
		end = events[len(events)-1].Time
	}
	type open struct {
		from, deadline int64
		count          int
		holding        bool
	}
	opens := map[holderKey]*open{}
	out := map[holderKey][]span{}
	closeAt := func(k holderKey, o *open, at int64) {
		if to := min(at, o.deadline); to > o.from {
			out[k] = append(out[k], span{o.from, to})
		}
		o.holding = false
	}
	for _, op := range history.Operations(events) {
		inv := op.Invoke
		if inv.Process == history.NemesisProcess {
			continue
		}
		owner := inv.Owner
		if op.Completion != nil && owner == "" {
			owner = op.Completion.Owner
		}
		k := holderKey{inv.Key, owner}
		o := opens[k]
		if o == nil {
			o = &open{}
			opens[k] = o
		}
		switch inv.F {
		case history.FAcquire, history.FRenew:
			if op.Outcome() != history.OK || owner == "" {
				continue
			}
			c := op.Completion
			deadline := int64(math.MaxInt64)
			if c.Deadline != nil {
				deadline = *c.Deadline
			}
			if o.holding {
				closeAt(k, o, c.Time) // a reentrant acquire or a renewal opens a new span
			}
			if inv.F == history.FAcquire {
				o.count++
			}
			o.count = max(o.count, 1)
			o.from, o.deadline, o.holding = c.Time, deadline, true
		case history.FRelease:
			o.count--
			if o.count <= 0 {
				o.count = 0
				if o.holding {
					closeAt(k, o, inv.Time)
				}
			}
		}
	}
	for _, op := range history.Operations(events) { // close what is open, in a deterministic order
		owner := op.Invoke.Owner
		if op.Completion != nil && owner == "" {
			owner = op.Completion.Owner
		}
		k := holderKey{op.Invoke.Key, owner}
		if o := opens[k]; o != nil && o.holding {
			closeAt(k, o, end)
		}
	}
	return out, nil
}

// overlaps reports whether any span of a overlaps any span of b after at.
func overlaps(a, b []span, at int64) bool {
	for _, x := range a {
		for _, y := range b {
			if max(x.from, y.from, at) < min(x.to, y.to) {
				return true
			}
		}
	}
	return false
}

// endsBy reports whether every span of a ended by at.
func endsBy(a []span, at int64) bool {
	return !slices.ContainsFunc(a, func(s span) bool { return s.to > at })
}

// breachRule is a reason a breach of the servers' record cannot show in the
// history: applies reports whether it explains b, given the spans in which
// the history shows each owner holding each key.
type breachRule struct {
	name, why string
	applies   func(b lockapi.Breach, holds map[holderKey][]span) bool
}

// breachRules are the reasons, in the order they are tried; a breach counts
// under the first that explains it. Each makes the broken promise invisible
// to the history: no client relied on a lock while another client did.
var breachRules = []breachRule{
	{
		name: "never-held",
		why: "an owner of the breach (the broken holding's; for an overlap, either) never held the lock by the history: " +
			"none of its acquires or renewals returned ok (they failed or their outcome was unknown), so its client never " +
			"learnt of the grant and never relied on it",
		applies: func(b lockapi.Breach, holds map[holderKey][]span) bool {
			if len(holds[holderKey{b.Key, b.Held.Owner}]) == 0 {
				return true
			}
			return !b.Removal && len(holds[holderKey{b.Key, b.Other.Owner}]) == 0
		},
	},
	{
		name: "let-go",
		why: "the broken holding's client had let go before the breach: every span in which the history shows it holding " +
			"(from an ok acquire or renewal to the invocation of its release or its recorded lease deadline) ended by the " +
			"moment the other grant began (an overlap) or the lock was deleted or revoked (a removal)",
		applies: func(b lockapi.Breach, holds map[holderKey][]span) bool {
			return endsBy(holds[holderKey{b.Key, b.Held.Owner}], int64(b.From))
		},
	},
	{
		name: "apart",
		why: "the two owners' spans in the history never overlap (an overlap), or after the removal no other owner's span " +
			"overlaps the removed owner's (a removal): the history is one of a mutex that kept its promise, each client " +
			"relying on the lock only while no other did",
		applies: func(b lockapi.Breach, holds map[holderKey][]span) bool {
			held := holds[holderKey{b.Key, b.Held.Owner}]
			if !b.Removal {
				return !overlaps(held, holds[holderKey{b.Key, b.Other.Owner}], math.MinInt64)
			}
			for k, s := range holds { // determinism:ok an any-of over the owners
				if k.key == b.Key && k.owner != b.Held.Owner && overlaps(held, s, int64(b.From)) {
					return false
				}
			}
			return true
		},
	},
}

// breachTally counts what TestRecordedBreachesAreJudged found on one row.
type breachTally struct {
	breaches, invalid, unknown int
	byRule                     []int
	unexplained                []string
	// seeds with a breach on record, and those of them not judged INVALID
	seeds, notInvalid []uint64
}

// judgeBreaches runs tc with its lock-service check and the servers'
// record of grants, and adds each breach of the record to tally: judged
// INVALID by the verdict, or explained by a rule, or unexplained.
func judgeBreaches(t *testing.T, tc scenario.Test, tally *breachTally) {
	t.Helper()
	tc.Checks = []string{lockCheck(tc)}
	p, err := Prepare(tc)
	require.NoError(t, err)
	p.RecordGrants()
	r, err := p.Run()
	require.NoError(t, err)
	v := verdict(r, tc.Checks[0])
	require.Equal(t, tc.Checks[0], v.Check)
	breaches := p.Deployment.Grants.Breaches()
	if len(breaches) == 0 {
		return
	}
	holds, err := historyHolds(r.Events)
	require.NoError(t, err)
	tally.seeds = append(tally.seeds, tc.Seed)
	if v.Result != models.Invalid {
		tally.notInvalid = append(tally.notInvalid, tc.Seed)
	}
	byRule := make([]int, len(breachRules))
	example := make([]string, len(breachRules))
	for _, b := range breaches {
		tally.breaches++
		if v.Result == models.Invalid {
			tally.invalid++
			continue
		}
		i := slices.IndexFunc(breachRules, func(rule breachRule) bool { return rule.applies(b, holds) })
		switch {
		case i >= 0:
			tally.byRule[i]++
			if byRule[i]++; byRule[i] == 1 {
				example[i] = fmt.Sprintf("%v (%s)", b, describeHolds(b, holds))
			}
		case v.Result == models.Unknown:
			tally.unknown++
			t.Logf("seed %d: UNKNOWN (%s): %v (%s)", tc.Seed, v.Reason, b, describeHolds(b, holds))
		default:
			tally.unexplained = append(tally.unexplained, fmt.Sprintf("seed %d: %v (%s)", tc.Seed, b, describeHolds(b, holds)))
		}
	}
	for i, n := range byRule {
		if n > 0 {
			t.Logf("seed %d: %s; %s explains %d breaches, the first: %s", tc.Seed, v.Result, breachRules[i].name, n, example[i])
		}
	}
}

// describeHolds says in which spans the history shows the breach's owners
// holding the key, from a second before the broken holding to a second
// after the breach (an owner a client reuses holds many times).
func describeHolds(b lockapi.Breach, holds map[holderKey][]span) string {
	var parts []string
	for _, owner := range []string{b.Held.Owner, b.Other.Owner} {
		if owner == "" {
			continue
		}
		var ss []string
		for _, s := range holds[holderKey{b.Key, owner}] {
			if s.to > int64(b.Held.From)-int64(time.Second) && s.from < int64(b.To)+int64(time.Second) {
				ss = append(ss, fmt.Sprintf("%s-%s", history.FormatTime(s.from), history.FormatTime(s.to)))
			}
		}
		parts = append(parts, fmt.Sprintf("%s held %v by the history", owner, ss))
	}
	return strings.Join(parts, "; ")
}

// TestRecordedBreachesAreJudged is the reverse of
// TestLockVerdictsAgreeWithTheServers (issue 28): it sweeps random-fault
// seeds of every system and checks that each broken promise in the servers'
// record of grants (two owners' grants overlapping in true time, a lock
// deleted or revoked under its owner) is judged INVALID by the lease (or
// mutex) check, or is explained by one of breachRules: a broken promise no
// client relied on, which no history can show. An unexplained breach of a
// VALID run is a check (or a client) that missed what its history shows.
// The etcd rows are left to their own test. -truth-seeds sets the number of
// seeds per system; -v logs, per seed, how many breaches each rule explains
// and the first of them.
//
// What the rules explain, seed by seed (random faults, seeds 1..200): a
// redis crash that loses the key of a client whose release was already on
// its way (let-go); a replicated redis or a database granting a lock to an
// acquire whose reply never came (never-held), the database then revoking
// it for the silent connection; a for-update or advisory lock revoked for a
// commit or unlock that timed out (let-go), or in a crash while its holder
// still held it but before anyone else could take it (apart); a raftkv
// leader whose clock jumped ahead expiring the lease of a client that had
// let go and then acquired again under the same owner name (apart: the
// owner's later holdings keep let-go from applying).
func TestRecordedBreachesAreJudged(t *testing.T) {
	for _, sys := range truthSystems {
		if sys.test.System == "etcd" {
			continue
		}
		t.Run(sys.name, func(t *testing.T) {
			t.Parallel()
			n := seedsOfRow(sys.seeds)
			tally := breachTally{byRule: make([]int, len(breachRules))}
			for seed := uint64(1); seed <= uint64(n); seed++ {
				tc := sys.test
				tc.Nemesis, tc.Seed = "random", seed
				judgeBreaches(t, tc, &tally)
			}
			var rules []string
			for i, r := range breachRules {
				rules = append(rules, fmt.Sprintf("%s %d", r.name, tally.byRule[i]))
			}
			t.Logf("%s, seeds 1..%d: a breach on record on %d seeds, %d of them not judged INVALID %v",
				sys.name, n, len(tally.seeds), len(tally.notInvalid), tally.notInvalid)
			t.Logf("TABLE %s | seeds %d (breached %d, not INVALID %d) | breaches %d | judged INVALID %d | %s | UNKNOWN %d | unexplained %d",
				sys.name, n, len(tally.seeds), len(tally.notInvalid), tally.breaches, tally.invalid, strings.Join(rules, " | "),
				tally.unknown, len(tally.unexplained))
			assert.Empty(t, tally.unexplained, "breaches in the servers' record that a VALID verdict missed")
		})
	}
}

// TestBreachRulesExplainOnlyWhatNoClientReliedOn: each rule explains the
// breaches it names, and none explains a breach the history shows (two
// clients relying on the lock at once, or one relying on it after it was
// taken away while another held it).
func TestBreachRulesExplainOnlyWhatNoClientReliedOn(t *testing.T) {
	s := func(sec float64) time.Duration { return time.Duration(sec * float64(time.Second)) }
	// op is one operation of owner on key "k": invoked at from, completed
	// (typ) at to; deadline > 0 records a lease deadline.
	type op struct {
		owner, f string
		from, to float64
		typ      history.Type
		deadline float64
	}
	overlap := func(a, b string, from, to float64) lockapi.Breach {
		return lockapi.Breach{Key: "k", Held: lockapi.Holding{Owner: a}, Other: lockapi.Holding{Owner: b}, From: s(from), To: s(to)}
	}
	removal := func(a string, at float64) lockapi.Breach {
		return lockapi.Breach{Key: "k", Held: lockapi.Holding{Owner: a}, Other: lockapi.Holding{Client: "db"},
			From: s(at), To: s(at), Removal: true}
	}
	tests := []struct {
		name   string
		ops    []op
		breach lockapi.Breach
		rule   string // "": none explains it
	}{
		{"both held at once: visible", []op{
			{"a", history.FAcquire, 0.9, 1, history.OK, 0}, {"a", history.FRelease, 3, 3.1, history.OK, 0},
			{"b", history.FAcquire, 1.9, 2, history.OK, 0}, {"b", history.FRelease, 4, 4.1, history.OK, 0},
		}, overlap("a", "b", 2, 3), ""},
		{"the holder's acquire had an unknown outcome", []op{
			{"a", history.FAcquire, 0.9, 1.5, history.Info, 0},
			{"b", history.FAcquire, 1.9, 2, history.OK, 0}, {"b", history.FRelease, 4, 4.1, history.OK, 0},
		}, overlap("a", "b", 2, 3), "never-held"},
		{"the holder had invoked its release", []op{
			{"a", history.FAcquire, 0.9, 1, history.OK, 0}, {"a", history.FRelease, 1.5, 2, history.Info, 0},
			{"b", history.FAcquire, 1.9, 2.1, history.OK, 0}, {"b", history.FRelease, 4, 4.1, history.OK, 0},
		}, overlap("a", "b", 2, 3), "let-go"},
		{"the holder's recorded lease had run out", []op{
			{"a", history.FAcquire, 0.9, 1, history.OK, 2},
			{"b", history.FAcquire, 2.4, 2.5, history.OK, 12}, {"b", history.FRelease, 4, 4.1, history.OK, 0},
		}, overlap("a", "b", 2.5, 3), "let-go"},
		{"the other learnt of its grant after the holder let go", []op{
			{"a", history.FAcquire, 0.9, 1, history.OK, 0}, {"a", history.FRelease, 3, 3.1, history.OK, 0},
			{"b", history.FAcquire, 1.9, 3.5, history.OK, 0}, {"b", history.FRelease, 4, 4.1, history.OK, 0},
		}, overlap("a", "b", 2, 3), "apart"},
		{"revoked while held, nobody else held it meanwhile", []op{
			{"a", history.FAcquire, 0.9, 1, history.OK, 0}, {"a", history.FRelease, 3, 3.1, history.Fail, 0},
		}, removal("a", 2), "apart"},
		{"revoked while held, and another held it meanwhile: visible", []op{
			{"a", history.FAcquire, 0.9, 1, history.OK, 0}, {"a", history.FRelease, 3, 3.1, history.Fail, 0},
			{"c", history.FAcquire, 2.4, 2.5, history.OK, 0}, {"c", history.FRelease, 2.8, 2.9, history.OK, 0},
		}, removal("a", 2), ""},
		{"revoked after the holder invoked its release", []op{
			{"a", history.FAcquire, 0.9, 1, history.OK, 0}, {"a", history.FRelease, 1.5, 2, history.Info, 0},
			{"c", history.FAcquire, 2.4, 2.5, history.OK, 0}, {"c", history.FRelease, 2.8, 2.9, history.OK, 0},
		}, removal("a", 2), "let-go"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var events []history.Event
			for i, o := range tc.ops {
				inv := history.Event{Time: int64(s(o.from)), Process: i, Node: "c" + o.owner, Type: history.Invoke, F: o.f, Key: "k"}
				if o.f != history.FAcquire {
					inv.Owner = o.owner
				}
				done := inv
				done.Time, done.Type, done.Owner = int64(s(o.to)), o.typ, o.owner
				if o.deadline > 0 {
					done.Deadline = history.Ptr(int64(s(o.deadline)))
				}
				events = append(events, inv, done)
			}
			slices.SortStableFunc(events, func(a, b history.Event) int { return cmp.Compare(a.Time, b.Time) })
			for i := range events {
				events[i].Index = i
			}
			holds, err := historyHolds(events)
			require.NoError(t, err)
			got := ""
			if i := slices.IndexFunc(breachRules, func(r breachRule) bool { return r.applies(tc.breach, holds) }); i >= 0 {
				got = breachRules[i].name
			}
			assert.Equal(t, tc.rule, got, "holds: %v", holds)
		})
	}
}

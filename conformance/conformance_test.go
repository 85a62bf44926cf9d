package conformance

import (
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/system"
)

var (
	seeds  = flag.Int("conformance.seeds", 0, "baseline and honest-outcomes seeds per claim (0: the default, 2)")
	budget = flag.Int("conformance.budget", 0, "fenced-safety runs per fault family (0: 100 here, 20 under -short; the suite's own default, as the safety matrix's, is 300)")
	liveOn = flag.Bool("conformance.live", false, "run live-parity in TestEveryRegisteredSystemConforms: each system's catalog variants in real time (servers not installed are skipped)")
	scale  = flag.Float64("conformance.live-scale", 0, "live-parity's scale of every duration (0: the suite's default, 0.1)")
)

// config is the suite's size in this package's tests: a search of 100 runs
// per fault family, 20 under -short, or what the flags say.
func config() Config {
	c := Config{Seeds: *seeds, Budget: *budget}
	switch {
	case c.Budget != 0:
	case testing.Short():
		c.Budget = 20
	default:
		// A third of the matrix's budget keeps go test ./... within minutes;
		// -conformance.budget 300 runs the matrix's own search.
		c.Budget = 100
	}
	return c
}

// liveTuning is how the live package's own cross-validation runs each
// system's variants (live/*_test.go): etcd at 0.2, ZooKeeper at 0.3, Redis
// and Redlock at 0.2 (Redlock's per-instance timeout kept at 50 ms, the
// Sentinel failover at 0.5 with down-after 100 ms), the rest at
// -conformance.live-scale's 0.1; hashicorp/raft's election shortened where
// a takeover must fit a scaled window. -conformance.live-scale sets every
// scale.
func liveTuning(v scenario.Variant) (float64, map[string]string) {
	scales := map[string]float64{"etcd": 0.2, "zookeeper": 0.3, "redis": 0.2, "redlock": 0.2}
	var options map[string]string
	switch {
	case strings.HasPrefix(v.Name, "raftkv-leader-clock-ahead/"):
		options = map[string]string{"heartbeat-timeout": "40ms", "election-timeout": "40ms", "leader-lease-timeout": "20ms"}
	case strings.HasPrefix(v.Name, "redis-failover/"):
		scales["redis"], options = 0.5, map[string]string{"down-after": "100ms"}
	case v.Test.System == "redlock":
		options = map[string]string{"request-timeout": "50ms"}
	}
	if *scale != 0 {
		return *scale, options
	}
	return scales[v.Test.System], options
}

func findSystem(t *testing.T, name string) system.System {
	t.Helper()
	s, err := system.Find(name)
	require.NoError(t, err)
	return s
}

// TestEveryRegisteredSystemConforms runs the suite on every configuration each
// registered system claims; a system that claims nothing fails. With
// -conformance.live it runs live-parity too (not under -short: a live run
// takes real time).
func TestEveryRegisteredSystemConforms(t *testing.T) {
	c := config()
	if *liveOn && testing.Short() {
		t.Log("-conformance.live under -short: live-parity does not run (a live run takes real time)")
	}
	c.Live, c.LiveScale, c.LiveTuning = *liveOn && !testing.Short(), *scale, liveTuning
	for _, sys := range system.All() {
		t.Run(sys.Name, func(t *testing.T) { TestSystem(t, sys, c) })
	}
}

// TestAFalseSafetyClaimFails: Redis with two replicas and fencing tokens
// from the primary's counter claiming that its tokens fence (the catalog's
// redis-failover shows a failover losing the lock and the counter): the
// fenced-safety search finds the counterexample and names it.
func TestAFalseSafetyClaimFails(t *testing.T) {
	claim := system.Claims{Variant: "replicated", Options: map[string]string{"replicas": "2"}, Tokens: true,
		FencedOptions: map[string]string{"fencing": "true"}, SafeRelease: true}
	err := Check(findSystem(t, "redis"), claim, config())
	require.Error(t, err, "a false claim must fail the suite")
	var found bool
	for _, e := range unjoin(err) {
		var m Misbehaviour
		require.ErrorAs(t, e, &m)
		if m.Property == FencedSafety {
			found = true
			assert.Regexp(t, `faults, run \d+ of the search: .*(critical-sections|fencing-tokens).* fails .*faults: `, m.Detail)
		}
	}
	assert.True(t, found, "fenced-safety names the counterexample: %v", err)
}

// TestTheSuiteReportsEveryMisbehaviour: claims a system cannot keep are
// reported, each as a Misbehaviour, all at once.
func TestTheSuiteReportsEveryMisbehaviour(t *testing.T) {
	small := Config{Seeds: 1, Budget: 10, Families: []string{"pause"}}
	// The control lock claiming what a real lock claims: its baseline is
	// invalid, and it gives no token (a fenced run is refused) and frees
	// nothing safely.
	err := Check(findSystem(t, "control"), system.Claims{Tokens: true, SafeRelease: true}, small)
	require.Error(t, err)
	broken := map[string]bool{}
	var m Misbehaviour
	for _, e := range unjoin(err) {
		require.ErrorAs(t, e, &m)
		broken[m.Property] = true
	}
	assert.Equal(t, map[string]bool{Baseline: true, Declared: true, GCPauseFenced: true, FencedSafety: true, SafeRelease: true}, broken)

	// Redis with release=del claiming a safe release.
	err = Check(findSystem(t, "redis"), system.Claims{Options: map[string]string{"release": "del", "ttl": "5s"}, SafeRelease: true, HolderPause: 6e9}, small)
	require.Error(t, err)
	assert.Regexp(t, `safe-release: c[23] and c[23] held the lock at once`, err.Error())

	// An expected failure that does not happen is reported too.
	err = Check(findSystem(t, "redis"), system.Claims{ExpectFail: []string{Baseline}}, small)
	require.Error(t, err)
	assert.EqualError(t, err, "redis: baseline: expected to fail (Claims.ExpectFail), but it holds")

	assert.ErrorContains(t, Check(system.System{Name: "nope"}, system.Claims{}, Config{}), `unknown system "nope"`)
}

// TestLiveParityAppliesOncePerLiveSystemWhenAskedFor: live-parity runs only
// with Config.Live, only for a system with a live form, and once per system
// (with its first claimed configuration: the catalog's variants are the
// system's, not a claim's).
func TestLiveParityAppliesOncePerLiveSystemWhenAskedFor(t *testing.T) {
	tests := []struct {
		name    string
		system  string
		claim   int
		live    bool
		applies bool
	}{
		{"a live system, asked for", "raftkv", 0, true, true},
		{"a live system, not asked for (the default)", "raftkv", 0, false, false},
		{"a live system's second claim", "etcd", 1, true, false},
		{"a system with no live form", "chubby", 0, true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sys := findSystem(t, tc.system)
			require.Greater(t, len(sys.Claims), tc.claim)
			s := suite{sys: sys, system: sys.Name, c: sys.Claims[tc.claim], cfg: Config{Live: tc.live}}
			assert.Equal(t, tc.applies, s.applies(LiveParity))
		})
	}
}

// TestOutcomesAreJudgedAgainstTheGrantRecord: the honest-outcomes rules on
// small histories and records, the ones it must reject and the ones it must
// accept.
func TestOutcomesAreJudgedAgainstTheGrantRecord(t *testing.T) {
	s := time.Second
	acquire := func(node, owner string, from, to time.Duration, outcome history.Type) []history.Event {
		return []history.Event{
			{Type: history.Invoke, F: history.FAcquire, Process: 1, Node: node, Owner: owner, Time: int64(from)},
			{Type: outcome, F: history.FAcquire, Process: 1, Node: node, Owner: owner, Time: int64(to)},
		}
	}
	grant := func(scope string, at, until, released time.Duration) lockapi.Grant {
		return lockapi.Grant{Scope: scope, Client: "c1", Owner: "o1", Key: "lock", At: at, Until: until, Released: released}
	}
	tests := []struct {
		name    string
		events  []history.Event
		grants  []lockapi.Grant
		quorum  int
		honest  bool
		judged  int
		unknown int
	}{
		{"ok with a grant before it returned", acquire("c1", "o1", s, 2*s, history.OK), []lockapi.Grant{grant("r", s, 10*s, 0)}, 1, true, 1, 0},
		{"ok with no grant at all", acquire("c1", "o1", s, 2*s, history.OK), nil, 1, false, 1, 0},
		{"ok granted only after it returned", acquire("c1", "o1", s, 2*s, history.OK), []lockapi.Grant{grant("r", 3*s, 10*s, 0)}, 1, false, 1, 0},
		{"ok on a minority of a quorum's scopes", acquire("c1", "o1", s, 2*s, history.OK), []lockapi.Grant{grant("a", s, 10*s, 0), grant("b", s, 10*s, 0)}, 3, false, 1, 0},
		{"ok on a majority", acquire("c1", "o1", s, 2*s, history.OK), []lockapi.Grant{grant("a", s, 10*s, 0), grant("b", s, 10*s, 0), grant("c", s, 10*s, 0)}, 3, true, 1, 0},
		{"fail with nothing granted", acquire("c1", "o1", s, 2*s, history.Fail), nil, 1, true, 1, 0},
		{"fail whose grant is still in force", acquire("c1", "o1", s, 2*s, history.Fail), []lockapi.Grant{grant("r", 1500*time.Millisecond, 10*s, 0)}, 1, false, 1, 0},
		{"fail whose grant was given back before it returned", acquire("c1", "o1", s, 2*s, history.Fail), []lockapi.Grant{grant("r", 1500*time.Millisecond, 10*s, 1800*time.Millisecond)}, 1, true, 1, 0},
		{"fail whose grant had run out", acquire("c1", "o1", s, 2*s, history.Fail), []lockapi.Grant{grant("r", 1100*time.Millisecond, 1500*time.Millisecond, 0)}, 1, true, 1, 0},
		{"fail with a grant from an earlier call", acquire("c1", "o1", s, 2*s, history.Fail), []lockapi.Grant{grant("r", 0, 10*s, 0)}, 1, true, 1, 0},
		{"fail granted on a minority only", acquire("c1", "o1", s, 2*s, history.Fail), []lockapi.Grant{grant("a", 1500*time.Millisecond, 10*s, 0)}, 2, true, 1, 0},
		{"info is what the record allows either way", acquire("c1", "o1", s, 2*s, history.Info), []lockapi.Grant{grant("r", 1500*time.Millisecond, 10*s, 0)}, 1, true, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			problems, judged, unknown := judgeOutcomes(tc.events, tc.grants, tc.quorum)
			assert.Equal(t, tc.honest, len(problems) == 0, "%v", problems)
			assert.Equal(t, tc.judged, judged)
			assert.Equal(t, tc.unknown, unknown)
		})
	}
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{errors.Unwrap(err)}
}

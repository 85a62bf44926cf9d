// Package userlocktest runs a registered lock under locklab from go test:
// a staged variant of its scenario (what `locklab repro NAME --variant V`
// runs) or any run configuration, with the servers' record of grants kept,
// so a test can assert the verdicts a lock's documentation states and the
// record behind them, as net/http/httptest serves a handler's tests.
//
//	func init() { register() } // the same registration as main.go
//
//	func TestTheLockIsFenced(t *testing.T) {
//		userlocktest.Expect(t, "mylock", "gc-pause-fenced", map[string]models.Result{
//			"critical-sections": models.Valid,
//		})
//	}
//
//	// The lock breaks under a long pause (mutual exclusion is invalid), but
//	// fenced storage refuses the stale write: exit code 5, the data is safe.
//	func TestTheDataIsSafe(t *testing.T) {
//		userlocktest.ExpectDataSafe(t, "mylock", "gc-pause-fenced")
//	}
//
// (Example in example_test.go runs these two tests, against a fenced
// ZooKeeper lock.)
//
// # A library you import, unmodified
//
// SearchLibrary runs a lock library a program really uses (bsm/redislock,
// go-redsync/redsync, code of your own over go-redis) in library mode
// (package libmode): unmodified, in virtual time, against simulated Redis
// instances. Name its acquire and release over go-redis clients and get the
// search a built-in system gets: random runs by seed, every guided
// placement of a single pause anchored at the clients' steps, the first
// finding shrunk to its smallest schedule, and its run directory
// (report.html, schedule.json, the servers' record) with the go test line
// that replays it:
//
//	func TestMyLock(t *testing.T) {
//		userlocktest.ExpectLibraryFinds(t, userlocktest.Library{
//			Name:  "bsm/redislock",
//			TTL:   time.Second,
//			Setup: func(c *userlocktest.Conn) error { c.State = redislock.New(c.RDB); return nil },
//			Acquire: func(ctx context.Context, c *userlocktest.Conn, key string) (libmode.Lease, error) {
//				lk, err := c.State.(*redislock.Client).Obtain(ctx, key, time.Second, nil)
//				if errors.Is(err, redislock.ErrNotObtained) {
//					return libmode.Lease{}, fmt.Errorf("%w: %w", lockapi.ErrNotAcquired, err)
//				}
//				if err != nil {
//					return libmode.Lease{}, err
//				}
//				return libmode.Lease{Owner: lk.Token(), Valid: time.Second, Handle: lk}, nil
//			},
//			Release: func(ctx context.Context, c *userlocktest.Conn, l libmode.Lease) error {
//				return l.Handle.(*redislock.Lock).Release(ctx)
//			},
//		}, "critical-sections") // Kleppmann's lost update under a GC pause
//	}
//
// ExpectLibraryDataSafe is the fencing-token variant's test: no run of the
// search may corrupt the data. (ExampleSearchLibrary in example_test.go is
// such a test over a SET NX lock; examples/redislock runs it on
// bsm/redislock.)
package userlocktest

import (
	"slices"
	"strings"
	"testing"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
)

// Run is one finished simulated run: what the checks and the clients saw,
// and what the servers granted.
type Run struct {
	// Result holds the verdicts and the history's events.
	Result scenario.Result
	// Grants is the servers' record of grants, in true time: the ground
	// truth an INVALID verdict is backed by.
	Grants []lockapi.Grant
}

// Verdict is the result of the named check ("critical-sections",
// "mutual-exclusion", "lease", "liveness", ...), or "" when it did not run.
func (r Run) Verdict(check string) models.Result {
	for _, v := range r.Result.Verdicts {
		if v.Check == check {
			return v.Result
		}
	}
	return ""
}

// ExitCode is the exit code `locklab run` ends the run with
// (judge.ExitCode): 0 every check valid, 1 a safety check invalid, 3
// undecided or a liveness failure, 5 (judge.ExitDataSafe) the lock broke
// but the data is safe: only mutual-exclusion, lease or mutex invalid, while on
// fenced storage critical-sections and fencing-tokens are valid.
func (r Run) ExitCode() int { return judge.ExitCode(r.Result.Verdicts) }

// Kinds are the kinds of violation the history shows (scenario.KindGCPause,
// scenario.KindNonOwnerRelease, ...): what explore hunts.
func (r Run) Kinds() []string { return scenario.ViolationKinds(r.Result.Events) }

// Test runs test (as `locklab run` does, with its defaults) and keeps the
// servers' record of grants. A run that cannot be made fails t at once.
func Test(t testing.TB, test scenario.Test) Run {
	t.Helper()
	p, err := harness.Prepare(test)
	if err != nil {
		t.Fatalf("prepare the run of %s: %v", test.System, err)
	}
	p.RecordGrants()
	grants := p.Deployment.Grants
	res, err := p.Run()
	if err != nil {
		t.Fatalf("run %s: %v", test.System, err)
	}
	return Run{Result: res, Grants: grants.Grants()}
}

// Variant runs the staged variant of the scenario named system (each lock
// registered through package userlock has one: gc-pause, delayed-write,
// slow-release, and the fenced variants of a lock with tokens), with the
// schedule and seed `locklab repro` uses. An unknown system or variant fails t
// at once, naming the variants there are.
func Variant(t testing.TB, system, variant string) Run {
	t.Helper()
	s, err := scenario.Find(system)
	if err != nil {
		t.Fatalf("%v", err)
	}
	v, err := s.FindVariant(variant)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return Test(t, v.ReproTest())
}

// Expect runs the variant and checks each verdict of want. A violation it
// wants must show in full: the history classifies it as a kind of violation,
// and the servers recorded grants to back it.
func Expect(t testing.TB, system, variant string, want map[string]models.Result) Run {
	t.Helper()
	r := Variant(t, system, variant)
	checks := make([]string, 0, len(want))
	for c := range want {
		checks = append(checks, c)
	}
	slices.Sort(checks)
	for _, c := range checks {
		got := r.Verdict(c)
		if got == "" {
			t.Errorf("%s/%s: the check %s did not run", system, variant, c)
			continue
		}
		if got != want[c] {
			t.Errorf("%s/%s: %s is %s, want %s", system, variant, c, got, want[c])
		}
	}
	if len(r.Grants) == 0 {
		t.Errorf("%s/%s: the servers recorded no grant", system, variant)
	}
	if (want["mutual-exclusion"] == models.Invalid || want["critical-sections"] == models.Invalid) && len(r.Kinds()) == 0 {
		t.Errorf("%s/%s: the violation is not classified as any kind", system, variant)
	}
	return r
}

// ExpectDataSafe runs the variant and fails t unless the data it guards is
// safe: exit code 0 (the lock held) or 5 (the lock broke, and fenced storage
// refused every stale write: judge.ExitDataSafe). It is the test of a
// lock with fencing tokens, whose GC-pause variant breaks mutual exclusion
// by design: "is my data safe?", not "did the lock hold?".
func ExpectDataSafe(t testing.TB, system, variant string) Run {
	t.Helper()
	r := Variant(t, system, variant)
	switch code := r.ExitCode(); code {
	case judge.ExitValid, judge.ExitDataSafe:
	default:
		var bad []string
		for _, v := range r.Result.Verdicts {
			if v.Result != models.Valid {
				bad = append(bad, v.Check+" "+string(v.Result))
			}
		}
		t.Errorf("%s/%s: the data is not safe: exit code %d, want %d or %d (%s)", system, variant, code,
			judge.ExitValid, judge.ExitDataSafe, strings.Join(bad, ", "))
	}
	return r
}

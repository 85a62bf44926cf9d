package scenario

import (
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
)

// Building blocks of the catalog's schedules and expectations.

// Schedule makes a Schedule of faults.
func Schedule(faults ...nemesis.Fault) *nemesis.Schedule { return &nemesis.Schedule{Faults: faults} }

// After is the trigger "right After node's first f completes ok".
func After(node, f string) *nemesis.Trigger { return &nemesis.Trigger{Node: node, F: f} }

// PauseAfter pauses node for d right After its first f returns ok.
func PauseAfter(node, f string, d time.Duration) nemesis.Fault {
	return nemesis.Fault{Kind: nemesis.Pause, Targets: []string{node}, Duration: nemesis.Duration(d), After: After(node, f)}
}

// DelayNextWrite delays node's next write to the storage by d, right After
// its first read returns.
func DelayNextWrite(node string, d time.Duration) nemesis.Fault {
	return nemesis.Fault{Kind: nemesis.Delay, From: []string{node}, To: []string{"storage"}, Amount: nemesis.Duration(d),
		Match: "storage.WriteReq", Count: 1, After: After(node, "read")}
}

// Expect is an expectation on the two safety checks.
func Expect(criticalSections, mutualExclusion models.Result) Expectations {
	return Expectations{"critical-sections": criticalSections, "mutual-exclusion": mutualExclusion}
}

// Expectations map check names to the results a variant must give.
type Expectations map[string]models.Result

// And returns the Expectations with check expected to give r as well.
func (e Expectations) And(check string, r models.Result) Expectations {
	out := maps.Clone(e)
	out[check] = r
	return out
}

// AllOf combines assertions: every one must hold. Every one is judged, and
// every failure is reported (joined), so that a reader can tell a timing
// miss (ErrTiming) alone from one beside another failure.
func AllOf(asserts ...func(Result) error) func(Result) error {
	return func(r Result) error {
		var errs []error
		for _, a := range asserts {
			if err := a(r); err != nil {
				errs = append(errs, err)
			}
		}
		if len(errs) == 1 {
			return errs[0]
		}
		return errors.Join(errs...)
	}
}

// ErrTiming marks an assertion that measured a time (an availability gap,
// a takeover delay) and found it outside its expected range. A live run at
// a scale other than 1 cannot be held to such a range: its servers' own
// timers (an election, a session's expiry, a TCP retransmission) are not
// scaled with the test.
var ErrTiming = errors.New("a measured time out of its range")

// OnlyTiming reports whether err, an assertion's failure, consists of timing
// misses only (every error it joins matches ErrTiming).
func OnlyTiming(err error) bool {
	if err == nil {
		return false
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if !OnlyTiming(e) {
				return false
			}
		}
		return len(j.Unwrap()) > 0
	}
	return errors.Is(err, ErrTiming)
}

// Fenced turns a test into its fenced-storage form with the given system
// options added.
func Fenced(t Test, opts ...string) Test {
	t.Storage = "fenced"
	t.SystemOptions = WithOpts(t.SystemOptions, opts...)
	return t
}

// WithOpts returns a copy of m with key=value pairs added.
func WithOpts(m map[string]string, kv ...string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// WithWorkload returns t with workload options added.
func WithWorkload(t Test, kv ...string) Test {
	t.WorkloadOptions = WithOpts(t.WorkloadOptions, kv...)
	return t
}

// AcquireSuccessAbove asserts the share of acquires that succeeded.
//
// Its miss is a timing miss (ErrTiming): the share depends on wait budgets
// measured against the servers' own latencies and timers, which a live run
// at another scale does not scale.
func AcquireSuccessAbove(min float64) func(Result) error {
	return func(r Result) error {
		if s := r.Summary.AcquireSuccess; s <= min {
			return fmt.Errorf("acquire success %.2f%%, expected more than %.2f%%: %w", 100*s, 100*min, ErrTiming)
		}
		return nil
	}
}

package scenario

import (
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

// AllOf combines assertions: every one must hold.
func AllOf(asserts ...func(Result) error) func(Result) error {
	return func(r Result) error {
		for _, a := range asserts {
			if err := a(r); err != nil {
				return err
			}
		}
		return nil
	}
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
func AcquireSuccessAbove(min float64) func(Result) error {
	return func(r Result) error {
		if s := r.Summary.AcquireSuccess; s <= min {
			return fmt.Errorf("acquire success %.2f%%, expected more than %.2f%%", 100*s, 100*min)
		}
		return nil
	}
}

package harness

import (
	"maps"
	"time"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/nemesis"
)

// Building blocks of the catalog's schedules and expectations.

// schedule makes a schedule of faults.
func schedule(faults ...nemesis.Fault) *nemesis.Schedule { return &nemesis.Schedule{Faults: faults} }

// after is the trigger "right after node's first f completes ok".
func after(node, f string) *nemesis.Trigger { return &nemesis.Trigger{Node: node, F: f} }

// pauseAfter pauses node for d right after its first f returns ok.
func pauseAfter(node, f string, d time.Duration) nemesis.Fault {
	return nemesis.Fault{Kind: nemesis.Pause, Targets: []string{node}, Duration: nemesis.Duration(d), After: after(node, f)}
}

// delayNextWrite delays node's next write to the storage by d, right after
// its first read returns.
func delayNextWrite(node string, d time.Duration) nemesis.Fault {
	return nemesis.Fault{Kind: nemesis.Delay, From: []string{node}, To: []string{"storage"}, Amount: nemesis.Duration(d),
		Match: "storage.WriteReq", Count: 1, After: after(node, "read")}
}

// expect is an expectation on the two safety checks.
func expect(criticalSections, mutualExclusion models.Result) expectations {
	return expectations{"critical-sections": criticalSections, "mutual-exclusion": mutualExclusion}
}

// expectations map check names to the results a variant must give.
type expectations map[string]models.Result

// and returns the expectations with check expected to give r as well.
func (e expectations) and(check string, r models.Result) expectations {
	out := maps.Clone(e)
	out[check] = r
	return out
}

// allOf combines assertions: every one must hold.
func allOf(asserts ...func(Result) error) func(Result) error {
	return func(r Result) error {
		for _, a := range asserts {
			if err := a(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// fenced turns a test into its fenced-storage form with the given system
// options added.
func fenced(t Test, opts ...string) Test {
	t.Storage = "fenced"
	t.SystemOptions = withOpts(t.SystemOptions, opts...)
	return t
}

// withOpts returns a copy of m with key=value pairs added.
func withOpts(m map[string]string, kv ...string) map[string]string {
	out := maps.Clone(m)
	if out == nil {
		out = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

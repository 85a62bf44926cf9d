package kubernetes_test

import (
	"flag"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/storage"
)

var figures = flag.Bool("kubernetes.figures", false, "TestTheCostOfTheFix: measure and print the cost of fencing and the unavailability after a leader crash (a minute of machine time)")

// TestTheCostOfTheFix measures, for client-go's default timing and two
// shorter ones, with and without a fencing token: the time from the
// leader's crash to the next client's leadership (p50/p99 over 100 seeds),
// and the writes per second of five controllers without faults (10 seeds).
// It only prints (go test ./backends/kubernetes -run CostOfTheFix
// -kubernetes.figures -v): the numbers are figures, not properties.
func TestTheCostOfTheFix(t *testing.T) {
	if !*figures {
		t.Skip("figures only: -kubernetes.figures")
	}
	settings := []struct{ name, lease, renew, retry string }{
		{"client-go defaults", "15s", "10s", "2s"},
		{"shorter", "6s", "4s", "1s"},
		{"short", "2s", "1s", "200ms"},
	}
	for _, s := range settings {
		for _, fencing := range []string{"none", "leaseTransitions"} {
			opts := map[string]string{"lease-duration": s.lease, "renew-deadline": s.renew, "retry-period": s.retry, "fencing": fencing}
			st := storage.Unfenced
			if fencing != "none" {
				st = storage.Fenced
			}
			var takeovers []time.Duration
			for seed := uint64(1); seed <= 100; seed++ {
				crashAt := 20 * time.Second
				r, err := harness.Run(scenario.Test{System: "kubernetes", Clients: 3, Seed: seed, Time: 60 * time.Second, Storage: st,
					SystemOptions: opts, Schedule: &nemesis.Schedule{Faults: []nemesis.Fault{
						{Kind: nemesis.Pause, Targets: []string{"c2", "c3"}, Duration: nemesis.Duration(5 * time.Second)},
						{Kind: nemesis.Crash, Targets: []string{"c1"}, At: nemesis.Duration(crashAt), Duration: nemesis.Duration(35 * time.Second)},
					}}})
				require.NoError(t, err)
				for _, e := range r.Events {
					if e.F == history.FAcquire && e.Type == history.OK && e.Node != "c1" && time.Duration(e.Time) > crashAt {
						takeovers = append(takeovers, time.Duration(e.Time)-crashAt)
						break
					}
				}
			}
			var writes float64
			for seed := uint64(1); seed <= 10; seed++ {
				r, err := harness.Run(scenario.Test{System: "kubernetes", Seed: seed, Time: 60 * time.Second, Storage: st, SystemOptions: opts})
				require.NoError(t, err)
				n := 0
				for _, e := range r.Events {
					if e.F == history.FWrite && e.Type == history.OK {
						n++
					}
				}
				writes += float64(n) / 60 / 10
			}
			slices.Sort(takeovers)
			pct := func(p float64) time.Duration {
				if len(takeovers) == 0 {
					return 0
				}
				return takeovers[min(len(takeovers)-1, int(p*float64(len(takeovers))))]
			}
			fmt.Printf("| %s (%s/%s/%s) | %s | %d/100 | %v | %v | %.2f |\n", s.name, s.lease, s.renew, s.retry, fencing,
				len(takeovers), pct(0.5).Round(time.Millisecond), pct(0.99).Round(time.Millisecond), writes)
		}
	}
}

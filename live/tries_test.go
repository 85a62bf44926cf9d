package live

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/scenario"
)

// liveTries is how many times a cross-validation row runs live before its
// disagreement counts.
const liveTries = 3

// reproLive runs variant v live until its outcome matches the variant's
// expectations and every fault fired, at most liveTries times, logging each
// miss. A real-time run on a loaded machine can miss the window its story
// needs (a request that times out leaves a verdict unknown, a fault lands a
// moment late); a model that disagrees with the real server fails every
// try. The last outcome is returned for the row's assertions.
func reproLive(t *testing.T, v scenario.Variant, cfg Config) harness.Outcome {
	t.Helper()
	var o harness.Outcome
	for try := 1; try <= liveTries; try++ {
		var err error
		o, err = Repro(context.Background(), v, cfg)
		require.NoError(t, err)
		missed := ""
		for _, f := range o.Result.FaultOutcomes {
			if !f.Fired {
				missed = f.DidNotFire
			}
		}
		if o.Match() && missed == "" {
			return o
		}
		if try < liveTries {
			t.Logf("live try %d of %d missed: mismatches %v; fault not fired: %q", try, liveTries, o.Mismatches, missed)
		}
	}
	return o
}

package conformance

import (
	"errors"
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
)

var seeds = flag.Int("conformance.seeds", 0, "baseline seeds per system (0: the default, 2)")

// TestEveryRegisteredSystemConforms runs the suite on every configuration each
// registered system claims; a system that claims nothing fails.
func TestEveryRegisteredSystemConforms(t *testing.T) {
	for _, sys := range harness.Systems() {
		t.Run(sys.Name, func(t *testing.T) {
			require.NotEmpty(t, sys.Claims, "system %s declares no Claims in its registration", sys.Name)
			for _, c := range sys.Claims {
				name := c.Variant
				if name == "" {
					name = "defaults"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					if err := Check(sys.Name, c, Config{Seeds: *seeds}); err != nil {
						t.Errorf("%s does not conform:\n%v", sys.Name, err)
					}
				})
			}
		})
	}
}

// TestTheSuiteReportsEveryMisbehaviour: claims a system cannot keep are
// reported, each as a Misbehaviour, all at once.
func TestTheSuiteReportsEveryMisbehaviour(t *testing.T) {
	// The control lock claiming what a real lock claims: its baseline is
	// invalid, and it gives no token and frees nothing safely.
	err := Check("control", harness.Claims{Tokens: true, SafeRelease: true}, Config{Seeds: 1})
	require.Error(t, err)
	broken := map[string]bool{}
	var m Misbehaviour
	for _, e := range unjoin(err) {
		require.ErrorAs(t, e, &m)
		broken[m.Property] = true
	}
	assert.Equal(t, map[string]bool{Baseline: true, GCPauseFenced: true, SafeRelease: true}, broken)

	// Redis with release=del claiming a safe release.
	err = Check("redis", harness.Claims{Options: map[string]string{"release": "del", "ttl": "5s"}, SafeRelease: true, HolderPause: 6e9}, Config{Seeds: 1})
	require.Error(t, err)
	assert.Regexp(t, `safe-release: c[23] and c[23] held the lock at once`, err.Error())

	// An expected failure that does not happen is reported too.
	err = Check("redis", harness.Claims{ExpectFail: []string{Baseline}}, Config{Seeds: 1})
	require.Error(t, err)
	assert.EqualError(t, err, "redis: baseline: expected to fail (Claims.ExpectFail), but it holds")

	assert.ErrorContains(t, Check("nope", harness.Claims{}, Config{}), `unknown system "nope"`)
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{errors.Unwrap(err)}
}

package redlocklive

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	redislive "github.com/locklab/locklab/backends/redis/live"
	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/scenario"
)

// TestADeployWhosePortIsTakenIsRetriedOrReported: another process takes
// an instance's port between its reservation and its start (a listener that
// never answers, as any program that won the race). The deploy tries again
// on fresh ports, as RetryDeploy documents, and succeeds; when every try
// meets a taken port, the error says so and nothing panics.
func TestADeployWhosePortIsTakenIsRetriedOrReported(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test starts real redis servers")
	}
	if _, err := proc.Binary("redis-server", "redis-server", "/usr/bin/redis-server"); err != nil {
		t.Skip(err)
	}
	for _, tc := range []struct {
		name   string
		taken  int // tries whose first instance's port is taken
		tries  int
		wantOK bool
	}{
		{"taken once, then a fresh port", 1, 2, true},
		{"taken on every try", 3, 3, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tries := 0
			var held []net.Listener
			defer func() {
				for _, l := range held {
					_ = l.Close()
				}
			}()
			beforeStart = func(c *redislive.Cluster, names []string) error {
				tries++
				if tries > tc.taken {
					return nil
				}
				l, err := net.Listen("tcp", c.Addr(names[0]))
				if err != nil {
					return err
				}
				held = append(held, l)
				return nil
			}
			defer func() { beforeStart = func(*redislive.Cluster, []string) error { return nil } }()
			form, ok := liveform.Find("redlock")
			require.True(t, ok)
			test := scenario.Test{System: "redlock", Clients: 1}.WithDefaults()
			var sys *liveform.Deployed
			var err error
			require.NotPanics(t, func() {
				sys, err = form.Deploy(liveform.Deployment{Ctx: context.Background(), Test: test, Setup: 10 * time.Second, Dir: t.TempDir()})
			})
			assert.Equal(t, tc.tries, tries)
			if !tc.wantOK {
				require.Error(t, err)
				assert.Contains(t, err.Error(), "redis-a answers as itself: the process exited")
				assert.Contains(t, err.Error(), "before it was ready")
				return
			}
			require.NoError(t, err)
			sys.Close()
		})
	}
}

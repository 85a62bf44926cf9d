package userlock

import (
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// sleepyLock sleeps on the machine's clock: a lock the simulator cannot run.
type sleepyLock struct{}

func (sleepyLock) Acquire(key string, wait time.Duration) (Lease, error) {
	time.Sleep(time.Minute)
	return Lease{}, ErrNotAcquired
}

func (sleepyLock) Release(Lease) error { return nil }

var _ lockapi.Lock = sleepyLock{}

// TestACallBlockedOnTheMachineEndsTheRunWithExit3: a lock that sleeps on
// the machine's clock blocks the simulated run; the alarm names the client
// and the call, says why, and exits with code 3 (no verdict), not 4. The
// run is a child process (the alarm exits the process), with the alarm
// lowered to 300 ms.
func TestACallBlockedOnTheMachineEndsTheRunWithExit3(t *testing.T) {
	if os.Getenv("LOCKLAB_STUCK_CHILD") == "1" {
		stuckAfter = 300 * time.Millisecond
		w := sim.NewWorld(sim.Config{Seed: 1})
		n := w.AddNode("c1", sim.NodeOptions{})
		c := NewConduct(w.Now)
		n.Spawn("c1", func(p *sim.Proc) { _, _ = Guard(sleepyLock{}, p, Spec{}, c).Acquire("k", 0) })
		w.Run(time.Second)
		t.Fatal("the run went on past a blocked call")
	}
	if testing.Short() {
		t.Skip("-short: starts a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestACallBlockedOnTheMachineEndsTheRunWithExit3$")
	cmd.Env = append(os.Environ(), "LOCKLAB_STUCK_CHILD=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	require.True(t, errors.As(err, &exit), "the child exits with a code: %v\n%s", err, out)
	assert.Equal(t, 3, exit.ExitCode(), "%s", out)
	assert.Contains(t, string(out), `client c1's Acquire("k", 0s) has not returned to the simulator in 300ms of machine time`)
	assert.Contains(t, string(out), "time.Sleep")
}

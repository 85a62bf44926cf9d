package harness

import (
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/sim"
)

// nodeClock is the history.Clock of a simulated client node.
type nodeClock struct{ n *sim.Node }

var _ history.Clock = nodeClock{}

func (c nodeClock) Now() time.Duration                       { return c.n.World().Now() }
func (c nodeClock) Local() time.Duration                     { return c.n.Mono() }
func (c nodeClock) TrueAt(local time.Duration) time.Duration { return c.n.TrueTimeAtMono(local) }

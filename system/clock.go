package system

import (
	"math"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/sim"
)

// Clock is the history.Clock of a simulated node: what a recorder of the
// node's operations (a client's, or a system's own: the database's
// transactions) stamps its events with.
func Clock(n *sim.Node) history.Clock { return nodeClock{n} }

// nodeClock is the history.Clock of a simulated node.
type nodeClock struct{ n *sim.Node }

// Now is true time: the world's.
func (c nodeClock) Now() time.Duration { return c.n.World().Now() }

// Local is the node's monotonic clock, which pauses, jumps and drifts with it.
func (c nodeClock) Local() time.Duration { return c.n.Mono() }

// TrueAt places a reading of the node's monotonic clock in true time: when
// the clock will read it, or, for a reading already past (a lease that ran
// out before the acquire returned, after a pause), when it read it, counted
// back at the clock's present rate. Never the present for a past reading:
// that would stretch an expired lease to the moment it was recorded.
func (c nodeClock) TrueAt(local time.Duration) time.Duration {
	mono := c.n.Mono()
	if local >= mono {
		return c.n.TrueTimeAtMono(local)
	}
	back := time.Duration(math.Ceil(float64(mono-local) / (1 + c.n.Drift())))
	return c.n.World().Now() - back
}

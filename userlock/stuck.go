package userlock

import (
	"fmt"
	"os"
	"time"

	"github.com/locklab/locklab/judge"
)

// StuckAfter is how long, in machine time, a call of a user's lock may take
// in the simulator before locklab gives the run up: a simulated run of a
// minute takes milliseconds to seconds, so a call that takes this long is
// blocked on something the simulator does not control -- the machine's
// clock (time.Sleep, a time.Timer), a Go channel or a sync primitive no
// simulated event will release. The simulator cannot interrupt it, so
// locklab says which call of which client blocked and exits with code 3
// (no verdict could be reached).
const StuckAfter = 2 * time.Minute

// stuckAfter is StuckAfter, lowered by the test that proves the alarm.
var stuckAfter = StuckAfter

// watchStuck starts the stuck-call alarm of one call; the returned function
// stops it. Machine time is read here on purpose, and only to give up: it
// never changes what a run records.
func watchStuck(c *Conduct, client, call string) func() {
	if c == nil || c.now == nil { // live: real time is the lock's own business
		return func() {}
	}
	t := time.AfterFunc(stuckAfter, func() {
		fmt.Fprintf(os.Stderr, "locklab: client %s's %s has not returned to the simulator in %s of machine time: "+
			"the lock blocks on something the simulator does not control (time.Sleep or a timer of the machine, "+
			"a channel, a mutex); use the Env's Sleep and clocks. No verdict.\n", client, call, stuckAfter)
		os.Exit(judge.ExitUnknown)
	})
	return func() { t.Stop() }
}

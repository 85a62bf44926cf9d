package live

import (
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/backends/zookeeper"
	"github.com/locklab/locklab/liveform"
)

// ErrNotHonoured marks an option value the real server or library
// cannot honour (as opposed to a value that is not valid at all).
var ErrNotHonoured = errors.New("not honoured live")

// Version is the client library live ZooKeeper runs (go.mod pins it).
const Version = "github.com/go-zookeeper/zk v1.0.4 (locklab's Curator-style recipe on its primitives)"

// simOnly are the simulated client's knobs go-zookeeper does not have;
// naming one live is an error that says so.
var simOnly = map[string]string{
	"read-timeout":    "go-zookeeper's read timeout is fixed at 2/3 of the session timeout (the default here too)",
	"connect-timeout": "go-zookeeper's connect timeout is fixed; locklab's dialer bounds an attempt by session-timeout/servers (the default here too)",
}

// Table is the live option table: the simulated ZooKeeper's options (same
// names, meanings and defaults) without those of simOnly. Live mode scales
// its durations; tick is the servers' tickTime, election-timeout their
// syncLimit (in ticks).
var Table = liveform.WithoutSimOnly("zookeeper (live)", zookeeper.Table, simOnly)

// ParseOptions reads the simulated ZooKeeper's options and refuses what
// the real ensemble and go-zookeeper cannot honour.
func ParseOptions(given map[string]string) (zookeeper.Options, error) {
	o, err := liveform.ParseOptions("zookeeper (live)", zookeeper.Table, given, simOnly, ErrNotHonoured)
	if err != nil {
		return o, err
	}
	if o.Tick < time.Millisecond {
		return o, fmt.Errorf("zookeeper (live) option tick=%v: ZooKeeper's tickTime is whole milliseconds, at least 1", o.Tick)
	}
	if o.SessionTimeout < 2*o.Tick {
		return o, fmt.Errorf("zookeeper (live) option session-timeout=%v: ZooKeeper grants at least 2 ticks (%v)", o.SessionTimeout, 2*o.Tick)
	}
	return o, nil
}

package live

import (
	"errors"
	"fmt"
	"time"

	"github.com/locklab/locklab/backends/etcd"
	"github.com/locklab/locklab/liveform"
)

// simOnly are the simulated etcd client's knobs that clientv3 does not have;
// naming one live is an error that says so.
var simOnly = map[string]string{
	"request-timeout": "clientv3 has no per-attempt timeout (gRPC retries within the call's context): use retry-budget",
	"watch-progress":  "clientv3's watch re-registration is its own (a gRPC stream), not a setting",
	"backoff-max":     "clientv3's back-off is gRPC's own, not a setting",
}

// Table is the live option table: the simulated etcd's options (same names,
// meanings and defaults) without those of simOnly. Live mode scales its
// durations.
var Table = liveform.WithoutSimOnly("etcd (live)", etcd.Table, simOnly)

// ErrNotHonoured marks an option value the real server or library
// cannot honour (as opposed to a value that is not valid at all).
var ErrNotHonoured = errors.New("not honoured live")

// Version is the client library live etcd runs (go.mod pins it): its KV,
// lease and watch calls and its sessions carry the recipe of backends/etcd
// (clientv3's concurrency.Mutex, as written there).
const Version = "go.etcd.io/etcd/client/v3 v3.7.3 (concurrency.Session; the Mutex recipe of backends/etcd)"

// ParseOptions reads the simulated etcd's options (same names, same
// defaults: etcd.Table) and refuses the values that the real server and
// clientv3 cannot honour, naming the option and why.
func ParseOptions(given map[string]string) (etcd.Options, error) {
	o, err := liveform.ParseOptions("etcd (live)", etcd.Table, given, simOnly, ErrNotHonoured)
	if err != nil {
		return o, err
	}
	refuse := func(name, why string) error {
		return fmt.Errorf("etcd (live) option %s=%s: %s: %w", name, given[name], why, ErrNotHonoured)
	}
	switch {
	case o.Lock != etcd.LockMutex:
		return o, refuse("lock", "only clientv3's concurrency.Mutex runs live, the recipe as clientv3 v3.7.3 writes it "+
			"(the simple txn lock is locklab's own recipe, not a library's)")
	case !o.CheckAfterWait:
		return o, refuse("check-after-wait", "clientv3 v3.7.3's Mutex always checks its own key after waiting (since 3.4.4); "+
			"3.4.3's behaviour (etcd issue 11456) is not the pinned client's, and live runs the pinned client's")
	}
	if o.Tick < time.Millisecond || o.Tick%time.Millisecond != 0 {
		return o, refuse("tick", "etcd's --heartbeat-interval is a whole number of milliseconds, at least 1")
	}
	if o.ElectionTimeout < 5*o.Tick || o.ElectionTimeout%time.Millisecond != 0 {
		return o, refuse("election-timeout", "etcd's --election-timeout is whole milliseconds, at least 5 heartbeat intervals")
	}
	return o, nil
}

// ttlSeconds is the TTL of a lease clientv3 asks for: whole seconds (rounded
// up), at least least (the server's minimum, 1.5 election timeouts rounded
// up).
func ttlSeconds(ttl, least time.Duration) int {
	return int((max(ttl, least) + time.Second - 1) / time.Second)
}

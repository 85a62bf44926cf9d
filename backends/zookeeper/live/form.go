package live

import (
	"context"
	"sync"
	"time"

	"github.com/locklab/locklab/internal/netgate"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"
)

// ZooKeeper's live form registers itself with the live runner.
func init() {
	liveform.Register("zookeeper", liveform.Form{
		Note:     "zookeeper 3.8 (Debian) standalone or ensemble, go-zookeeper with a Curator-style recipe",
		Options:  Table,
		Describe: describeZooKeeper,
		Deploy:   deployZooKeeper,
	})
}

// The faults a real ZooKeeper ensemble cannot run, and why.
const (
	zkNoClock = "clock-jump of a ZooKeeper server is refused live: ZooKeeper expires sessions on the JVM's monotonic " +
		"clock, which a libfaketime wall-clock jump leaves alone (measured: a session survived +60 s, LIVE.md section 6), " +
		"so the fault would reach nothing the lock depends on; a clock jump of a client runs"
	zkNoOneWay = "a one-way cut between ZooKeeper servers cannot run live: their links are TCP connections through " +
		"per-link proxies, and a proxy that holds a connection holds both of its directions; splits and isolations run"
)

func describeZooKeeper(t scenario.Test) (liveform.Description, error) {
	o, err := ParseOptions(t.SystemOptions)
	if err != nil {
		return liveform.Description{}, liveform.Refusal(err, ErrNotHonoured)
	}
	return Describe(o), nil
}

func deployZooKeeper(d liveform.Deployment) (*liveform.Deployed, error) {
	o, err := ParseOptions(d.Test.SystemOptions)
	if err != nil {
		return nil, err
	}
	// Three JVMs starting at once on a loaded two-core machine were seen
	// to take over 10 s before electing: ZooKeeper gets at least 30 s.
	ens, err := Start(d.Ctx, o, d.Dir, max(d.Setup, 30*time.Second))
	if err != nil {
		return nil, err
	}
	reg := NewRegistry()
	ctx, cancel := context.WithCancel(context.Background())
	clients := liveform.NewClients[*Client]()
	var mu sync.Mutex
	expired := 0
	sys := ens.Perform(Describe(o), func(client string) string {
		if c, ok := clients.Get(client); ok {
			return c.Server()
		}
		return ""
	})
	sys.NewLock = func(lc liveform.Client) lockapi.Lock {
		e, fork := lc.Env, lc.Fork
		// Its own server is a draw of the seed, as the simulated
		// client's is (a stream of its own: the workload's draws
		// stay as they were).
		first := sim.NewRand(d.Test.Seed, "client/"+e.Name()+"/zookeeper-server").IntN(o.Servers)
		c, err := ens.NewClient(e, fork, netgate.New(d.Net, e.Name(), ens.ServerAt), reg, first)
		if err != nil {
			return liveform.FailedLock{Err: err}
		}
		// The run stops when its Net closes: calls blocked in the
		// library return at once.
		clients.Add(d.Net, e.Name(), c)
		return c
	}
	sys.Events = func(record func(f string, targets []string, detail string)) {
		err := ens.Observe(ctx, reg, func(x Expiry) {
			mu.Lock()
			expired++
			mu.Unlock()
			var targets []string
			if x.Leader != "" {
				targets = append(targets, x.Leader)
			}
			if x.Client != "" {
				targets = append(targets, x.Client)
			}
			record("session-expired", targets, x.String())
		})
		if err != nil {
			record("observer-failed", nil, err.Error())
		}
	}
	sys.Tokens = true
	sys.Figures = func(time.Duration) map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return map[string]any{"sessions_expired": expired}
	}
	sys.Versions = map[string]string{"zookeeper": ens.ServerVersion(), "client": Version}
	sys.Close = sync.OnceFunc(func() {
		cancel()
		clients.Close()
		ens.Close()
	})
	return sys, nil
}

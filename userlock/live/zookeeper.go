package userlive

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/locklab/locklab/backends/zookeeper"
	zkl "github.com/locklab/locklab/backends/zookeeper/live"
	"github.com/locklab/locklab/internal/netgate"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/sim"
)

// zkLock is a user's ZooKeeper lock as its live form runs it;
// RegisterZooKeeper fills it from the user's registration.
type zkLock struct {
	// Name is the lock's system name (for errors).
	Name string
	// New makes the lock of one client from its environment (the machine's
	// clocks and sleep, gated by the client's pauses) and its own
	// go-zookeeper connection, the library's *zk.Conn unwrapped.
	New func(env lockapi.Env, conn *zk.Conn) lockapi.Lock
	// LockPath is the node whose children contend for the lock of a key:
	// the directories the expiry observer watches.
	LockPath func(key string) string
	// Tokens says the lock's leases carry fencing tokens.
	Tokens bool
	// Guard opens one run's record of the lock's conduct: wrap wraps each
	// client's lock (userlock.Guard: a panic becomes an error, a malformed
	// lease is noted), misconduct lists what the record holds so far, one
	// line each. nil: the locks run unwrapped.
	Guard func() (wrap func(l lockapi.Lock, env lockapi.Env) lockapi.Lock, misconduct func() []string)
}

// zkClientVersion is the client library a user's lock is given live.
var zkClientVersion, _, _ = strings.Cut(zkl.Version, " (")

// zooKeeperForm is the live form of a user's ZooKeeper lock: the ensemble
// the built-in zookeeper system starts live (Debian's ZooKeeper 3.8, zk1..zkN,
// options servers, session-timeout, tick, election-timeout as in the
// simulator, scaled by --scale), the same names, roles and faults (pause,
// crash and restart of servers, partitions through the proxies between
// them, clients paused and cut through their gates, clock jumps of
// clients), and for each client its own *zk.Conn, connected through the
// client's gate to the server the seed draws for it, handed to l.New.
//
// Each client's session events (the channel zk.Connect returns) are read by
// a goroutine of the form's: the lock sees its session through
// conn.State() and conn.SessionID(). Misconduct the guard records is
// written into the history as it happens (a "lock-misconduct" event naming
// the client and the call) and listed in the run's figures
// (lock_misconduct): the check lock-conduct itself audits only simulated
// runs. Session expiries are recorded as "session-expired" events by an
// observer of the lock directories (see zkObserver for what it can see).
func zooKeeperForm(l zkLock) liveform.Form {
	return liveform.Form{
		Note:    "zookeeper 3.8 (Debian) standalone or ensemble; your lock on " + zkClientVersion + "'s *zk.Conn",
		Options: zookeeper.ServerOptions,
		Describe: func(t scenario.Test) (liveform.Description, error) {
			o, err := parseZooKeeper(t.SystemOptions)
			if err != nil {
				return liveform.Description{}, err
			}
			return zkl.Describe(o), nil
		},
		Deploy: func(d liveform.Deployment) (*liveform.Deployed, error) { return deployZooKeeper(l, d) },
	}
}

// parseZooKeeper reads the options of a user's ZooKeeper lock (the
// ensemble's: zookeeper.ServerOptions) and refuses what a real ensemble
// cannot honour.
func parseZooKeeper(given map[string]string) (zookeeper.Options, error) {
	if _, err := zookeeper.ServerOptions.Parse(given); err != nil {
		return zookeeper.Options{}, err
	}
	return zkl.ParseOptions(given)
}

func deployZooKeeper(l zkLock, d liveform.Deployment) (*liveform.Deployed, error) {
	if l.New == nil || l.LockPath == nil {
		return nil, fmt.Errorf("zookeeper lock %s: no New or LockPath", l.Name)
	}
	o, err := parseZooKeeper(d.Test.SystemOptions)
	if err != nil {
		return nil, err
	}
	// As the built-in form: three JVMs starting at once on a loaded
	// machine may take over 10 s to elect.
	ens, err := zkl.Start(d.Ctx, o, d.Dir, max(d.Setup, 30*time.Second))
	if err != nil {
		return nil, err
	}
	conns := liveform.NewClients[*zk.Conn]()
	sys := ens.Perform(zkl.Describe(o), func(client string) string {
		if c, ok := conns.Get(client); ok {
			return c.Server()
		}
		return ""
	})
	ctx, cancel := context.WithCancel(context.Background())
	obs := newZKObserver(ctx, d.Net.Done(), ens.Addrs(), o.SessionTimeout)
	wrap := func(lk lockapi.Lock, _ lockapi.Env) lockapi.Lock { return lk }
	misconduct := func() []string { return nil }
	if l.Guard != nil {
		wrap, misconduct = l.Guard()
	}
	rec := &recorder{misconduct: misconduct}
	sys.Events = func(record func(f string, targets []string, detail string)) {
		rec.set(record)
		if err := obs.start(func(x zkExpiry) {
			targets := []string{x.client}
			if leader := ens.Leader(); leader != "" {
				targets = append([]string{leader}, targets...)
			}
			rec.record("session-expired", targets, x.String())
		}); err != nil {
			rec.record("observer-failed", nil, err.Error())
		}
	}
	sys.NewLock = func(lc liveform.Client) lockapi.Lock {
		name := lc.Env.Name()
		// The client's own server is a draw of the seed, as the built-in
		// live client's is.
		first := sim.NewRand(d.Test.Seed, "client/"+name+"/zookeeper-server").IntN(o.Servers)
		conn, events, err := ens.Connect(netgate.New(d.Net, name, ens.ServerAt), first)
		if err != nil {
			return liveform.FailedLock{Err: fmt.Errorf("zookeeper client %s: %w", name, err)}
		}
		// The run stops when its Net closes: calls blocked in the library
		// return at once.
		conns.Add(d.Net, name, conn)
		go obs.follow(name, conn, events)
		return &zkTracked{Lock: wrap(l.New(lc.Env, conn), lc.Env), client: name, lockPath: l.LockPath, obs: obs, rec: rec}
	}
	sys.Tokens = l.Tokens
	sys.Figures = func(time.Duration) map[string]any {
		bad := misconduct()
		if bad == nil {
			bad = []string{}
		}
		return map[string]any{"sessions_expired": obs.expiries(), "lock_misconduct": bad}
	}
	sys.Versions = map[string]string{"zookeeper": ens.ServerVersion(), "client": zkClientVersion}
	sys.Close = sync.OnceFunc(func() {
		cancel()
		conns.Close()
		ens.Close()
	})
	return sys, nil
}

// recorder records the system's events once the run gives the function
// that does (Deployed.Events), and the guard's misconduct as it comes.
type recorder struct {
	misconduct func() []string

	mu       sync.Mutex
	f        func(f string, targets []string, detail string)
	reported int // misconduct lines recorded so far
}

func (r *recorder) set(f func(string, []string, string)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.f = f
}

func (r *recorder) record(f string, targets []string, detail string) {
	r.mu.Lock()
	rec := r.f
	r.mu.Unlock()
	if rec != nil {
		rec(f, targets, detail)
	}
}

// reportMisconduct records each misconduct line not yet recorded (each
// names its client and call), once.
func (r *recorder) reportMisconduct() {
	bad := r.misconduct()
	r.mu.Lock()
	rec, from := r.f, r.reported
	r.reported = len(bad)
	r.mu.Unlock()
	if rec == nil {
		return
	}
	for _, line := range bad[from:] {
		rec("lock-misconduct", nil, line)
	}
}

// zkTracked is a client's lock as the form runs it: it tells the observer
// which lock directories to watch and when the client is in a call of its
// lock, and records the misconduct of each call when it returns.
type zkTracked struct {
	lockapi.Lock
	client   string
	lockPath func(string) string
	obs      *zkObserver
	rec      *recorder
}

func (t *zkTracked) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	t.obs.watch(t.lockPath(key))
	defer t.obs.enter(t.client)()
	defer t.rec.reportMisconduct()
	return t.Lock.Acquire(key, wait)
}

func (t *zkTracked) Release(l lockapi.Lease) error {
	defer t.obs.enter(t.client)()
	defer t.rec.reportMisconduct()
	return t.Lock.Release(l)
}

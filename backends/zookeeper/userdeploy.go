package zookeeper

import (
	"path"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// ServerOptions are the options of the zookeeper system that concern the
// ensemble, not Curator's recipe nor the client's timing (go-zookeeper
// derives its ping and read timeouts from the session timeout): what a
// user's own lock over the generic API (Conn) is deployed with.
var ServerOptions = opt.Table[Options]{Owner: "zookeeper servers",
	Options: Table.Only("servers", "session-timeout", "tick", "election-timeout")}

// UserLock is a user's lock over the generic API, as DeployUser deploys it.
type UserLock struct {
	// LockPath is the node whose children contend for the lock of a
	// workload's key: the record of grants follows them.
	LockPath func(key string) string
	// New makes the lock of one client process from its connection.
	New func(p *sim.Proc, conn *Conn) lockapi.Lock
	// Misconduct, when set, is told of a call of the connection from a
	// goroutine the simulator does not run (client, call, what).
	Misconduct func(client, call, what string)
}

// lockPaths maps the lock directories of a user's lock to the workload's
// keys, as the keys are asked for.
type lockPaths struct {
	dir  func(key string) string
	keys map[string]string // directory -> key
}

// lockKey is the key of the lock whose contender p is.
func (e *Ensemble) lockKey(p string) (string, bool) {
	if e.paths == nil {
		return LockNode(p)
	}
	k, ok := e.paths.keys[path.Dir(p)]
	return k, ok
}

// lockDir is the node whose children contend for key.
func (e *Ensemble) lockDir(key string) string {
	if e.paths == nil {
		return "/lock/" + key
	}
	return e.paths.dir(key)
}

// keyed wraps a user's lock so that the record of grants follows each key
// it is asked for.
type keyed struct {
	lockapi.Lock
	paths *lockPaths
}

func (k keyed) Acquire(key string, wait time.Duration) (lockapi.Lease, error) {
	k.paths.keys[path.Clean(k.paths.dir(key))] = key
	return k.Lock.Acquire(key, wait)
}

// DeployUser adds the ensemble (opts: ServerOptions) for a user's lock over
// the generic API: each client process gets a Conn, and the ensemble keeps
// its record of grants (RecordGrants) over the user's lock paths: for the
// lock of key k, the holder is the session owning the lowest child (by
// sequence suffix) of LockPath(k), from the transaction that made it the
// lowest until its deletion or, after its session's expiry, until the
// leader's promise to the session ran out. The record sees the children of
// LockPath(k) once a client asked for k; it cannot see a lock kept
// otherwise (the node LockPath(k) itself, data written into a node), and
// it names as owner the child's path: a lock whose leases name their node
// (Lease.Owner = the path Create returned) is matched with it.
func DeployUser(w *sim.World, opts map[string]string, l UserLock) (system.Deployment, error) {
	o := DefaultOptions()
	so, err := ServerOptions.Parse(opts)
	if err != nil {
		return system.Deployment{}, err
	}
	o.Servers, o.SessionTimeout, o.Tick, o.ElectionTimeout = so.Servers, so.SessionTimeout, so.Tick, so.ElectionTimeout
	e, err := NewEnsemble(w, o)
	if err != nil {
		return system.Deployment{}, err
	}
	e.paths = &lockPaths{dir: l.LockPath, keys: map[string]string{}}
	grants := lockapi.NewGrantLog(1)
	e.RecordGrants(grants)
	var log *history.Log
	e.OnEvent = func(ev Event) {
		if log != nil && ev.F == system.EventSessionExpired {
			e.recordSessionExpiry(log, w, ev)
		}
	}
	return system.Deployment{
		Grants:  grants,
		Servers: e.Nodes(),
		NewLock: func(p *sim.Proc) lockapi.Lock {
			var report func(call, detail string, at time.Duration)
			if l.Misconduct != nil {
				client := p.Node().Name()
				report = func(call, detail string, _ time.Duration) { l.Misconduct(client, call, detail) }
			}
			return keyed{Lock: l.New(p, e.NewConn(p, report)), paths: e.paths}
		},
		Resolve:  e.Resolve,
		Roles:    Roles(),
		Record:   func(h *history.Log) { log = h },
		Messages: APIMessageTypes(),
		Figures: func() map[string]any {
			return map[string]any{"elections": e.Elections, "sessions_expired": e.Expired}
		},
	}, nil
}

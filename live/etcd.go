package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/locklab/locklab/backends/etcd"
	liveetcd "github.com/locklab/locklab/backends/etcd/live"
	"github.com/locklab/locklab/backends/live/netgate"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/nemesis"
)

func init() {
	register("etcd", Deployer{
		Note:     "etcd-server 3.4 (Debian), clientv3 carrying concurrency.Mutex's recipe",
		Options:  liveetcd.Table,
		Describe: describeEtcd,
		Deploy:   retryDeploy(deployEtcd),
	})
}

// The faults a real etcd cluster cannot run, and why.
const (
	etcdNoClock = "clock-jump of an etcd member cannot run live: etcd is a Go program, which reads time from the vDSO, " +
		"and libfaketime cannot move it (LIVE.md section 5); a clock jump of a client runs"
	etcdNoPeerCut = "a partition between etcd members is not built live: cutting one member-to-member link needs peer " +
		"proxies that read rafthttp's X-Server-From header (LIVE.md section 7); partitions between clients and members run"
	etcdNoDelay = "a delay of etcd's traffic cannot run live: real servers' messages do not pass through locklab " +
		"(delays of the storage's messages run)"
)

func describeEtcd(t harness.Test) (Description, error) {
	o, err := liveetcd.ParseOptions(t.SystemOptions)
	if errors.Is(err, liveetcd.ErrNotHonoured) {
		return Description{}, fmt.Errorf("%w: %w", ErrNotLive, err)
	}
	if err != nil {
		return Description{}, err
	}
	var servers []string
	for i := 1; i <= o.Members; i++ {
		servers = append(servers, fmt.Sprintf("etcd%d", i))
	}
	return Description{
		Servers: servers,
		Roles:   []string{"leader", "followers"},
		Resolve: func(role string) ([]string, bool) {
			switch role {
			case "leader", "followers":
				return servers, true
			}
			return nil, false
		},
		Refuse: func(f nemesis.Fault) string {
			return refuseRealServers(f, servers, []string{"leader", "followers"}, etcdNoClock, etcdNoPeerCut, etcdNoDelay)
		},
	}, nil
}

// refuseRealServers says why a fault cannot run on a cluster of real
// servers whose clocks libfaketime cannot move (noClock, "" if it can),
// whose server-to-server links locklab does not carry (noPeerCut) and whose
// messages do not pass through locklab (noDelay).
func refuseRealServers(f nemesis.Fault, servers, roles []string, noClock, noPeerCut, noDelay string) string {
	serverish := func(names []string) bool {
		for _, n := range names {
			if n == "servers" || slices.Contains(servers, n) || slices.Contains(roles, n) || prefixed(n, "server-of:", "servers-but:") {
				return true
			}
		}
		return false
	}
	switch f.Kind {
	case nemesis.ClockJump:
		if noClock != "" && serverish(f.Targets) {
			return noClock
		}
	case nemesis.Partition:
		switch {
		case len(f.Groups) > 0:
			n := 0
			for _, g := range f.Groups {
				if serverish(g) {
					n++
				}
			}
			if n > 1 {
				return noPeerCut
			}
		case len(f.From) > 0:
			if serverish(f.From) && serverish(f.To) {
				return noPeerCut
			}
		default:
			if serverish(f.Targets) {
				return noPeerCut
			}
		}
	case nemesis.Delay:
		if serverish(f.From) || serverish(f.To) {
			return noDelay
		}
	}
	return ""
}

func prefixed(s string, prefixes ...string) bool {
	for _, p := range prefixes {
		if len(s) > len(p) && s[:len(p)] == p {
			return true
		}
	}
	return false
}

// failedLock is the lock of a client whose library could not be set up:
// every call fails with that error.
type failedLock struct{ err error }

func (f failedLock) Acquire(string, time.Duration) (lockapi.Lease, error) {
	return lockapi.Lease{}, fmt.Errorf("%w: %w", f.err, lockapi.ErrNotAcquired)
}
func (f failedLock) Release(lockapi.Lease) error {
	return fmt.Errorf("%w: %w", f.err, lockapi.ErrNotHeld)
}

func deployEtcd(d Deployment) (*system, error) {
	o, err := liveetcd.ParseOptions(d.Test.SystemOptions)
	if err != nil {
		return nil, err
	}
	c, err := liveetcd.Start(d.Ctx, o, d.Dir, d.Setup)
	if err != nil {
		return nil, err
	}
	desc, _ := describeEtcd(d.Test)
	desc.Resolve = c.Resolve
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var clients []*liveetcd.Client
	expired := 0
	sys := &system{
		Description: desc,
		newLock: func(e *env, fork func() lockapi.Env) lockapi.Lock {
			cl, err := c.NewClient(e, fork, netgate.New(d.Net, e.name, c.ServerAt))
			if err != nil {
				return failedLock{err}
			}
			mu.Lock()
			clients = append(clients, cl)
			mu.Unlock()
			// The run stops when its Net closes: calls blocked in clientv3
			// (a Lock waiting its turn) return at once.
			go func() {
				select {
				case <-d.Net.Done():
					cl.Close()
				case <-ctx.Done():
				}
			}()
			return cl
		},
		events: func(record func(f string, targets []string, detail string)) {
			c.Observe(ctx, func(x liveetcd.Expiry) {
				mu.Lock()
				expired++
				mu.Unlock()
				targets := c.Names()
				if x.Leader != "" {
					targets = []string{x.Leader}
				}
				record("lease-expired", targets, x.String())
			})
		},
		pause:   c.Pause,
		resume:  c.Resume,
		crash:   c.Crash,
		restart: c.Restart,
		cut: func(from, to string) (bool, error) {
			if slices.Contains(desc.Servers, from) && slices.Contains(desc.Servers, to) {
				return true, fmt.Errorf("%s -> %s: %s", from, to, etcdNoPeerCut)
			}
			return false, nil
		},
		tokens: true,
		figures: func(time.Duration) map[string]any {
			mu.Lock()
			defer mu.Unlock()
			return map[string]any{"lease_expired": expired}
		},
		versions: map[string]string{"etcd": c.ServerVersion(), "client": liveetcd.Version},
		close: sync.OnceFunc(func() {
			cancel()
			mu.Lock()
			cls := slices.Clone(clients)
			mu.Unlock()
			for _, cl := range cls {
				cl.Close()
			}
			c.Close()
		}),
	}
	if o.Resource == etcd.ResourceEtcd {
		sys.storage = func(lock lockapi.Lock) lockapi.Storage {
			if cl, ok := lock.(*liveetcd.Client); ok {
				return cl.Guarded()
			}
			return failedStorage{fmt.Errorf("etcd: no client for the guarded resource")}
		}
	}
	return sys, nil
}

// failedStorage is the storage of a client whose library could not be set
// up: every call fails with that error.
type failedStorage struct{ err error }

func (f failedStorage) Read(string, uint64) (int64, error) { return 0, f.err }
func (f failedStorage) Write(string, int64, uint64) error  { return f.err }

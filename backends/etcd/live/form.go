package live

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/locklab/locklab/backends/etcd"
	"github.com/locklab/locklab/internal/netgate"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/scenario"
)

// The live etcd registers itself with the live runner: importing this
// package (backends/builtin does) makes `--live --system etcd` run it.
func init() {
	liveform.Register("etcd", liveform.Form{
		Note:     "etcd-server 3.4 (Debian), clientv3 carrying concurrency.Mutex's recipe",
		Options:  Table,
		Describe: describeEtcd,
		Deploy:   liveform.RetryDeploy(deployEtcd),
	})
}

// The faults a real etcd cluster cannot run, and why.
const (
	etcdNoClock = "clock-jump of an etcd member cannot run live: etcd is a Go program, which reads time from the vDSO, " +
		"and libfaketime cannot move it (LIVE.md section 5); a clock jump of a client runs"
	etcdNoPeerCut = "a partition between etcd members is not built live: cutting one member-to-member link needs peer " +
		"proxies that read rafthttp's X-Server-From header (LIVE.md section 7); partitions between clients and members run"
)

func describeEtcd(t scenario.Test) (liveform.Description, error) {
	o, err := ParseOptions(t.SystemOptions)
	if err != nil {
		return liveform.Description{}, liveform.Refusal(err, ErrNotHonoured)
	}
	return Describe(o.Members), nil
}

// Describe describes a live cluster of members (etcd1..etcdN): a Raft
// cluster's roles, and the faults real etcd servers cannot run.
func Describe(members int) liveform.Description {
	desc := liveform.RaftCluster(liveform.ServerNames(members, etcd.MemberName))
	desc.Refuse = liveform.RefuseRaftCluster("etcd", desc.Servers, etcdNoClock, etcdNoPeerCut)
	return desc
}

// Perform is what a started cluster gives a live deployment whatever lock
// runs on it: desc (see Describe) with its roles resolved on the running
// members (the leader their status names), and the faults its members
// perform: pause and resume (SIGSTOP, SIGCONT), crash and restart. A cut
// between members fails (Describe refuses it before the run: there are no
// peer proxies). The caller adds the locks, events, figures and Close.
func (c *Cluster) Perform(desc liveform.Description) *liveform.Deployed {
	desc.Resolve = c.Resolve
	return &liveform.Deployed{
		Description: desc,
		Pause:       c.Pause,
		Resume:      c.Resume,
		Crash:       c.Crash,
		Restart:     c.Restart,
		Cut: func(from, to string) (bool, error) {
			if slices.Contains(desc.Servers, from) && slices.Contains(desc.Servers, to) {
				return true, fmt.Errorf("%s -> %s: %s", from, to, etcdNoPeerCut)
			}
			return false, nil
		},
	}
}

func deployEtcd(d liveform.Deployment) (*liveform.Deployed, error) {
	o, err := ParseOptions(d.Test.SystemOptions)
	if err != nil {
		return nil, err
	}
	c, err := Start(d.Ctx, o, d.Dir, d.Setup)
	if err != nil {
		return nil, err
	}
	desc, _ := describeEtcd(d.Test)
	ctx, cancel := context.WithCancel(context.Background())
	clients := liveform.NewClients[*Client]()
	events, figures := c.Expiries(ctx)
	sys := c.Perform(desc)
	sys.NewLock = func(lc liveform.Client) lockapi.Lock {
		e, fork := lc.Env, lc.Fork
		cl, err := c.NewClient(e, fork, netgate.New(d.Net, e.Name(), c.ServerAt))
		if err != nil {
			return liveform.FailedLock{Err: err}
		}
		// The run stops when its Net closes: calls blocked in clientv3
		// (a Lock waiting its turn) return at once.
		clients.Add(d.Net, e.Name(), cl)
		return cl
	}
	sys.Events = events
	sys.Tokens = true
	sys.Figures = figures
	sys.Versions = map[string]string{"etcd": c.ServerVersion(), "client": Version}
	sys.Close = sync.OnceFunc(func() {
		cancel()
		clients.Close()
		c.Close()
	})
	if o.Resource == etcd.ResourceEtcd {
		sys.Storage = func(lock lockapi.Lock) lockapi.Storage {
			if cl, ok := lock.(*Client); ok {
				return cl.Guarded()
			}
			return liveform.FailedStorage{Err: fmt.Errorf("etcd: no client for the guarded resource")}
		}
	}
	return sys, nil
}

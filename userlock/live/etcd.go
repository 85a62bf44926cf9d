package userlive

import (
	"context"
	"fmt"
	"maps"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/backends/etcd"
	etcdlive "github.com/locklab/locklab/backends/etcd/live"
	"github.com/locklab/locklab/internal/netgate"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/scenario"
)

// etcdSimOnly are the options of a user's lock over etcd that only the
// simulated client has: live, the lock's own contexts bound its calls and
// gRPC retries on its own.
var etcdSimOnly = map[string]string{
	"request-timeout": "live, the lock's own context deadlines bound its calls to clientv3",
	"attempt-timeout": "clientv3 retries within the call's context through gRPC, with no per-attempt setting",
	"backoff-max":     "clientv3's back-off is gRPC's own, not a setting",
}

// etcdTable is the live option table of a user's lock over etcd.
var etcdTable = liveform.WithoutSimOnly("etcd (your lock, live)", etcd.UserTable, etcdSimOnly)

// registerEtcdForm registers the live form of the user's lock name over etcd:
// the real etcd cluster the built-in etcd's live form starts (etcd-server,
// backends/etcd/live), each client's lock made by newLock over a real
// *clientv3.Client whose connections pass the client's pause gate. tokens
// says the lock's leases carry fencing tokens (fenced storage may check them).
func registerEtcdForm(name string, tokens bool, newLock func(env lockapi.Env, cli *clientv3.Client) lockapi.Lock) {
	liveform.Register(name, liveform.Form{
		Note:     "etcd-server 3.4 (Debian), your lock over go.etcd.io/etcd/client/v3 v3.7.3",
		Options:  etcdTable,
		Describe: describeEtcd,
		Deploy:   liveform.RetryDeploy(func(d liveform.Deployment) (*liveform.Deployed, error) { return deployEtcd(d, tokens, newLock) }),
	})
}

// etcdOptions reads the live options: the servers' options as the built-in
// etcd's live form reads them (same checks), refusing the sim-only ones.
func etcdOptions(given map[string]string) (etcd.Options, error) {
	if err := liveform.RefuseSimOnly("etcd (your lock, live)", given, etcdSimOnly, etcdlive.ErrNotHonoured); err != nil {
		return etcd.Options{}, err
	}
	if _, err := etcd.ParseUser(given); err != nil {
		return etcd.Options{}, err
	}
	return etcdlive.ParseOptions(maps.Clone(given))
}

func describeEtcd(t scenario.Test) (liveform.Description, error) {
	o, err := etcdOptions(t.SystemOptions)
	if err != nil {
		return liveform.Description{}, fmt.Errorf("%w: %w", liveform.ErrNotLive, err)
	}
	return etcdlive.Describe(o.Members), nil
}

// closer closes a client's *clientv3.Client when the run ends.
type closer struct{ cli *clientv3.Client }

func (c closer) Close() { c.cli.Close() }

func deployEtcd(d liveform.Deployment, tokens bool, newLock func(lockapi.Env, *clientv3.Client) lockapi.Lock) (*liveform.Deployed, error) {
	o, err := etcdOptions(d.Test.SystemOptions)
	if err != nil {
		return nil, err
	}
	c, err := etcdlive.Start(d.Ctx, o, d.Dir, d.Setup)
	if err != nil {
		return nil, err
	}
	desc, _ := describeEtcd(d.Test)
	ctx, cancel := context.WithCancel(context.Background())
	clients := liveform.NewClients[closer]()
	events, figures := c.Expiries(ctx)
	sys := c.Perform(desc)
	sys.Tokens = tokens
	sys.NewLock = func(lc liveform.Client) lockapi.Lock {
		e := lc.Env
		cli, err := c.NewClientV3(e.Name(), netgate.New(d.Net, e.Name(), c.ServerAt))
		if err != nil {
			return liveform.FailedLock{Err: err}
		}
		clients.Add(d.Net, e.Name(), closer{cli})
		return newLock(e, cli)
	}
	sys.Events = events
	sys.Figures = figures
	sys.Versions = map[string]string{"etcd": c.ServerVersion(), "client": "go.etcd.io/etcd/client/v3 v3.7.3"}
	sys.Close = sync.OnceFunc(func() {
		cancel()
		clients.Close()
		c.Close()
	})
	return sys, nil
}

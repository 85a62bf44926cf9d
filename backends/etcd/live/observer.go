package live

import (
	"context"
	"fmt"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Expiry is a lease expiry the observer saw: a lock key deleted because its
// lease is gone.
type Expiry struct {
	Lease    int64
	Key      string
	Revision int64
	Leader   string // the member that leads when it was seen ("" if none answered)
}

func (e Expiry) String() string {
	return fmt.Sprintf("lease %x expired (no keep-alive reached the leader for its TTL); key %s deleted at revision %d "+
		"(seen by locklab's watch of %s: the key's lease no longer exists)", e.Lease, e.Key, e.Revision, LockPrefix)
}

// Observe watches every lock key with the admin client and calls seen for
// each key deleted with its lease (a lease expiry; a client's release
// deletes the key but keeps the lease) until ctx ends. It returns once the
// watch is registered.
func (c *Cluster) Observe(ctx context.Context, seen func(Expiry)) {
	wch := c.admin.Watch(clientv3.WithRequireLeader(ctx), LockPrefix, clientv3.WithPrefix(), clientv3.WithPrevKV(),
		clientv3.WithCreatedNotify())
	<-wch // the created notification
	go func() {
		for resp := range wch {
			for _, ev := range resp.Events {
				if ev.Type != clientv3.EventTypeDelete || ev.PrevKv == nil || ev.PrevKv.Lease == 0 {
					continue
				}
				tctx, cancel := context.WithTimeout(ctx, c.opts.RetryBudget)
				ttl, err := c.admin.TimeToLive(tctx, clientv3.LeaseID(ev.PrevKv.Lease))
				cancel()
				if err != nil || ttl.TTL != -1 {
					continue
				}
				seen(Expiry{Lease: ev.PrevKv.Lease, Key: string(ev.Kv.Key), Revision: resp.Header.Revision, Leader: c.Leader()})
			}
		}
	}()
}

// Expiries are a deployment's Events and Figures for the leases the cluster
// expires (Observe, until ctx ends): each a lease-expired event (targets:
// the leader that saw it, or every member when none led), counted in the
// figure lease_expired.
func (c *Cluster) Expiries(ctx context.Context) (events func(record func(f string, targets []string, detail string)),
	figures func(time.Duration) map[string]any) {
	var mu sync.Mutex
	expired := 0
	events = func(record func(f string, targets []string, detail string)) {
		c.Observe(ctx, func(x Expiry) {
			mu.Lock()
			expired++
			mu.Unlock()
			targets := c.Names()
			if x.Leader != "" {
				targets = []string{x.Leader}
			}
			record("lease-expired", targets, x.String())
		})
	}
	figures = func(time.Duration) map[string]any {
		mu.Lock()
		defer mu.Unlock()
		return map[string]any{"lease_expired": expired}
	}
	return events, figures
}

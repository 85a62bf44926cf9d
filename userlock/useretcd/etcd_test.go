package useretcd_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/userlock"
	"github.com/locklab/locklab/userlock/useretcd"
)

// kvLock is a lock as a user writes it directly against etcd's KV API (not
// clientv3's concurrency.Mutex): a lease, a txn that puts the key under the
// lease if its create revision is 0, the key's create revision as the
// fencing token, release by a delete guarded by the key's mod revision, the
// lease renewed with KeepAliveOnce when the next acquire reuses it. No Watch:
// a waiter polls.
type kvLock struct {
	env   userlock.Env
	cli   useretcd.Etcd
	ttl   int64
	lease clientv3.LeaseID
}

func newKVLock(env userlock.Env, cli useretcd.Etcd) userlock.Lock {
	return &kvLock{env: env, cli: cli, ttl: 5}
}

// session returns a live lease, renewing the one it has (KeepAliveOnce) or
// granting a new one, and the moment before the request (the deadline's
// origin).
func (l *kvLock) session(ctx context.Context) (time.Duration, error) {
	sent := l.env.Mono()
	if l.lease != 0 {
		if _, err := l.cli.KeepAliveOnce(ctx, l.lease); err == nil {
			return sent, nil
		} else if !errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return 0, err
		}
	}
	g, err := l.cli.Grant(ctx, l.ttl)
	if err != nil {
		return 0, err
	}
	l.lease = g.ID
	return sent, nil
}

func outcome(err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", err, userlock.ErrUnknown)
	}
	return fmt.Errorf("%w: %w", err, userlock.ErrNotAcquired)
}

func (l *kvLock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	ctx := context.Background()
	until := l.env.Mono() + wait
	for {
		sent, err := l.session(ctx)
		if err != nil {
			return userlock.Lease{}, outcome(err)
		}
		owner := fmt.Sprintf("%s/%x", l.env.Name(), int64(l.lease))
		r, err := l.cli.Txn(ctx).
			If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, owner, clientv3.WithLease(l.lease))).
			Else(clientv3.OpGet(key)).Commit()
		if err != nil {
			return userlock.Lease{}, outcome(err)
		}
		lease := userlock.Lease{Key: key, Owner: owner, HasToken: true, Deadline: sent + time.Duration(l.ttl)*time.Second}
		if r.Succeeded {
			lease.Token = uint64(r.Header.Revision)
			return lease, nil
		}
		if kvs := r.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 && string(kvs[0].Value) == owner {
			lease.Token = uint64(kvs[0].CreateRevision) // our own earlier put
			return lease, nil
		}
		if l.env.Mono() >= until {
			return userlock.Lease{}, fmt.Errorf("%s is held: %w", key, userlock.ErrNotAcquired)
		}
		l.env.Sleep(50 * time.Millisecond)
	}
}

func (l *kvLock) Release(lease userlock.Lease) error {
	r, err := l.cli.Txn(context.Background()).
		If(clientv3.Compare(clientv3.ModRevision(lease.Key), "=", int64(lease.Token))).
		Then(clientv3.OpDelete(lease.Key)).Commit()
	switch {
	case err != nil:
		return fmt.Errorf("release %s: %w: %w", lease.Key, err, userlock.ErrUnknown)
	case !r.Succeeded:
		return fmt.Errorf("release %s: the key is no longer ours: %w", lease.Key, userlock.ErrNotHeld)
	}
	return nil
}

// kvLockSpec is the test's lock as a user registers it.
var kvLockSpec = useretcd.EtcdLock{
	Spec: userlock.Spec{Name: "test-etcd-kvlock", Doc: "lease + txn on CreateRevision == 0, token = create revision",
		Tokens: true, SafeRelease: true},
	New: newKVLock,
}

// registerEtcd registers l's simulated system for the test.
func registerEtcd(t *testing.T, l useretcd.EtcdLock) {
	t.Helper()
	system.Register(l.SimSystem())
	t.Cleanup(func() { system.Unregister(l.Name) })
}

func variant(t *testing.T, l useretcd.EtcdLock, name string) scenario.Test {
	t.Helper()
	v, err := l.Scenarios()[0].FindVariant(name)
	require.NoError(t, err)
	return v.Test
}

// TestAnEtcdKVLockUnderAHolderPause: the user's lock over the simulated etcd,
// staged with locklab's GC pause of the holder. With unfenced storage the
// paused holder's write lands after the lock passed on: INVALID, and the
// servers' record backs it: the holder's grant ended when its lease ran out
// (the leader revoked it), before the next holder's began, and no promise of
// the record was broken: the lock passed on as etcd promised, the holder
// wrote on a lease it no longer had. With fenced storage (the create revision
// checked) the stale write is refused: valid.
func TestAnEtcdKVLockUnderAHolderPause(t *testing.T) {
	registerEtcd(t, kvLockSpec)
	cases := []struct {
		variant string
		result  models.Result
	}{
		{"gc-pause", models.Invalid},
		{"gc-pause-fenced", models.Valid},
	}
	for _, c := range cases {
		t.Run(c.variant, func(t *testing.T) {
			p, err := harness.Prepare(variant(t, kvLockSpec, c.variant))
			require.NoError(t, err)
			p.RecordGrants()
			r, err := p.Run()
			require.NoError(t, err)
			cs := verdict(r, "critical-sections")
			require.NotEmpty(t, cs.Check)
			assert.Equal(t, c.result, cs.Result, cs.Reason)
			assert.Equal(t, models.Valid, verdict(r, userlock.ConductCheck).Result, verdict(r, userlock.ConductCheck).Reason)

			grants := p.Deployment.Grants.Grants()
			require.GreaterOrEqual(t, len(grants), 2, "the record holds the grants of the lock")
			assert.Empty(t, p.Deployment.Grants.Breaches(), "etcd kept its promises")
			var c1, next *int
			for i, g := range grants {
				switch {
				case g.Client == "c1" && c1 == nil:
					c1 = &i
				case c1 != nil && next == nil && g.Client != "c1":
					next = &i
				}
			}
			require.NotNil(t, c1)
			require.NotNil(t, next, "the lock passed on: %v", grants)
			first, second := grants[*c1], grants[*next]
			assert.Equal(t, "k", first.Key)
			assert.Zero(t, first.Released, "c1 never released: its lease ran out")
			assert.LessOrEqual(t, first.Until, second.At, "c1's grant ended before c2's began")
			if c.result == models.Invalid {
				var late bool
				for _, e := range r.Events {
					late = late || (e.Node == "c1" && e.F == history.FWrite && e.Type == history.OK &&
						time.Duration(e.Time) > first.Until)
				}
				assert.True(t, late, "c1's write applied after its grant ended at %v", first.Until)
			}
		})
	}
}

// TestAnEtcdKVLockRunIsDeterministic: two runs of the same seed give the same
// history, byte for byte.
func TestAnEtcdKVLockRunIsDeterministic(t *testing.T) {
	registerEtcd(t, kvLockSpec)
	tc := scenario.Test{System: kvLockSpec.Name, Clients: 3, Seed: 7, Time: 20 * time.Second, Nemesis: "random"}
	var outs [2][]byte
	for i := range outs {
		r, err := harness.Run(tc)
		require.NoError(t, err)
		var b bytes.Buffer
		require.NoError(t, history.Write(&b, r.Events))
		outs[i] = b.Bytes()
	}
	require.Greater(t, bytes.Count(outs[0], []byte("\n")), 50, "the clients did something")
	assert.Equal(t, outs[0], outs[1])
}

// watchingLock calls Watch and KeepAlive, which the simulator does not offer.
type watchingLock struct {
	*kvLock
}

func (l watchingLock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	for range l.cli.Watch(context.Background(), key) {
	}
	_, _ = l.cli.KeepAlive(context.Background(), 1)
	return l.kvLock.Acquire(key, wait)
}

// TestWatchAndKeepAliveAreReportedInTheSimulator: a lock that calls Watch or
// KeepAlive is told (a closed, cancelled watch; an error) and lock-conduct
// names the call.
func TestWatchAndKeepAliveAreReportedInTheSimulator(t *testing.T) {
	l := useretcd.EtcdLock{Spec: userlock.Spec{Name: "test-etcd-watching", Tokens: true},
		New: func(env userlock.Env, cli useretcd.Etcd) userlock.Lock {
			return watchingLock{newKVLock(env, cli).(*kvLock)}
		}}
	registerEtcd(t, l)
	r, err := harness.Run(scenario.Test{System: l.Name, Clients: 2, Seed: 1, Time: 5 * time.Second})
	require.NoError(t, err)
	v := verdict(r, userlock.ConductCheck)
	assert.Equal(t, models.Invalid, v.Result)
	assert.Contains(t, v.Reason, "not offered by the simulated etcd client")
}

// verdict is r's verdict of check (zero when it did not run).
func verdict(r scenario.Result, check string) models.Verdict {
	for _, v := range r.Verdicts {
		if v.Check == check {
			return v
		}
	}
	return models.Verdict{}
}

//go:debug randseednop=0

package clientgodiff

import (
	"context"
	"errors"
	"math/rand"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// identity is the elector's holder identity on both sides.
const identity = "c1"

var leaseResource = coordinationv1.Resource("leases")

// fakeLeases is the Lease API as client-go's typed client offers it, over
// the scripted API server, in the bubble's virtual time. Each request is
// bounded by timeout, as the rest client's Timeout (RenewDeadline, as the
// Kubernetes components configure the leader-election client) bounds it; a
// request whose context is already done is not sent. On an error the typed
// client returns an empty object, which LeaseLock.Create keeps.
type fakeLeases struct {
	coordinationv1client.LeaseInterface // the verbs the elector does not call: nil
	api                                 *api
	t0                                  time.Time
	timeout                             time.Duration
}

func (f *fakeLeases) Leases(string) coordinationv1client.LeaseInterface { return f }

func (f *fakeLeases) since(t *metav1.MicroTime) time.Duration {
	if t == nil {
		return 0
	}
	return t.Sub(f.t0).Truncate(time.Microsecond)
}

func (f *fakeLeases) at(d time.Duration) *metav1.MicroTime {
	return &metav1.MicroTime{Time: f.t0.Add(d)}
}

func (f *fakeLeases) recordOf(s coordinationv1.LeaseSpec) record {
	r := record{Acquire: f.since(s.AcquireTime), Renew: f.since(s.RenewTime)}
	if s.HolderIdentity != nil {
		r.Holder = *s.HolderIdentity
	}
	if s.LeaseDurationSeconds != nil {
		r.Duration = int(*s.LeaseDurationSeconds)
	}
	if s.LeaseTransitions != nil {
		r.Transitions = int(*s.LeaseTransitions)
	}
	return r
}

func (f *fakeLeases) do(ctx context.Context, verb string, l *coordinationv1.Lease) (*coordinationv1.Lease, error) {
	if err := ctx.Err(); err != nil {
		return &coordinationv1.Lease{}, err
	}
	// The rest client's timeout starts after the caller's context (a renew
	// poll's, RenewDeadline too), so it never ends first: in virtual time
	// both would end at the same instant, in any order.
	if d, ok := ctx.Deadline(); !ok || d.After(time.Now().Add(f.timeout)) {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	q := request{At: time.Since(f.t0), Verb: verb}
	if l != nil {
		q.Rec = f.recordOf(l.Spec)
		if verb == "update" {
			q.RV = -1 // no precondition
			if l.ResourceVersion != "" {
				rv, err := strconv.ParseInt(l.ResourceVersion, 10, 64)
				if err != nil {
					return &coordinationv1.Lease{}, err
				}
				q.RV = rv
			}
		}
	}
	ans := f.api.serve(q)
	if ans.Status == 0 {
		<-ctx.Done()
		return &coordinationv1.Lease{}, ctx.Err()
	}
	t := time.NewTimer(ans.Latency)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return &coordinationv1.Lease{}, ctx.Err()
	case <-t.C:
	}
	name := "lease"
	switch ans.Status {
	case 200, 201:
		dur, tr := int32(ans.Rec.Duration), int32(ans.Rec.Transitions)
		holder := ans.Rec.Holder
		return &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", ResourceVersion: strconv.FormatInt(ans.RV, 10)},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, LeaseTransitions: &tr,
				AcquireTime: f.at(ans.Rec.Acquire), RenewTime: f.at(ans.Rec.Renew)},
		}, nil
	case 404:
		return &coordinationv1.Lease{}, apierrors.NewNotFound(leaseResource, name)
	case 409:
		if ans.Reason == "AlreadyExists" {
			return &coordinationv1.Lease{}, apierrors.NewAlreadyExists(leaseResource, name)
		}
		return &coordinationv1.Lease{}, apierrors.NewConflict(leaseResource, name, errors.New("the object has been modified"))
	}
	return &coordinationv1.Lease{}, apierrors.NewInternalError(errors.New(ans.Reason))
}

func (f *fakeLeases) Get(ctx context.Context, _ string, _ metav1.GetOptions) (*coordinationv1.Lease, error) {
	return f.do(ctx, "get", nil)
}

func (f *fakeLeases) Create(ctx context.Context, l *coordinationv1.Lease, _ metav1.CreateOptions) (*coordinationv1.Lease, error) {
	return f.do(ctx, "create", l)
}

func (f *fakeLeases) Update(ctx context.Context, l *coordinationv1.Lease, _ metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	return f.do(ctx, "update", l)
}

// runClientGo runs client-go's LeaderElector for end of virtual time over
// schedule seed, Run again each time it returns, as a component restarted
// in the same process would: its requests and leadership.
func runClientGo(t *testing.T, seed uint64, end time.Duration) trace {
	s := drawSettings(seed)
	var tr trace
	var mu sync.Mutex // OnStartedLeading runs in a goroutine of its own
	lead := func(started bool, at time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		tr.Leading = append(tr.Leading, leadership{At: at, Started: started})
	}
	klog.SetLogger(logr.Discard())
	synctest.Test(t, func(t *testing.T) {
		t0 := time.Now()
		a := newAPI(seed, s)
		// wait.Jitter draws from math/rand's global source; the model
		// is given the same stream (see runModel).
		rand.Seed(int64(seed)) //nolint:staticcheck // seeding is what makes the draws comparable
		lock := &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Name: "lease", Namespace: "default"},
			Client:     &fakeLeases{api: a, t0: t0, timeout: s.RenewDeadline},
			LockConfig: resourcelock.ResourceLockConfig{Identity: identity},
		}
		le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
			Lock: lock, LeaseDuration: s.LeaseDuration, RenewDeadline: s.RenewDeadline, RetryPeriod: s.RetryPeriod,
			ReleaseOnCancel: s.ReleaseOnCancel, Name: "diff",
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) { lead(true, time.Since(t0)) },
				OnStoppedLeading: func() { lead(false, time.Since(t0)) },
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), end)
		defer cancel()
		for ctx.Err() == nil {
			le.Run(ctx)
		}
		synctest.Wait()
		tr.Requests = a.log
	})
	return tr.before(end)
}

package kubernetes

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// TestOptionsAreRefusedAsNewLeaderElectorRefusesThem: client-go's checks,
// in its order and words, with the options named; the guarded write in the
// API server is refused as not built.
func TestOptionsAreRefusedAsNewLeaderElectorRefusesThem(t *testing.T) {
	tests := []struct {
		name string
		opts map[string]string
		want []string // fragments of the error; none: accepted
	}{
		{"client-go's defaults", nil, nil},
		{"renew deadline equal to the lease duration", map[string]string{"renew-deadline": "15s"},
			[]string{"lease-duration", "renew-deadline", "leaseDuration must be greater than renewDeadline"}},
		{"renew deadline within the jittered retry period", map[string]string{"retry-period": "9s"},
			[]string{"renew-deadline", "retry-period", "renewDeadline must be greater than retryPeriod*JitterFactor"}},
		{"retry period zero", map[string]string{"retry-period": "0s"}, []string{"retry-period=0s", "retryPeriod must be greater than zero"}},
		{"sub-second lease duration (client-go accepts it, the API server refuses its writes)", map[string]string{"lease-duration": "900ms", "renew-deadline": "600ms", "retry-period": "100ms"}, nil},
		{"the guarded write in the API server", map[string]string{"resource": "apiserver"},
			[]string{"resource=apiserver", "not built", "transaction across two objects"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o, err := Table.Parse(tc.opts)
			if err == nil {
				err = o.Validate()
			}
			if len(tc.want) == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, f := range tc.want {
				assert.Contains(t, err.Error(), f)
			}
		})
	}
}

// TestLeaseDurationIsWrittenInWholeSeconds: leaseDurationSeconds is the
// duration rounded down, as client-go writes it.
func TestLeaseDurationIsWrittenInWholeSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{15 * time.Second: 15, 2500 * time.Millisecond: 2, 900 * time.Millisecond: 0} {
		assert.Equal(t, want, Options{LeaseDuration: d}.leaseSeconds(), "lease-duration %v", d)
	}
}

// newTestCluster is a default control plane on a quiet network, etcd's
// leader elected.
func newTestCluster(t *testing.T, o Options) (*sim.World, *Cluster) {
	t.Helper()
	w := sim.NewWorld(sim.Config{Seed: 1, Link: sim.Link{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond}})
	c, err := NewCluster(w, o)
	require.NoError(t, err)
	w.Run(5 * time.Second)
	return w, c
}

// TestTheAPIServerUpdatesLeasesByCompareAndSwap: create answers 409
// AlreadyExists when the Lease is there; an update with a stale
// resourceVersion answers 409 Conflict; with the current one it writes and
// the resourceVersion (etcd's mod revision) grows; an update of a Lease
// that does not exist answers 404.
func TestTheAPIServerUpdatesLeasesByCompareAndSwap(t *testing.T) {
	w, c := newTestCluster(t, DefaultOptions())
	n := w.AddNode("c1", sim.NodeOptions{})
	server := c.APIServers()[0].ID()
	var got []Response
	n.Spawn("c1", func(p *sim.Proc) {
		ask := func(r Request) Response {
			body, err := p.Call(server, r, time.Second)
			require.NoError(t, err)
			return body.(Response)
		}
		rec := Record{Holder: "c1", DurationSeconds: 15}
		created := ask(Request{Verb: VerbCreate, Name: "l", Record: rec})
		got = append(got, created,
			ask(Request{Verb: VerbCreate, Name: "l", Record: rec}),
			ask(Request{Verb: VerbUpdate, Name: "l", Record: rec, ResourceVersion: created.ResourceVersion - 1}),
			ask(Request{Verb: VerbUpdate, Name: "l", Record: Record{Holder: "c2", DurationSeconds: 15, Transitions: 1}, ResourceVersion: created.ResourceVersion}),
			ask(Request{Verb: VerbUpdate, Name: "l", Record: rec, ResourceVersion: created.ResourceVersion}),
			ask(Request{Verb: VerbGet, Name: "l"}),
			ask(Request{Verb: VerbUpdate, Name: "absent", Record: rec, ResourceVersion: 1}))
	})
	w.Run(10 * time.Second)
	require.Len(t, got, 7)
	assert.Equal(t, StatusCreated, got[0].Status, "create of an absent Lease")
	assert.Equal(t, []any{StatusConflict, "AlreadyExists"}, []any{got[1].Status, got[1].Reason}, "second create")
	assert.Equal(t, StatusConflict, got[2].Status, "update with a stale resourceVersion")
	assert.Equal(t, StatusOK, got[3].Status, "update with the current resourceVersion")
	assert.Greater(t, got[3].ResourceVersion, got[0].ResourceVersion, "an update moves the resourceVersion")
	assert.Equal(t, StatusConflict, got[4].Status, "update with the resourceVersion the first update replaced")
	assert.Equal(t, Record{Holder: "c2", DurationSeconds: 15, Transitions: 1}, got[5].Record, "get reads the last update")
	assert.Equal(t, got[3].ResourceVersion, got[5].ResourceVersion)
	assert.Equal(t, StatusNotFound, got[6].Status, "update of an absent Lease")
}

// TestATakeoverWaitsLeaseDurationOnTheCandidatesClock: a candidate takes
// over a Lease whose holder stopped renewing only once the record it
// observed has stayed unchanged for LeaseDuration on its own clock; its
// grant carries leaseTransitions + 1 as the token.
func TestATakeoverWaitsLeaseDurationOnTheCandidatesClock(t *testing.T) {
	tests := []struct {
		name  string
		drift float64 // the candidate's clock rate error
		// earliest and latest true time of the takeover after the
		// candidate's first observation
		min, max time.Duration
	}{
		{"clock at the right rate", 0, 15 * time.Second, 15*time.Second + 5*time.Second},
		{"clock running twice as fast", 1, 7500 * time.Millisecond, 7500*time.Millisecond + 3*time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			o.Fencing = FencingTransitions
			w, c := newTestCluster(t, o)
			holder := w.AddNode("c1", sim.NodeOptions{})
			cand := w.AddNode("c2", sim.NodeOptions{Drift: tc.drift})
			var first, took time.Duration
			var lease lockapi.Lease
			holder.Spawn("c1", func(p *sim.Proc) {
				_, err := c.NewClient(p).Acquire("l", time.Second)
				require.NoError(t, err)
				holder.Crash() // stops renewing, releases nothing
			})
			cand.Spawn("c2", func(p *sim.Proc) {
				p.Sleep(time.Second)
				cl := c.NewClient(p)
				_, err := cl.Acquire("l", 0)
				require.True(t, errors.Is(err, lockapi.ErrNotAcquired), "the first try finds c1's valid Lease: %v", err)
				first = w.Now()
				lease, err = cl.Acquire("l", time.Minute)
				require.NoError(t, err)
				took = w.Now()
			})
			w.Run(time.Minute)
			require.NotZero(t, took, "c2 never took over")
			assert.GreaterOrEqual(t, took-first, tc.min)
			assert.LessOrEqual(t, took-first, tc.max)
			assert.Equal(t, lockapi.Lease{Key: "l", Token: 2, HasToken: true}, lockapi.Lease{Key: lease.Key,
				Token: lease.Token, HasToken: lease.HasToken}, "leaseTransitions 1, token 2")
			assert.Regexp(t, `^c2_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, lease.Owner, "hostname_UUID")
		})
	}
}

// TestTheRecordOfGrants: the API servers' record names each holder from
// the write that made it, renews it with each renewal by leaseDuration, and
// ends it at a release (ReleaseOnCancel).
func TestTheRecordOfGrants(t *testing.T) {
	o := DefaultOptions()
	o.ReleaseOnCancel = true
	w, c := newTestCluster(t, o)
	log := lockapi.NewGrantLog(1)
	c.RecordGrants(log)
	n := w.AddNode("c1", sim.NodeOptions{})
	var acquired, released time.Duration
	n.Spawn("c1", func(p *sim.Proc) {
		cl := c.NewClient(p)
		l, err := cl.Acquire("l", time.Second)
		require.NoError(t, err)
		acquired = w.Now()
		p.Sleep(7 * time.Second)
		require.NoError(t, cl.Release(l))
		released = w.Now()
	})
	w.Run(30 * time.Second)
	gs := log.Grants()
	require.Len(t, gs, 1)
	g := gs[0]
	assert.Equal(t, []string{grantScope, "apiserver1", "l", "c1"}, []string{g.Scope, g.Server, g.Key, g.Client})
	assert.Regexp(t, "^c1_", g.Owner)
	assert.LessOrEqual(t, g.At, acquired)
	assert.Greater(t, g.Released, acquired)
	assert.LessOrEqual(t, g.Released, released)
	assert.Greater(t, g.Until, acquired+o.LeaseDuration, "renewals moved the promise")
	assert.Empty(t, log.Breaches())
}

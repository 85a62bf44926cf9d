package kubernetes

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/backends/etcd"
	"github.com/locklab/locklab/internal/opt"
)

// Fencing is the token a leader's grant carries to the protected storage.
type Fencing string

// Fencing choices.
const (
	// FencingNone: no token (client-go today: the package's documentation
	// says it does not guarantee a single acting leader).
	FencingNone Fencing = "none"
	// FencingTransitions: the Lease's leaseTransitions after the takeover,
	// plus one (it increases with every change of holder).
	FencingTransitions Fencing = "leaseTransitions"
	// FencingResourceVersion: the Lease's resourceVersion (etcd's mod
	// revision) written by the acquiring update or create.
	FencingResourceVersion Fencing = "resourceVersion"
)

// Resource is where the protected data lives.
type Resource string

// Resource choices.
const (
	// ResourceStorage: the storage node (unfenced, fenced or checked).
	ResourceStorage Resource = "storage"
	// ResourceAPIServer: an object in the API server beside the Lease,
	// written with a precondition on the Lease's resourceVersion. Refused:
	// see Options.Validate.
	ResourceAPIServer Resource = "apiserver"
)

// Options configure the API servers, their etcd and the clients' elector.
// Table declares each option's name, meaning and default (client-go's and
// the Kubernetes components').
type Options struct {
	// APIServers is how many API servers (apiserver1..N) front etcd: 1 or 3.
	APIServers int
	// EtcdMembers is the size of the etcd cluster the API servers store in.
	EtcdMembers int
	// LeaseDuration: a candidate takes the Lease over only when the record
	// it observed has not changed for this long on its own clock.
	LeaseDuration time.Duration
	// RenewDeadline: the leader retries its renewal this long before it
	// gives up leading (OnStoppedLeading).
	RenewDeadline time.Duration
	// RetryPeriod is the wait between tries (jittered by JitterFactor while
	// acquiring).
	RetryPeriod time.Duration
	// ReleaseOnCancel: when the leader stops (cancelled or lost), it clears
	// the Lease's holder so that others need not wait LeaseDuration.
	ReleaseOnCancel bool
	// Fencing is the token the storage can check.
	Fencing Fencing
	// Resource is where the protected data lives.
	Resource Resource
	// RequestTimeout bounds each request of the elector to its API server
	// (0: the renew deadline, as the Kubernetes components configure the
	// leader-election client's timeout).
	RequestTimeout time.Duration
}

// Table declares the options of the kubernetes system.
var Table = opt.Table[Options]{Owner: "kubernetes", Options: []opt.Option[Options]{
	opt.Var("api-servers", "how many API servers (apiserver1..N) store the Lease in etcd, each with its own connection to it",
		"1", func(o *Options) *int { return &o.APIServers }, opt.IntChoice(1, 3)),
	opt.Var("etcd-members", "size of the etcd cluster (etcd1, etcd2, ...) behind the API servers", "3",
		func(o *Options) *int { return &o.EtcdMembers }, opt.IntChoice(3, 5)),
	opt.Var("lease-duration", "LeaseDuration: a candidate takes the Lease over only when the record it observed has not "+
		"changed for this long on its own clock (observedTime); written to the Lease in whole seconds", "15s",
		func(o *Options) *time.Duration { return &o.LeaseDuration }, opt.NonNegative),
	opt.Var("renew-deadline", "RenewDeadline: the leader retries renewing this long before it gives up leading "+
		"(OnStoppedLeading); must be below lease-duration", "10s",
		func(o *Options) *time.Duration { return &o.RenewDeadline }, opt.NonNegative),
	opt.Var("retry-period", "RetryPeriod: the wait between tries (jittered up to JitterFactor 1.2 more while acquiring); "+
		"renew-deadline must exceed 1.2 times it", "2s",
		func(o *Options) *time.Duration { return &o.RetryPeriod }, opt.NonNegative),
	opt.Var("release-on-cancel", "ReleaseOnCancel: a leader that stops clears the Lease's holder (client-go's default: false, "+
		"the next leader waits lease-duration)", "false",
		func(o *Options) *bool { return &o.ReleaseOnCancel }, opt.Bool),
	opt.Var("fencing", "the token handed to the storage: none (client-go), leaseTransitions (+1) or resourceVersion "+
		"of the acquiring write", "none",
		func(o *Options) *Fencing { return &o.Fencing }, opt.Choice(FencingNone, FencingTransitions, FencingResourceVersion)),
	opt.Var("resource", "where the protected data lives: storage (the storage node); apiserver (an object written with a "+
		"precondition on the Lease's resourceVersion) is refused: the Kubernetes API has no transaction across two objects",
		"storage", func(o *Options) *Resource { return &o.Resource }, opt.Choice(ResourceStorage, ResourceAPIServer)),
	opt.Var("request-timeout", "bound on each request of the elector to its API server (0s: renew-deadline, as the "+
		"Kubernetes components set the leader-election client's timeout)", "0s",
		func(o *Options) *time.Duration { return &o.RequestTimeout }, opt.NonNegative),
}}

// JitterFactor is client-go's leaderelection.JitterFactor: an acquiring
// candidate waits RetryPeriod plus up to 1.2 RetryPeriod between tries.
const JitterFactor = 1.2

// DefaultOptions returns the declared defaults.
func DefaultOptions() Options { return Table.Defaults() }

// Validate refuses what client-go's NewLeaderElector refuses, in its order
// and with its words, naming the options; and the guarded write in the API
// server, which Kubernetes cannot express.
func (o Options) Validate() error {
	switch {
	case o.LeaseDuration <= o.RenewDeadline:
		return fmt.Errorf("kubernetes options lease-duration=%v, renew-deadline=%v: leaseDuration must be greater than renewDeadline",
			o.LeaseDuration, o.RenewDeadline)
	case o.RenewDeadline <= time.Duration(JitterFactor*float64(o.RetryPeriod)):
		return fmt.Errorf("kubernetes options renew-deadline=%v, retry-period=%v: renewDeadline must be greater than retryPeriod*JitterFactor (%v)",
			o.RenewDeadline, o.RetryPeriod, time.Duration(JitterFactor*float64(o.RetryPeriod)))
	case o.LeaseDuration < 1:
		return fmt.Errorf("kubernetes option lease-duration=%v: leaseDuration must be greater than zero", o.LeaseDuration)
	case o.RenewDeadline < 1:
		return fmt.Errorf("kubernetes option renew-deadline=%v: renewDeadline must be greater than zero", o.RenewDeadline)
	case o.RetryPeriod < 1:
		return fmt.Errorf("kubernetes option retry-period=%v: retryPeriod must be greater than zero", o.RetryPeriod)
	case o.Resource == ResourceAPIServer:
		return fmt.Errorf("kubernetes option resource=apiserver: not built: a write guarded by a precondition on the Lease's " +
			"resourceVersion needs a transaction across two objects, which the Kubernetes API does not have (an update's " +
			"precondition names the object's own resourceVersion only); use fencing with storage=fenced")
	}
	return nil
}

// requestTimeout is the bound on one request to an API server.
func (o Options) requestTimeout() time.Duration {
	if o.RequestTimeout > 0 {
		return o.RequestTimeout
	}
	return o.RenewDeadline
}

// leaseSeconds is LeaseDurationSeconds as client-go writes it: whole
// seconds, rounded down (a lease-duration under 1s writes 0, and every
// candidate then finds the Lease expired).
func (o Options) leaseSeconds() int { return int(o.LeaseDuration / time.Second) }

// etcdOptions are the options of the etcd cluster behind the API servers:
// etcd's defaults at the chosen size.
func (o Options) etcdOptions() etcd.Options {
	e := etcd.DefaultOptions()
	e.Members = o.EtcdMembers
	return e
}

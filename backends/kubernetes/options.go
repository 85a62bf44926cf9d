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

// ClientGo is the client-go release line whose leader election the clients
// run. The lines differ only in LeaderElector.release (ReleaseOnCancel):
// see Client.tryRelease.
type ClientGo string

// The release lines.
const (
	// ClientGo033: v0.33 and before: release updates the Lease with the
	// LeaseLock's cached object (the resourceVersion last read or written)
	// and the observed leaseTransitions; a Lease changed since answers 409
	// Conflict and nothing is released.
	ClientGo033 ClientGo = "0.33"
	// ClientGo036: v0.34.0 to v0.36 (the newest release): release first
	// gets the Lease, then, if the last observed record names the elector,
	// updates it with the resourceVersion just fetched: a Lease another
	// client now holds is cleared. No retry on Conflict.
	ClientGo036 ClientGo = "0.36"
	// ClientGo037: the v0.37 pre-releases: as 0.36, and a Conflict gets the
	// Lease again and retries within RenewDeadline.
	ClientGo037 ClientGo = "0.37"
)

// LateAnswer is what a request whose answer and context deadline are both
// ready when the client resumes from a pause turns out as.
type LateAnswer string

// The late-answer choices.
const (
	// LateEither: drawn from the client's seeded random stream, as Go's
	// select picks among ready cases at random; the draw is told in the
	// history (the renewal's or acquisition's detail).
	LateEither LateAnswer = "either"
	// LateExpired: the expired context wins: the request failed, outcome
	// unknown.
	LateExpired LateAnswer = "expired"
	// LateAnswered: the answer wins: a successful renewal resets
	// observedTime and the client keeps leading.
	LateAnswered LateAnswer = "answered"
)

// Identity is how a process names itself in the Lease.
type Identity string

// The identity choices.
const (
	// IdentityPerProcess: hostname + "_" + a UUID per process, as the
	// Kubernetes components do (id + "_" + uuid.NewUUID()): a restarted
	// process is a new candidate. The UUID is derived from the node's name
	// and incarnation, so a run replays.
	IdentityPerProcess Identity = "per-process"
	// IdentityNode: the node's name, the same across restarts (a fixed
	// identity, as some operators configure).
	IdentityNode Identity = "node"
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
	// ClientGo is the client-go release line.
	ClientGo ClientGo
	// LateAnswer: how a request answered while the client was paused past
	// its context's deadline turns out.
	LateAnswer LateAnswer
	// Identity: how a process names itself in the Lease.
	Identity Identity
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
	opt.Var("client-go", "client-go release line of the elector, which decides ReleaseOnCancel's release: 0.33 (v0.33 and "+
		"before: update with the cached resourceVersion, 409 Conflict if the Lease changed), 0.36 (v0.34.0 to v0.36: get, then "+
		"update with the fetched resourceVersion: can clear a Lease another client holds), 0.37 (v0.37 pre-releases: as 0.36, "+
		"retrying on Conflict)", "0.36",
		func(o *Options) *ClientGo { return &o.ClientGo }, opt.Choice(ClientGo033, ClientGo036, ClientGo037)),
	opt.Var("late-answer", "a request answered while the client was paused past its context's deadline: either (drawn from the "+
		"seeded stream, as Go's select picks a ready case at random, and told in the history), expired (the context wins: "+
		"failed, outcome unknown) or answered (the answer wins: a renewal succeeds and observedTime is reset)", "either",
		func(o *Options) *LateAnswer { return &o.LateAnswer }, opt.Choice(LateEither, LateExpired, LateAnswered)),
	opt.Var("identity", "the holder identity: per-process (node name + \"_\" + a UUID per process, as the Kubernetes "+
		"components: a restarted process is a new candidate) or node (the node's name, fixed across restarts)", "per-process",
		func(o *Options) *Identity { return &o.Identity }, opt.Choice(IdentityPerProcess, IdentityNode)),
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
// seconds, rounded down (a lease-duration under 1s writes 0, which the API
// server refuses: 422 Invalid).
func (o Options) leaseSeconds() int { return int(o.LeaseDuration / time.Second) }

// etcdOptions are the options of the etcd cluster behind the API servers:
// etcd's defaults at the chosen size.
func (o Options) etcdOptions() etcd.Options {
	e := etcd.DefaultOptions()
	e.Members = o.EtcdMembers
	return e
}

package liveform

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/locklab/locklab/internal/faultnet"
	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/nemesis"
)

// ServerNames are the names name(1)..name(n) of a cluster's n servers.
func ServerNames[ID int | uint64](n int, name func(id ID) string) []string {
	out := make([]string, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, name(ID(i)))
	}
	return out
}

// Each is of(s) for every server s of a running cluster, in the cluster's
// order: their names, their client addresses.
func Each[S, V any](servers []S, of func(S) V) []V {
	out := make([]V, len(servers))
	for i, s := range servers {
		out[i] = of(s)
	}
	return out
}

// Lookup is the first server s of a running cluster whose key(s) is k (its
// name, its client address); ok is false when none is.
func Lookup[S any, K comparable](servers []S, key func(S) K, k K) (s S, ok bool) {
	for _, s := range servers {
		if key(s) == k {
			return s, true
		}
	}
	return s, false
}

// raftRoles are the roles a schedule may name in a raft cluster.
var raftRoles = []string{"leader", "followers"}

// RaftCluster describes a raft cluster of servers before it starts: a
// schedule may name "leader" and "followers", each of which may be any
// server until the cluster runs (a deployment's Resolve then looks them up).
func RaftCluster(servers []string) Description {
	return Description{
		Servers: servers,
		Roles:   slices.Clone(raftRoles),
		Resolve: func(role string) ([]string, bool) {
			if slices.Contains(raftRoles, role) {
				return servers, true
			}
			return nil, false
		},
	}
}

// RefuseRaftCluster says why a fault cannot run on a raft cluster of real
// servers of system ("etcd"; see RefuseRealServers), its leader and
// followers counting as servers. A delay of the servers' traffic is refused
// for every such cluster: real servers' messages do not pass through
// locklab.
func RefuseRaftCluster(system string, servers []string, noClock, noPeerCut string) func(f nemesis.Fault) string {
	noDelay := "a delay of " + system + "'s traffic cannot run live: real servers' messages do not pass through locklab " +
		"(delays of the storage's messages run)"
	return func(f nemesis.Fault) string {
		return RefuseRealServers(f, servers, raftRoles, noClock, noPeerCut, noDelay)
	}
}

// WithoutSimOnly is the live option table of a simulated system whose real
// server or library lacks some of its knobs: the simulated table (same
// names, meanings and defaults) without the options simOnly names.
func WithoutSimOnly[O any](owner string, table opt.Table[O], simOnly map[string]string) opt.Table[O] {
	return opt.Table[O]{Owner: owner, Options: slices.DeleteFunc(slices.Clone(table.Options),
		func(o opt.Option[O]) bool { _, ok := simOnly[o.Name]; return ok })}
}

// RefuseSimOnly refuses the first given option (in name order) that simOnly
// names, saying why the live system does not have it; the error wraps
// notHonoured. It returns nil when none is given.
func RefuseSimOnly(owner string, given, simOnly map[string]string, notHonoured error) error {
	names := make([]string, 0, len(given))
	for k := range given {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		if why, ok := simOnly[name]; ok {
			return fmt.Errorf("%s option %s: %s: %w", owner, name, why, notHonoured)
		}
	}
	return nil
}

// ParseOptions reads the options of a live system that runs a simulated
// one's real counterpart, with the simulated system's table (same names,
// meanings and defaults): it refuses first the options simOnly names
// (RefuseSimOnly, wrapping notHonoured), then the values the table or the
// simulated system's Validate refuses. The live system refuses what its real
// server or library cannot honour after.
func ParseOptions[O interface{ Validate() error }](owner string, table opt.Table[O], given, simOnly map[string]string, notHonoured error) (O, error) {
	if err := RefuseSimOnly(owner, given, simOnly, notHonoured); err != nil {
		var none O
		return none, err
	}
	o, err := table.Parse(given)
	if err != nil {
		return o, err
	}
	return o, o.Validate()
}

// Refusal is what a live system's Describe returns for err, its refusal of
// a test's options: a value the real server or library cannot honour
// (notHonoured) marks the test as one that cannot run live (ErrNotLive).
func Refusal(err, notHonoured error) error {
	if errors.Is(err, notHonoured) {
		return fmt.Errorf("%w: %w", ErrNotLive, err)
	}
	return err
}

// Closer is a live client that holds connections to real servers.
type Closer interface{ Close() }

// Clients are the live clients of a deployment, by client name: each is
// closed when the run's Net closes (calls blocked in a real library then
// return at once), and Close closes every one, in the order they came.
type Clients[C Closer] struct {
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	all    []C
	byName map[string]C
}

// NewClients keeps the clients of a deployment.
func NewClients[C Closer]() *Clients[C] {
	ctx, cancel := context.WithCancel(context.Background())
	return &Clients[C]{ctx: ctx, cancel: cancel, byName: map[string]C{}}
}

// Add keeps client c of the client named name, and closes it when net
// closes (until Close).
func (cs *Clients[C]) Add(net *faultnet.Net, name string, c C) {
	cs.mu.Lock()
	cs.all = append(cs.all, c)
	cs.byName[name] = c
	cs.mu.Unlock()
	go func() {
		select {
		case <-net.Done():
			c.Close()
		case <-cs.ctx.Done():
		}
	}()
}

// Get is the latest client kept for the client named name.
func (cs *Clients[C]) Get(name string) (C, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c, ok := cs.byName[name]
	return c, ok
}

// Close closes every client kept.
func (cs *Clients[C]) Close() {
	cs.cancel()
	cs.mu.Lock()
	all := slices.Clone(cs.all)
	cs.mu.Unlock()
	for _, c := range all {
		c.Close()
	}
}

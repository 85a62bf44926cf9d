package redis

import (
	"slices"
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
)

func init() {
	system.Register(system.System{
		Name: "redis",
		// A holder paused, cut off or delayed for less than this keeps its
		// lock: such faults do not test the design.
		Timeouts: []system.Timeout{{Kinds: []string{"pause", "partition", "delay"}, Option: "ttl", What: "the lease"}},
		GroundTruth: []system.Truth{
			{Label: "redis"},
			{Label: "redis-replicated", Options: map[string]string{"replicas": "2", "fencing": "true"}, Storage: storage.Fenced},
		},
		Recorded: append([]system.Recorded{
			{Label: "redis", Nemesis: "random", Seeds: system.Seeds(1, 4), Time: time.Minute},
			{Label: "redis-replicated", Options: map[string]string{"replicas": "2"}, Nemesis: "random", Seeds: system.Seeds(1, 3), Time: time.Minute},
			{Label: "redis-fenced-stock", Options: map[string]string{"fencing": "true"}, Workload: "stock", Nemesis: "random",
				Seeds: system.Seeds(1, 2), Time: time.Minute},
		}, system.PerNemesis("redis", 5, time.Minute, "pause", "partition", "clock", "crash", "delay")...),
		Doc: "Redis: SET NX PX, release lua|del|check-then-del, watchdog, INCR fencing; " +
			"with replicas=N a primary, N async replicas and a sentinel-like monitor (failover), WAIT n",
		Options: Table,
		Deploy:  deployRedis,
		Designs: []system.Design{
			{Name: "Redis SET NX PX + Lua release", Modes: system.UnfencedOnly},
			{Name: "Redis SET NX PX + INCR fencing token", SystemOptions: map[string]string{"fencing": "true"}, Modes: system.FencedModes},
			{Name: "Redisson RLock (watchdog renewal, reentrant)", SystemOptions: map[string]string{"watchdog": "true", "reentrancy": "server"},
				Modes: system.UnfencedOnly},
			{Name: "Redis + Sentinel failover (2 async replicas)", SystemOptions: map[string]string{"replicas": "2"}, Modes: system.UnfencedOnly},
			{Name: "Redis + Sentinel failover, WAIT for 1 replica", SystemOptions: map[string]string{"replicas": "2", "wait": "1"},
				Modes: system.UnfencedOnly},
		},
		Claims: []system.Claims{
			// The fence counter is a key like any other: a crash without
			// fsync on every write loses it, and the tokens start again.
			{Tokens: true, FencedOptions: map[string]string{"fencing": "true", "persistence": "always"}, SafeRelease: true},
			// A failover loses what the replicas had not received, the
			// counter included (redis-failover): no token claim.
			{Variant: "replicated", Options: map[string]string{"replicas": "2"}, SafeRelease: true},
			// A lease shorter than a hold, so that the watchdog renews.
			{Variant: "reentrant", Options: map[string]string{"reentrancy": "server", "watchdog": "true", "ttl": "250ms"}, SafeRelease: true},
			// GET, compare, DEL is not atomic: no safe-release claim.
			{Variant: "check-then-del", Options: map[string]string{"release": "check-then-del"}},
		},
	})
}

// deployRedis adds one instance called "redis", or with replicas the primary
// "redis", replicas "replica1".. and the monitor "sentinel". Schedules may
// name "primary" (the instance the monitor considers primary when the fault
// starts), "replicas" (the others) and "sentinel".
func deployRedis(w *sim.World, opts map[string]string) (system.Deployment, error) {
	o, err := Table.Parse(opts)
	if err != nil {
		return system.Deployment{}, err
	}
	if err := o.Validate(); err != nil {
		return system.Deployment{}, err
	}
	d := deployTopology(w, o, nil, MessageTypes(), func(p *sim.Proc, t Topology) lockapi.Lock { return NewClientFor(p, t, o) })
	d.HasTokens = o.Fencing
	return d, nil
}

// roleResolver resolves "primary", "replicas" and "sentinel" when a fault starts.
func roleResolver(primary func() *sim.Node, instances []*sim.Node, sentinel *sim.Node) func(string) ([]*sim.Node, bool) {
	return func(name string) ([]*sim.Node, bool) {
		switch name {
		case "primary":
			return []*sim.Node{primary()}, true
		case "replicas":
			p := primary()
			return slices.DeleteFunc(slices.Clone(instances), func(n *sim.Node) bool { return n == p }), true
		case "sentinel":
			if sentinel != nil {
				return []*sim.Node{sentinel}, true
			}
		}
		return nil, false
	}
}

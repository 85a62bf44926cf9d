package redlock

import (
	"fmt"

	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/system"
)

// CommandDeployment is a Redlock deployment whose clients send redis
// Commands (a user's Redlock over one redis.GoRedisClient per instance):
// the independent instances the redlock system deploys, each recording the
// grants of the lock keys under its own name.
type CommandDeployment struct {
	// Instances is the number of independent instances (1 to 26).
	Instances int
	// Server is every instance's configuration.
	Server redis.ServerConfig
	// IsLockKey tells the keys whose grants the instances record (see
	// redis.Server.WatchLockKeys).
	IsLockKey func(key string) bool
	// NewLock makes the lock of one client process, which finds instance i
	// through instances[i] (no monitor: the instances have no replicas).
	NewLock func(p *sim.Proc, instances []redis.Topology) lockapi.Lock
}

// DeployCommands adds the instances redis-a, redis-b, ... as the redlock
// system does (without its sequencer). The record of grants holds the lock
// for an owner while a majority of the instances grant it to that owner
// (GrantLog's quorum): two owners at once in it are two majorities, however
// the user's lock counted. Schedules may name "instances" (all of them).
func DeployCommands(w *sim.World, d CommandDeployment) (system.Deployment, error) {
	if d.Instances < 1 || d.Instances > 26 {
		return system.Deployment{}, fmt.Errorf("redlock: %d instances: from 1 to 26 (redis-a to redis-z)", d.Instances)
	}
	grants := lockapi.NewGrantLog(Quorum(d.Instances))
	instances := addInstances(w, d.Instances, d.Server, grants, d.IsLockKey)
	topos := make([]redis.Topology, len(instances))
	for i, id := range nodeIDs(instances) {
		topos[i] = redis.Topology{Primary: id}
	}
	return system.Deployment{
		Grants:   grants,
		Servers:  instances,
		NewLock:  func(p *sim.Proc) lockapi.Lock { return d.NewLock(p, topos) },
		Messages: redis.CommandMessageTypes(),
		Resolve:  resolveInstances(instances),
	}, nil
}

package userlive_test

import (
	"fmt"
	"slices"

	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/userlock"
	userlive "github.com/locklab/locklab/userlock/live"
)

// newMyLock stands for a user's constructor (mylock.New); the example
// registers the lock and runs none of it.
func newMyLock(env userlock.Env, rdb userlock.Redis) userlock.Lock { return nil }

// ExampleRegisterRedis is the package doc's program without cli.Main: the
// lock registered through this package is a system of the simulator and
// has a live form (`run --live --system mylive`); registered through
// userlock.RegisterRedis it would have the first only.
func ExampleRegisterRedis() {
	userlive.RegisterRedis(userlock.RedisLock{
		Spec: userlock.Spec{Name: "mylive"},
		New:  newMyLock,
	})
	fmt.Println("simulated:", slices.Contains(system.Names(), "mylive"))
	fmt.Println("live:", slices.Contains(liveform.Names(), "mylive"))
	// Output:
	// simulated: true
	// live: true
}

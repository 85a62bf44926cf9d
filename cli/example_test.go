package cli_test

import (
	"github.com/locklab/locklab/cli"
	"github.com/locklab/locklab/userlock"
)

// newMyLock stands for a user's constructor (mylock.New).
func newMyLock(env userlock.Env, rdb userlock.Redis) userlock.Lock { return nil }

// Example is the package doc's program: a locklab in which the user's lock
// is a system. It is compiled, not run: Main exits the process.
func Example() {
	userlock.RegisterRedis(userlock.RedisLock{
		Spec: userlock.Spec{Name: "mylock"},
		New:  newMyLock,
	})
	cli.Main()
}

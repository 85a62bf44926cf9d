// Command locklab-fixed is locklab with the corrected Redis lock registered
// as the system "fixed":
//
//	go run . run --system fixed --nemesis pause --seed 7 --storage fenced
//	go run . matrix --system fixed
//
// It registers the lock for the simulator only, so the module builds
// without the live runner's servers and clients; userlock/live's RegisterRedis
// in place of userlock.RegisterRedis adds the live form
// (`go run . run --live --system fixed`, against redis-server).
package main

import (
	"example.com/redis-fixed/fixed"

	"github.com/locklab/locklab/cli"
	"github.com/locklab/locklab/userlock"
)

func main() {
	register()
	cli.Main()
}

func register() {
	userlock.RegisterRedis(userlock.RedisLock{
		Spec: userlock.Spec{Name: "fixed", Doc: "SET NX PX + INCR token in one script, Lua compare-and-delete",
			Tokens: true, SafeRelease: true},
		New: fixed.New,
	})
}

// Command locklab-homemade is locklab with the homemade Redis lock
// registered as the system "homemade":
//
//	go run . repro homemade --all
//	go run . explore --hunt homemade/slow-release --starts 5
//	go run . matrix --system homemade
//
// It registers the lock for the simulator only, so the module builds
// without the live runner's servers and clients; userlock/live's RegisterRedis
// in place of userlock.RegisterRedis adds the live form
// (`go run . run --live --system homemade`, against redis-server).
package main

import (
	"example.com/redis-homemade/homemade"

	"github.com/locklab/locklab/cli"
	"github.com/locklab/locklab/userlock"
)

func main() {
	register()
	cli.Main()
}

func register() {
	userlock.RegisterRedis(userlock.RedisLock{
		Spec: userlock.Spec{Name: "homemade", Doc: "SETNX then PEXPIRE, GET then DEL, no fencing"},
		New:  homemade.New,
	})
}

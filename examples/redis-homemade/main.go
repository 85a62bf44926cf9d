// Command locklab-homemade is locklab with the homemade Redis lock
// registered as the system "homemade":
//
//	go run . repro homemade --all
//	go run . explore --hunt homemade/slow-release --starts 5
//	go run . matrix --system homemade
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

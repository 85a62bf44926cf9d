// Command locklab-zk is locklab with the raw-API ZooKeeper lock registered
// as the system "zk-raw":
//
//	go run . repro zk-raw --all
//	go run . matrix --system zk-raw
//
// It registers the lock for the simulator only, so the module builds
// without the live runner's servers and clients; userlock/live's RegisterZooKeeper
// in place of userlock.RegisterZooKeeper adds the live form
// (`go run . run --live --system zk-raw`, against a real ZooKeeper ensemble).
package main

import (
	"example.com/zookeeper-raw/zklock"

	"github.com/locklab/locklab/cli"
	"github.com/locklab/locklab/userlock"
)

func main() {
	register()
	cli.Main()
}

func register() {
	userlock.RegisterZooKeeper(userlock.ZooKeeperLock{
		Spec: userlock.Spec{Name: "zk-raw", Doc: "ephemeral sequential child, watch the predecessor, sequence number as token",
			Tokens: true, SafeRelease: true},
		New: zklock.New,
	})
}

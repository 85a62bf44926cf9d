// Command locklab-zk is locklab with the raw-API ZooKeeper lock registered
// as the system "zk-raw":
//
//	go run . repro zk-raw --all
//	go run . matrix --system zk-raw
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

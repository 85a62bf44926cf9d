// Command locklab-etcd is locklab with the KV-API etcd lock registered
// twice: "etcd-txn" (release by a plain Delete) and "etcd-txn-guarded"
// (release guarded by the key's mod revision):
//
//	go run . repro etcd-txn --all
//	go run . matrix --system etcd-txn --system etcd-txn-guarded
//
// It registers the locks for the simulator only, so the module builds
// without the live runner's servers and clients; userlock/live's
// RegisterEtcd in place of useretcd.Register adds the live form
// (`go run . run --live --system etcd-txn`, against real etcd servers).
package main

import (
	"example.com/etcd-txn/txnlock"

	"github.com/locklab/locklab/cli"
	"github.com/locklab/locklab/userlock"
	"github.com/locklab/locklab/userlock/useretcd"
)

func main() {
	register()
	cli.Main()
}

func register() {
	useretcd.Register(useretcd.EtcdLock{
		Spec: userlock.Spec{Name: "etcd-txn", Doc: "lease + txn on CreateRevision == 0, create revision as token, plain Delete",
			Tokens: true},
		New: txnlock.New,
	})
	useretcd.Register(useretcd.EtcdLock{
		Spec: userlock.Spec{Name: "etcd-txn-guarded", Doc: "the same, release guarded by ModRevision == token",
			Tokens: true, SafeRelease: true},
		New: txnlock.NewGuarded,
	})
}

// Command locklab-etcd is locklab with the KV-API etcd lock registered
// twice: "etcd-txn" (release by a plain Delete) and "etcd-txn-guarded"
// (release guarded by the key's mod revision):
//
//	go run . repro etcd-txn --all
//	go run . matrix --system etcd-txn --system etcd-txn-guarded
package main

import (
	"example.com/etcd-txn/txnlock"

	"github.com/locklab/locklab/cli"
	"github.com/locklab/locklab/userlock"
)

func main() {
	register()
	cli.Main()
}

func register() {
	userlock.RegisterEtcd(userlock.EtcdLock{
		Spec: userlock.Spec{Name: "etcd-txn", Doc: "lease + txn on CreateRevision == 0, create revision as token, plain Delete",
			Tokens: true},
		New: txnlock.New,
	})
	userlock.RegisterEtcd(userlock.EtcdLock{
		Spec: userlock.Spec{Name: "etcd-txn-guarded", Doc: "the same, release guarded by ModRevision == token",
			Tokens: true, SafeRelease: true},
		New: txnlock.NewGuarded,
	})
}

// Package userlive is the live form of a user's lock (package userlock): the
// real servers the built-in system of the same service starts, the real
// client library handed to the user's unchanged code (*redis.Client,
// *clientv3.Client, *zk.Conn), and the faults those servers perform,
// registered with the live runner (package liveform) under the lock's name,
// so that `locklab run --live --system NAME` runs it in real time.
//
// A user's program asks for live mode by registering its lock here
// (RegisterRedis, RegisterRedlock, RegisterEtcd, RegisterZooKeeper: the
// same values as userlock's and useretcd's Register functions, which these
// call for the simulated system): a program that registers through
// userlock alone builds without the live servers' client libraries.
//
//	func main() {
//		userlive.RegisterRedis(userlock.RedisLock{
//			Spec: userlock.Spec{Name: "mylock"},
//			New:  mylock.New,
//		})
//		cli.Main()
//	}
//
// (ExampleRegisterRedis in example_test.go runs this registration.)
//
// It is live-only: nothing simulated imports it, and its code may use
// goroutines and the machine's clock.
package userlive

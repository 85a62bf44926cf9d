// Package userlive is the live form of a user's lock (package userlock): the
// real servers the built-in system of the same service starts, the real
// client library handed to the user's unchanged code (*zk.Conn for a
// ZooKeeper lock), and the faults those servers perform, registered with
// the live runner (package liveform) under the lock's name, so that
// `locklab run --live --system NAME` runs it in real time.
//
// Package userlock registers each user's lock here; this package does not
// import userlock (userlock imports it and passes it the lock's
// constructor, its lock paths and its conduct guard). It is live-only:
// nothing simulated imports it, and its code may use goroutines and the
// machine's clock.
package userlive

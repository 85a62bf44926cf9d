// Package redlocklive is the live form of the Redlock client: redsync v4 over
// go-redis against real redis-server instances (one try per attempt, with
// locklab's own retry loop, the simulated client's back-off and wait budget),
// with a recording wrapper around each instance's pool so that a lease names
// the instances that granted it and a release counts what each instance
// answered. The connections and the classification of failed requests are
// backends/redis/live's.
//
// Options redsync or the real servers cannot honour are refused by
// CheckOptions with a reason. This package is live-only: nothing simulated
// imports it.
package redlocklive

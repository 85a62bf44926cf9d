// Package redlocklive is the live form of the Redlock client: the recipe of
// backends/redlock (redlock.Client, written once against lockapi.Env and
// redlock.Transport) over redsync v4 and go-redis against real redis-server
// instances.
//
// A round is redsync's TryLock with one try (its own parallel SETs, validity
// check and release after a failed round), with a recording wrapper around
// each instance's pool so that a lease names the instances that granted it,
// a failed round says what it may have left behind, and a release counts what
// each instance answered; a release is redsync's Unlock. Retries, the wait
// budget, back-off, values and tokens, and the verdicts of a release are the
// recipe's, as in the simulator. With token=external the token is an INCR on
// the sequencer after redsync's round (redsync cannot take it inside). The
// connections and the classification of failed requests are
// backends/redis/live's.
//
// Options redsync or the real servers cannot honour are refused by
// CheckOptions with a reason. This package is live-only: nothing simulated
// imports it.
package redlocklive

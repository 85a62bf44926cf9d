package kubernetes

import (
	"time"

	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// grantScope is the scope of every grant: the one etcd keyspace.
const grantScope = "kubernetes"

// truth is the API servers' record of holders, the ground truth of a
// simulated run, in true time. Every time an API server reads or writes a
// Lease at a resourceVersion newer than any seen before (its etcd answered):
//
//   - a record naming a new holder is a grant to it, promised until the
//     moment seen plus the record's leaseDurationSeconds (what a candidate
//     that saw the change then would wait before taking over);
//   - the same holder again is a renewal, moving the promise the same way;
//   - an empty holder (ReleaseOnCancel's update) written by the last holder
//     releases its grant; written by another client (a release with an old
//     observation), it removes the last holder's lock, a broken promise;
//     seen by a read only, it counts as the holder's release.
//
// A takeover does not end the earlier grant: it ends when its promise runs
// out, so a takeover before then (a candidate whose clock runs fast) is a
// breach in the record. A write that etcd applied but whose answer reached
// no API server is recorded when a later read or write sees its record.
type truth struct {
	log *lockapi.GrantLog
}

// RecordGrants makes the API servers record every grant, renewal and
// release in log (scope "kubernetes"). Call it before the run.
func (c *Cluster) RecordGrants(log *lockapi.GrantLog) { c.truth = &truth{log: log} }

func (t *truth) saw(server, name, writer, last string, rec Record, clients map[string]*sim.Node, at time.Duration) {
	if t == nil || !t.log.Recording() {
		return
	}
	until := at + time.Duration(rec.DurationSeconds)*time.Second
	switch {
	case rec.Holder == "" && last != "" && writer != "" && writer != last:
		by := writer
		if n := clients[writer]; n != nil {
			by = n.Name()
		}
		t.log.Removed(grantScope, name, last, by, at)
	case rec.Holder == "" && last != "":
		t.log.Released(grantScope, name, last, at)
	case rec.Holder == "":
	case rec.Holder == last:
		t.log.Renewed(grantScope, name, rec.Holder, at, until)
	default:
		who := rec.Holder
		if n := clients[rec.Holder]; n != nil {
			who = n.Name()
		}
		t.log.Granted(grantScope, server, name, rec.Holder, who, at, until)
	}
}

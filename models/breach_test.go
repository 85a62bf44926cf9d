package models

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
)

// TestBreachIsThePairwiseSearch: the breach search over the holdings alive at
// each grant finds the same witness as the pairwise search it replaced, on
// valid and invalid histories, with leases long and short, mutex and lease.
func TestBreachIsThePairwiseSearch(t *testing.T) {
	short := func(events []history.Event, lease int64) []history.Event {
		out := make([]history.Event, len(events))
		for i, e := range events {
			if e.Deadline != nil {
				e.Deadline = history.Ptr(e.Time + lease)
			}
			out[i] = e
		}
		return out
	}
	histories := map[string][]history.Event{
		"valid":           synth{ops: 400, seed: 1}.events(),
		"lost update":     synth{ops: 400, seed: 1, lostUpdateAt: 50}.events(),
		"inversion":       synth{ops: 400, seed: 5, lostUpdateAt: 30, inversionAt: 30}.events(),
		"unknown writes":  synth{ops: 400, seed: 2, unknown: 0.3, lostUpdateAt: 40}.events(),
		"short leases":    short(synth{ops: 400, seed: 3, lostUpdateAt: 35}.events(), 3000),
		"leases run out":  short(synth{ops: 400, seed: 4, lostUpdateAt: 35}.events(), 500),
		"no lease at all": short(synth{ops: 400, seed: 4, lostUpdateAt: 20}.events(), -1),
	}
	found := 0
	for name, events := range histories {
		for _, c := range []LockService{{Leases: true}, {}} {
			t.Run(name+"/"+c.Name(), func(t *testing.T) {
				for k, ops := range c.opsByKey(completed(events)) {
					lops := c.lockOps(ops)
					want := c.breachPairwise(lops)
					assert.Equal(t, want, c.breach(lops), "key %s", k)
					if want != nil {
						found++
					}
				}
			})
		}
	}
	assert.Greater(t, found, 5, "the histories show breaches")
}

// breachPairwise is the search breach replaced (cubic in the grants): every
// pair of grants, the one whose grant returned first.
func (c LockService) breachPairwise(lops []linOp) *breachWitness {
	var best *breachWitness
	var bestRet int64
	for i, a := range lops {
		ain := a.input.(*lockStep)
		if ain.kind != lockGrant || ain.phantom || (c.Leases && !ain.leased) {
			continue
		}
		for j, b := range lops {
			bin := b.input.(*lockStep)
			if j == i || bin.kind != lockGrant || bin.phantom || bin.owner == ain.owner || (c.Leases && !bin.leased) ||
				c.outlived(ain, bin) || (best != nil && b.ret >= bestRet) || released(lops, ain.owner, a.ret, b.ret) {
				continue
			}
			w := &breachWitness{holder: *ain, grant: *bin, leases: c.Leases}
			if b.call <= a.ret {
				// Concurrent: a breach whichever came first, if a also returned
				// before b's lease could have run out. Each pair once, a first.
				if b.ret < a.ret || (b.ret == a.ret && j < i) || c.outlived(bin, ain) {
					continue
				}
				w.concurrent = true
			}
			for _, r := range lops {
				if rin := r.input.(*lockStep); rin.kind == lockRelease && rin.owner != ain.owner && rin.owner != bin.owner &&
					r.call > a.ret && r.call < b.ret && !grantedSincePairwise(lops, rin.owner, a.call, r.call) {
					w.foreign = rin
					break
				}
			}
			best, bestRet = w, b.ret
		}
	}
	return best
}
func grantedSincePairwise(lops []linOp, owner string, from, until int64) bool {
	for _, g := range lops {
		if in := g.input.(*lockStep); in.kind == lockGrant && in.owner == owner && g.ret > from && g.ret < until {
			return true
		}
	}
	return false
}

// released reports whether a release by owner can have taken effect after
// from and before until (event indexes): one invoked in between, or one of
// unknown outcome invoked before until that may take effect as late as after
// from.
func released(lops []linOp, owner string, from, until int64) bool {
	for _, r := range lops {
		in := r.input.(*lockStep)
		if in.owner != owner || r.call >= until {
			continue
		}
		if (in.kind == lockRelease && r.call > from) || (in.kind == lockMaybeRelease && (r.call > from || r.until > from)) {
			return true
		}
	}
	return false
}

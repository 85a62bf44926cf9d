package guide

import (
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/nemesis"
)

// place is a targeted placement: one of the attacks, started right after
// one of the parent's holdings began — a client's acquire returned ok — or
// right after one of the holder's protocol steps within it (its read, its
// write sent, its renewal, its release: the phase the attack aims at),
// by a trigger on that event. A grant that rests on a bare quorum is the
// anchor half the time when the parent has one. The parent's run is the same
// up to the anchor, so the fault lands in the phase it aims at; in another
// run (a reseeded one) it lands after the same step of the same client's
// next grant.
//
// Durations, jumps and delays are drawn relative to the system's timing:
// around what is left of the holder's lease at the fault when the grant had
// a lease (an attack on the holder outlasts it three times in four, half the
// time by up to twice the longer of that and the system's timeouts: a pause
// or a delay that ends before the deadline shows nothing), else around the
// system's timeouts (the sum of its duration options, defaults included:
// session timeout, lock-delay, failover timing), or on a log scale from
// 100 ms to 30 s. A crash restarts within the holding half the time (the
// restarted server has forgotten the holder's key while the lease is still
// held). An attack that cuts off or pauses a granter first delays, half the
// time, the granter's messages to some of the other servers from the
// acquire's invocation on (replication that lags: the grant reaches no
// replica, or only those cut off with the granter), so that a promoted
// replica has not seen it.
func (m mutator) place(holds []hold) ([]nemesis.Fault, time.Duration, bool) {
	if len(holds) == 0 {
		return nil, 0, false
	}
	h, holds := m.holdToAttack(holds)
	p := &attackPlan{m: m, h: h, holds: holds, held: time.Duration(max(h.end-h.start, int64(time.Millisecond)))}
	for _, s := range m.targets.Servers {
		if slices.Contains(h.granters, s) {
			p.granters = append(p.granters, s)
		} else {
			p.others = append(p.others, s)
		}
	}
	if len(p.granters) == 0 {
		p.granters = slices.Concat(m.targets.Servers, m.targets.Roles)
	}
	pool := attacks
	if m.attacks != nil {
		pool = m.attacks
	}
	attack := pool[m.rng.IntN(len(pool))]
	if len(m.directed) > 0 && m.rng.IntN(4) > 0 {
		attack = m.directed[m.rng.IntN(len(m.directed))]
	}
	p.anchor(attack)
	p.left = h.lease - p.offset
	p.f = nemesis.Fault{Duration: p.long()}
	p.at = time.Duration(h.start)
	if !p.apply(attack) {
		return nil, 0, false
	}
	p.f.At = nemesis.Duration(p.at)
	p.f.After = p.trigger
	anchor := p.at + p.offset
	switch {
	case p.lag != nil:
		return []nemesis.Fault{*p.lag, p.f}, anchor, true
	case p.pause != nil:
		return []nemesis.Fault{*p.pause, p.f}, anchor, true
	}
	return []nemesis.Fault{p.f}, anchor, true
}

// holdToAttack draws the holding an attack is placed on, and the holdings
// it is drawn from: those that began in the first three quarters of the
// run, if any (a holding in the last quarter leaves little time for what
// the attack sets off: a failover, an expiry, a second grant); half the
// time one that rests on a bare quorum, when there is one.
func (m mutator) holdToAttack(holds []hold) (hold, []hold) {
	early := slices.DeleteFunc(slices.Clone(holds), func(x hold) bool { return time.Duration(x.start) > m.time*3/4 })
	if len(early) > 0 {
		holds = early
	}
	h := holds[m.rng.IntN(len(holds))]
	var bare []hold
	for _, x := range holds {
		if x.bare {
			bare = append(bare, x)
		}
	}
	if len(bare) > 0 && m.rng.IntN(2) == 0 {
		h = bare[m.rng.IntN(len(bare))]
	}
	return h, holds
}

// attackPlan is one placement under construction: the holding attacked,
// the servers that granted it and the others, the trigger that anchors the
// fault and the fault itself, with the faults that may precede it.
type attackPlan struct {
	m     mutator
	h     hold
	holds []hold
	// held is how long the holding lasted (at least 1 ms).
	held             time.Duration
	granters, others []string
	trigger          *nemesis.Trigger
	offset           time.Duration // from the grant to the fault
	left             time.Duration // what is left of the lease at the fault
	at               time.Duration // when the trigger is armed
	f                nemesis.Fault
	lag              *nemesis.Fault // a lag of the granter's messages before the attack
	pause            *nemesis.Fault // a pause of the holder before its clock steps back
}

// anchor sets the trigger: the acquire's ok plus a random delay into the
// holding, or (three times in four, when the parent recorded them) right
// after one of the holder's steps; for an attack on the holder, a step
// before its last storage operation of the holding (a pause, a cut or a
// delay after it has nothing left to make late).
func (p *attackPlan) anchor(attack string) {
	m, h := p.m, p.h
	p.trigger = &nemesis.Trigger{Node: h.node, F: history.FAcquire}
	steps := h.steps
	if strings.HasSuffix(attack, "-holder") || strings.HasPrefix(attack, "delay-holder") {
		steps = h.beforeLastOp()
	}
	switch {
	case strings.HasSuffix(attack, "-granter") && m.rng.IntN(4) > 0:
		// Right after the grant: what the granter has not passed on yet
		// (replication in flight) is lost with it.
	case len(steps) > 0 && m.rng.IntN(4) > 0:
		st := steps[m.rng.IntN(len(steps))]
		p.trigger.F, p.trigger.Nth = st.f, st.nth
		if st.typ == history.Invoke {
			p.trigger.Type = string(history.Invoke)
		}
		p.offset = time.Duration(st.at - h.start)
	case m.rng.IntN(4) > 0:
		p.trigger.Delay = nemesis.Duration(m.logUniform(time.Millisecond, p.held))
		p.offset = time.Duration(p.trigger.Delay)
	}
}

// long is a duration, jump or delay on a log scale around what is left of
// the holder's lease (half to four times it) when the grant had one, else
// around the system's timeouts, or 100 ms to 30 s.
func (p *attackPlan) long() nemesis.Duration {
	m, left := p.m, p.left
	switch {
	case left > time.Millisecond:
		return nemesis.Duration(m.logUniform(left/2, 4*left))
	case m.timeout > 0 && m.rng.IntN(2) == 0:
		return nemesis.Duration(m.logUniform(m.timeout/2, 2*m.timeout))
	}
	return nemesis.Duration(m.logUniform(100*time.Millisecond, 30*time.Second))
}

// outlast is a duration that outlasts the holder's lease, when the grant
// had one: a quarter of the time by an eighth of the lease left to twice
// it (at least 2 s) on a log scale (just long enough for another client's
// next attempt to come after the deadline, and short enough to wake while
// that client still holds), half the time uniformly up to twice the longer
// of the lease left and the system's timeouts (a service that expires a
// session later than its client's deadline, then waits a lock-delay); else
// long.
func (p *attackPlan) outlast() nemesis.Duration {
	m, left := p.m, p.left
	switch x := m.rng.IntN(4); {
	case left <= time.Millisecond || x == 0:
		return p.long()
	case x == 1:
		return nemesis.Duration(left + m.logUniform(left/8, max(2*left, 2*time.Second)))
	}
	hi := 2 * max(left, m.timeout)
	return nemesis.Duration(left + time.Duration(m.rng.Int64N(int64(hi-left)+1)).Round(time.Millisecond))
}

// pick is one of ns.
func (p *attackPlan) pick(ns []string) []string { return []string{ns[p.m.rng.IntN(len(ns))]} }

// clock makes f a clock fault: a jump (forward, or either way; half the
// time a step that stays) or a drift, as the family allows.
func (p *attackPlan) clock(f *nemesis.Fault, forward bool) {
	m := p.m
	if m.allows(nemesis.ClockJump) && (!m.allows(nemesis.ClockDrift) || m.rng.IntN(2) == 0) {
		f.Kind, f.Amount = nemesis.ClockJump, p.long()
		if !forward && m.rng.IntN(2) == 0 {
			f.Amount = -f.Amount
		}
		if m.rng.IntN(2) == 0 {
			f.Duration = 0 // a step that stays
		}
		return
	}
	f.Kind, f.Drift = nemesis.ClockDrift, float64(1+m.rng.IntN(500))/1000
	if !forward && m.rng.IntN(2) == 0 {
		f.Drift = -f.Drift
	}
}

// apply makes p.f the attack's fault; false when the attack was a random
// fault and none could be drawn.
func (p *attackPlan) apply(attack string) bool {
	m, h := p.m, p.h
	switch {
	case attack == "pause-holder":
		p.f.Kind, p.f.Targets, p.f.Duration = nemesis.Pause, []string{h.node}, p.outlast()
	case attack == "isolate-holder":
		// Cut off from the lock's servers (it keeps the storage: its late
		// write can still land), or, a time in four, from everything.
		p.f.Kind, p.f.Duration = nemesis.Partition, p.outlast()
		if len(m.targets.Servers) > 0 && m.rng.IntN(4) > 0 {
			p.f.Groups = [][]string{{h.node}, slices.Clone(m.targets.Servers)}
		} else {
			p.f.Targets = []string{h.node}
		}
	case attack == "delay-holder-storage" && m.targets.Storage != "":
		p.f.Kind, p.f.From, p.f.To, p.f.Amount = nemesis.Delay, []string{h.node}, []string{m.targets.Storage}, p.outlast()
		p.f.Duration = max(p.f.Duration, p.f.Amount)
		if m.rng.IntN(4) > 0 {
			// Only its next write (its reads go through: it does write).
			p.f.Match, p.f.Count = storageWrite, 1
		}
	case attack == "clock-holder":
		p.clockHolder()
	case attack == "crash-granter" && len(p.granters) > 0:
		p.f.Kind, p.f.Targets = nemesis.Crash, p.pick(p.granters)
		if m.rng.IntN(2) == 0 && p.held-p.offset > time.Millisecond {
			p.f.Duration = nemesis.Duration(m.logUniform(time.Millisecond, p.held-p.offset))
		}
	case attack == "clock-granter" && len(p.granters) > 0:
		p.f.Targets = p.pick(p.granters)
		p.clock(&p.f, true)
	case (attack == "isolate-granter" || attack == "pause-granter") && len(p.granters) > 0:
		p.cutGranter(attack)
	case attack == "clock-server" && len(p.others) > 0:
		p.f.Targets = p.pick(p.others)
		p.clock(&p.f, true)
	default:
		var ok bool
		if p.f, ok = m.draw(); !ok {
			return false
		}
	}
	return true
}

// clockHolder steps or drifts the holder's clock; half the time that of
// the holder whose acquire was quickest, around its grant: while its
// acquire is under way, when the client measures the time its acquire took
// (a validity on the wall clock) or writes an expiry from its clock. Half
// of these pause it right after the acquire is sent and step its clock
// back by as long as the pause as it ends: the acquire took longer than
// its clock says.
func (p *attackPlan) clockHolder() {
	m := p.m
	p.f.Targets = []string{p.h.node}
	p.clock(&p.f, false)
	if m.rng.IntN(2) != 0 {
		return
	}
	quick := m.quickest(p.holds)
	p.h, p.left = quick, quick.lease
	h := p.h
	p.f.Targets = []string{h.node}
	p.at = time.Duration(h.invoke)
	p.trigger = &nemesis.Trigger{Node: h.node, F: history.FAcquire, Type: string(history.Invoke),
		Delay: nemesis.Duration(time.Duration(m.rng.Int64N(int64(h.start-h.invoke) + 1)).Round(time.Microsecond))}
	p.offset = time.Duration(p.trigger.Delay)
	if m.allows(nemesis.Pause) && m.rng.IntN(2) == 0 {
		d := time.Duration(m.rng.IntN(1000)) * time.Microsecond
		pd := time.Duration(p.outlast())
		p.pause = &nemesis.Fault{Kind: nemesis.Pause, Targets: []string{h.node}, Duration: nemesis.Duration(pd), At: nemesis.Duration(p.at),
			After: &nemesis.Trigger{Node: h.node, F: history.FAcquire, Type: string(history.Invoke), Delay: nemesis.Duration(d)}}
		p.f = nemesis.Fault{Kind: nemesis.ClockJump, Targets: []string{h.node}, Amount: nemesis.Duration(-pd)}
		p.trigger.Delay, p.offset = nemesis.Duration(d+pd), d
	}
}

// cutGranter cuts off or pauses a granter. Half the time (when the family
// has delays) replication first lags to the other servers from before the
// grant until after the attack began; half of those cut one of them off
// with the granter instead (it acknowledged the grant: WAIT), and the
// monitor promotes a lagging one.
func (p *attackPlan) cutGranter(attack string) {
	m, h := p.m, p.h
	p.f.Kind, p.f.Targets = nemesis.Partition, p.pick(p.granters)
	if attack == "pause-granter" {
		p.f.Kind = nemesis.Pause
	}
	var rest []string
	for _, s := range p.others {
		if s != p.f.Targets[0] {
			rest = append(rest, s)
		}
	}
	if !m.allows(nemesis.Delay) || len(rest) == 0 || m.rng.IntN(2) != 0 {
		return
	}
	lagged := slices.Clone(rest)
	if m.rng.IntN(2) == 0 && p.f.Kind == nemesis.Partition {
		i := m.rng.IntN(len(lagged))
		p.f.Targets = append(p.f.Targets, lagged[i])
		lagged = slices.Delete(lagged, i, i+1)
	}
	if len(lagged) > 0 {
		p.lag = &nemesis.Fault{Kind: nemesis.Delay, From: p.f.Targets[:1], To: lagged,
			Amount: nemesis.Duration(p.offset + m.logUniform(2*time.Millisecond, time.Second)),
			At:     nemesis.Duration(h.invoke), After: &nemesis.Trigger{Node: h.node, F: history.FAcquire, Type: string(history.Invoke)}}
		p.lag.Duration = nemesis.Duration(time.Duration(h.start-h.invoke)+p.offset) + p.f.Duration
	}
}

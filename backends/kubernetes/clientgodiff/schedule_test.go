package clientgodiff

import (
	"fmt"
	"math/rand/v2"
	"time"
)

// record is a Lease's spec as both sides write and read it: the times are
// offsets from the start of the run, in microseconds as the API server
// keeps a MicroTime.
type record struct {
	Holder         string
	Duration       int
	Transitions    int
	Acquire, Renew time.Duration
}

// request is a Lease request as the API server saw it: when it was sent,
// its verb, the record written (create, update) and an update's
// resourceVersion precondition.
type request struct {
	At   time.Duration
	Verb string
	Rec  record
	RV   int64
}

func (r request) String() string {
	switch r.Verb {
	case "get":
		return fmt.Sprintf("%v get", r.At)
	case "update":
		return fmt.Sprintf("%v update rv=%d %+v", r.At, r.RV, r.Rec)
	}
	return fmt.Sprintf("%v %s %+v", r.At, r.Verb, r.Rec)
}

// answer is the scripted API server's answer to a request.
type answer struct {
	// Status is the HTTP status: 200, 201, 404, 409 (Reason AlreadyExists
	// or Conflict), 422, 500; 0: no answer ever (the request hangs until
	// the client's context ends).
	Status  int
	Reason  string
	Rec     record
	RV      int64
	Latency time.Duration
}

// settings are one schedule's elector configuration.
type settings struct {
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	ReleaseOnCancel                           bool
}

// timings are the elector timings the schedules draw from, each accepted
// by NewLeaderElector: client-go's lease duration and renew deadline with a
// retry period of 1.9 s instead of 2 s, and shorter ones. No renew deadline
// is a multiple of its retry period: a renew poll's ticker would then tick
// at the very instant its context ends, which in virtual time is a tie
// decided by the runtime (in real time the context, created first, ends
// first, and the model follows that).
var timings = [][3]time.Duration{
	{15 * time.Second, 10 * time.Second, 1900 * time.Millisecond},
	{6 * time.Second, 4 * time.Second, 1100 * time.Millisecond},
	{3 * time.Second, 2 * time.Second, 1500 * time.Millisecond},
	{2 * time.Second, time.Second, 300 * time.Millisecond},
}

// drawSettings draws schedule seed's configuration.
func drawSettings(seed uint64) settings {
	r := rand.New(rand.NewPCG(seed, 0x5e771265))
	t := timings[r.IntN(len(timings))]
	return settings{LeaseDuration: t[0], RenewDeadline: t[1], RetryPeriod: t[2], ReleaseOnCancel: r.IntN(2) == 0}
}

// api is the scripted API server: one Lease, and a random stream that
// decides, request by request, whether another holder writes the Lease
// first, how long the answer takes and whether it fails. Both sides build
// it from the same seed, so as long as they send the same requests they
// get the same answers.
type api struct {
	s      settings
	rng    *rand.Rand
	exists bool
	cur    record
	rv     int64 // the Lease's resourceVersion
	revs   int64 // the store's revision counter
	log    []request
}

func newAPI(seed uint64, s settings) *api {
	return &api{s: s, rng: rand.New(rand.NewPCG(seed, 0xa91))}
}

// other is the identity of the other candidate.
const other = "other_0f8e"

func (a *api) store(r record) {
	a.revs++
	a.exists, a.cur, a.rv = true, r, a.revs
}

// foreign lets the other candidate act before the request is served: take
// the Lease over (or create it), renew it, or release it.
func (a *api) foreign(at time.Duration) {
	x := a.rng.Float64()
	secs := int(a.s.LeaseDuration / time.Second)
	at = at.Truncate(time.Microsecond)
	switch {
	case x < 0.05:
		r := record{Holder: other, Duration: secs, Acquire: at, Renew: at}
		if a.exists {
			r.Transitions = a.cur.Transitions
			if a.cur.Holder != other {
				r.Transitions++
			} else {
				r.Acquire = a.cur.Acquire
			}
		}
		a.store(r)
	case x < 0.08 && a.exists && a.cur.Holder == other:
		r := a.cur
		r.Renew = at
		a.store(r)
	case x < 0.10 && a.exists && a.cur.Holder == other:
		a.store(record{Duration: 1, Transitions: a.cur.Transitions, Acquire: at, Renew: at})
	}
}

// latency draws how long an answer takes: mostly milliseconds, sometimes
// seconds (past a renew poll's remaining time). Nanosecond resolution
// keeps an answer from arriving at the very instant of a deadline.
func (a *api) latency() time.Duration {
	if a.rng.Float64() < 0.85 {
		return time.Millisecond + time.Duration(a.rng.Int64N(int64(40*time.Millisecond)))
	}
	return time.Duration(a.rng.Int64N(int64(a.s.RenewDeadline + a.s.RenewDeadline/5)))
}

// serve answers q as kube-apiserver would, after the scripted faults.
func (a *api) serve(q request) answer {
	a.log = append(a.log, q)
	a.foreign(q.At)
	lat := a.latency()
	fault := a.rng.Float64()
	switch {
	case fault < 0.05:
		return answer{Status: 500, Reason: "InternalError", Latency: lat}
	case fault < 0.07:
		return answer{} // lost: no answer, not applied
	}
	ans := a.apply(q)
	ans.Latency = lat
	if fault < 0.10 {
		return answer{} // applied, but the answer never comes
	}
	return ans
}

func (a *api) apply(q request) answer {
	switch q.Verb {
	case "get":
		if !a.exists {
			return answer{Status: 404, Reason: "NotFound"}
		}
		return answer{Status: 200, Rec: a.cur, RV: a.rv}
	case "create", "update":
		if q.Rec.Duration <= 0 {
			return answer{Status: 422, Reason: "Invalid"}
		}
	}
	switch {
	case q.Verb == "create" && a.exists:
		return answer{Status: 409, Reason: "AlreadyExists"}
	case q.Verb == "create":
		a.store(q.Rec)
		return answer{Status: 201, Rec: a.cur, RV: a.rv}
	case !a.exists:
		return answer{Status: 404, Reason: "NotFound"}
	case q.RV != a.rv:
		return answer{Status: 409, Reason: "Conflict"}
	}
	a.store(q.Rec)
	return answer{Status: 200, Rec: a.cur, RV: a.rv}
}

// leadership is a start or stop of leading, and when.
type leadership struct {
	At      time.Duration
	Started bool
}

func (l leadership) String() string {
	if l.Started {
		return fmt.Sprintf("%v started leading", l.At)
	}
	return fmt.Sprintf("%v stopped leading", l.At)
}

// trace is what one side did over a schedule.
type trace struct {
	Requests []request
	Leading  []leadership
}

// before keeps what happened before end.
func (t trace) before(end time.Duration) trace {
	var out trace
	for _, r := range t.Requests {
		if r.At < end {
			out.Requests = append(out.Requests, r)
		}
	}
	for _, l := range t.Leading {
		if l.At < end {
			out.Leading = append(out.Leading, l)
		}
	}
	return out
}

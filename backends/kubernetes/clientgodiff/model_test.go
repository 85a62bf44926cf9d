package clientgodiff

import (
	"math/rand"
	"time"

	"github.com/locklab/locklab/backends/kubernetes"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/sim"
)

// scripted is the API server node of the model's side: it answers each
// Request from the schedule, after the scripted latency (the network
// itself adds none).
type scripted struct {
	api   *api
	wall0 time.Duration // the client's wall clock at time zero
}

func (s *scripted) Start(*sim.Node) {}

func (s *scripted) recordOf(r kubernetes.Record) record {
	return record{Holder: r.Holder, Duration: r.DurationSeconds, Transitions: r.Transitions,
		Acquire: (r.AcquireTime - s.wall0).Truncate(time.Microsecond), Renew: (r.RenewTime - s.wall0).Truncate(time.Microsecond)}
}

func (s *scripted) Receive(n *sim.Node, m sim.Message) {
	r, ok := m.Body.(kubernetes.Request)
	if !ok {
		return
	}
	q := request{At: n.World().Now(), Verb: string(r.Verb)}
	if r.Verb != kubernetes.VerbGet {
		q.Rec = s.recordOf(r.Record)
	}
	if r.Verb == kubernetes.VerbUpdate {
		q.RV = r.ResourceVersion
	}
	ans := s.api.serve(q)
	if ans.Status == 0 {
		return // never answered: the client's context ends it
	}
	resp := kubernetes.Response{Status: kubernetes.Status(ans.Status), Reason: ans.Reason, ResourceVersion: ans.RV, Server: n.Name(),
		Record: kubernetes.Record{Holder: ans.Rec.Holder, DurationSeconds: ans.Rec.Duration, Transitions: ans.Rec.Transitions,
			AcquireTime: s.wall0 + ans.Rec.Acquire, RenewTime: s.wall0 + ans.Rec.Renew}}
	n.Spawn("answer", func(p *sim.Proc) {
		p.Sleep(ans.Latency)
		n.Reply(m, resp)
	})
}

// runModel runs the model's elector (Client.Run, again each time it
// returns) for end over schedule seed, with client-go's jitter draws, as
// the client-go release line release does.
func runModel(seed uint64, end time.Duration, release kubernetes.ClientGo) (trace, error) {
	s := drawSettings(seed)
	o := kubernetes.DefaultOptions()
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod, o.ReleaseOnCancel = s.LeaseDuration, s.RenewDeadline, s.RetryPeriod, s.ReleaseOnCancel
	o.Identity = kubernetes.IdentityNode
	o.ClientGo = release
	w := sim.NewWorld(sim.Config{Seed: seed})
	w.Network().SetDefaultLink(sim.Link{})
	a := newAPI(seed, s)
	client := w.AddNode(identity, sim.NodeOptions{})
	h := &scripted{api: a, wall0: client.Wall()}
	server := w.AddNode("apiserver1", sim.NodeOptions{Handler: h})
	var tr trace
	var err error
	client.Spawn(identity, func(p *sim.Proc) {
		cl, e := kubernetes.NewStandaloneClient(p, o, []*sim.Node{server})
		if e != nil {
			err = e
			return
		}
		// client-go's wait.Jitter draws from math/rand's global source,
		// seeded with the schedule's seed (see runClientGo).
		cl.SetJitter(rand.New(rand.NewSource(int64(seed))).Float64)
		for {
			if cl.Run("lease", time.Duration(1<<62), func(lockapi.Lease) {
				tr.Leading = append(tr.Leading, leadership{At: w.Now(), Started: true})
			}) {
				tr.Leading = append(tr.Leading, leadership{At: w.Now()})
			}
		}
	})
	w.RunUntil(end)
	w.Close()
	tr.Requests = a.log
	return tr.before(end), err
}

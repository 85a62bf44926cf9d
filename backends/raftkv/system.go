package raftkv

import (
	"fmt"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/sim"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
)

func init() {
	system.Register(system.System{
		Name: "raftkv",
		// A holder paused, cut off or delayed for less than this keeps its
		// lock: such faults do not test the design.
		Timeouts:    []system.Timeout{{Kinds: []string{"pause", "partition", "delay"}, Option: "lease", What: "the lease"}},
		GroundTruth: []system.Truth{{Label: "raftkv", Storage: storage.Fenced}},
		Recorded: []system.Recorded{
			{Label: "raftkv", Nemesis: "random", Seeds: system.Seeds(1, 3), Time: time.Minute},
			{Label: "raftkv", Nemesis: "partition", Seeds: []uint64{5}, Time: time.Minute},
			{Label: "raftkv", Nemesis: "clock", Seeds: []uint64{5}, Time: time.Minute},
			{Label: "raftkv", Nemesis: "crash,pause", Seeds: []uint64{5}, Time: time.Minute},
			{Label: "raftkv", Nemesis: "random", Seeds: system.Seeds(11, 3), Time: 40 * time.Second, Trace: true},
			{Label: "raftkv/5nodes", Options: map[string]string{"nodes": "5"}, Nemesis: "partition,crash", Seeds: []uint64{3},
				Time: 40 * time.Second, Trace: true},
			{Label: "raftkv/fsync=interval", Options: map[string]string{"fsync": "interval"}, Nemesis: "crash", Seeds: []uint64{4},
				Time: 40 * time.Second, Trace: true},
			{Label: "raftkv/client-stamp/reentrant", Options: map[string]string{"stamp": "client", "prevote": "false"},
				Workload: "reentrant", Nemesis: "pause,clock", Seeds: []uint64{5}, Time: 30 * time.Second, Trace: true},
			{Label: "raftkv", Nemesis: "delay", Seeds: []uint64{6}, Time: 30 * time.Second, Trace: true},
		},
		Doc: "Raft-replicated KV lock with RheaKV semantics on etcd raft (3 or 5 nodes): reentrant, leased, " +
			"watchdog renewal, fencing tokens from replicated state, leader-stamped lease time",
		Options: Table,
		Deploy:  system.DeployService(Table, NewCluster, (*Cluster).NewClient, deployRaftKV),
		Claims:  []system.Claims{{Tokens: true, SafeRelease: true}},
		Designs: []system.Design{
			{Name: "Raft KV lock (RheaKV)", Modes: system.UnfencedOnly},
			{Name: "Raft KV lock (RheaKV) + fencing token", Modes: system.FencedModes},
		},
		Audits:  []string{raftAuditName},
		InOrder: true, // one session per client, stale sequence numbers refused
	})
}

// deployRaftKV hands the run what the raft group offers: its audit, its
// elections and the storage of its logs to reuse.
func deployRaftKV(_ *sim.World, _ Options, c *Cluster) system.Deployment {
	return system.Deployment{
		HasTokens: true,
		Messages:  MessageTypes(),
		Audit:     raftAudit{c},
		Figures:   func() map[string]any { return raftFigures(c) },
		Release:   c.Release,
	}
}

// raftAudit turns the audit of the raft group into a verdict: Raft's own
// promises, observed from outside the nodes.
type raftAudit struct{ c *Cluster }

// raftAuditName is the name of raftkv's audit.
const raftAuditName = "raft-audit"

// Name is "raft-audit".
func (raftAudit) Name() string { return raftAuditName }

// ReadsNoHistory reports true: the audit reads the cluster, not the events.
func (raftAudit) ReadsNoHistory() bool { return true }

// Check reports the audit's violations; the history is not needed.
func (a raftAudit) Check([]history.Event) models.Verdict {
	c := a.c
	v := models.Verdict{Stats: map[string]float64{
		"elections": float64(len(c.Audit().Elections())), "acknowledged": float64(c.Audit().Acks())}}
	if bad := c.Violations(); len(bad) > 0 {
		v.Result = models.Invalid
		v.Reason = fmt.Sprintf("%d breaches of Raft's guarantees (at most one leader per term, the same entry at every index, no acknowledged command lost)", len(bad))
		v.Counterexample = &models.Counterexample{Explanation: bad}
		return v
	}
	v.Result = models.Valid
	v.Reason = fmt.Sprintf("%d elections, at most one leader per term, logs agree, all %d acknowledged commands are on a majority",
		len(c.Audit().Elections()), c.Audit().Acks())
	return v
}

// raftFigures are the raft group's elections, for results.json.
func raftFigures(c *Cluster) map[string]any {
	type election struct {
		Term         uint64  `json:"term"`
		Leader       string  `json:"leader"`
		AtMS         float64 `json:"at_ms"`
		LeaderlessMS float64 `json:"leaderless_ms"`
	}
	elections := []election{}
	for _, e := range c.Audit().Elections() {
		elections = append(elections, election{Term: e.Term, Leader: NodeName(e.Leader),
			AtMS: float64(e.At) / 1e6, LeaderlessMS: float64(e.Leaderless) / 1e6})
	}
	return map[string]any{"elections": elections}
}

// ClusterOf returns the raftkv cluster deployed in world w (nil when w holds
// none), for audits and figures after a run.
func ClusterOf(w *sim.World) *Cluster {
	n := w.Node(NodeName(1))
	if n == nil {
		return nil
	}
	if s, ok := n.Handler().(*Server); ok {
		return s.Cluster()
	}
	return nil
}

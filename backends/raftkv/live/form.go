package raftkvlive

import (
	"time"

	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/scenario"
)

// The live form of raftkv: the cluster in this process, a client per
// client node (see NewClient).
func init() {
	liveform.Register("raftkv", liveform.Form{
		Note:     "hashicorp/raft in-process",
		Options:  Table,
		Describe: describeRaftKV,
		Deploy:   deployRaftKV,
	})
}

func describeRaftKV(t scenario.Test) (liveform.Description, error) {
	o, err := ParseOptions(t.SystemOptions)
	if err != nil {
		return liveform.Description{}, err
	}
	desc := liveform.RaftCluster(liveform.ServerNames(o.Nodes, NodeName))
	desc.Messages = MessageTypes()
	return desc, nil
}

func deployRaftKV(d liveform.Deployment) (*liveform.Deployed, error) {
	o, err := ParseOptions(d.Test.SystemOptions)
	if err != nil {
		return nil, err
	}
	c, err := NewCluster(d.Net, o)
	if err != nil {
		return nil, err
	}
	if _, err := c.WaitLeader(d.Setup); err != nil {
		c.Close()
		return nil, err
	}
	desc, _ := describeRaftKV(d.Test)
	desc.Resolve = c.Resolve
	return &liveform.Deployed{
		Description: desc,
		NewLock: func(lc liveform.Client) lockapi.Lock {
			e, fork := lc.Env, lc.Fork
			return c.NewClient(e, fork)
		},
		Crash:   c.Crash,
		Restart: c.Restart,
		Tokens:  true,
		Figures: func(start time.Duration) map[string]any {
			type election struct {
				AtMS   float64 `json:"at_ms"`
				Node   string  `json:"node"`
				Leader string  `json:"leader"`
			}
			els := []election{}
			for _, e := range c.Elections() {
				if e.At >= start {
					els = append(els, election{AtMS: float64(e.At-start) / 1e6, Node: e.Node, Leader: e.Leader})
				}
			}
			return map[string]any{"leader_observations": els}
		},
		Versions: map[string]string{"raft": Version, "raftkv": "in-process: lockfsm on hashicorp/raft, InmemStore, InmemTransport"},
		Close:    c.Close,
	}, nil
}

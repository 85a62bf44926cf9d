package live

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locklab/locklab/backends"
	"github.com/locklab/locklab/backends/live/faultnet"
	liveraft "github.com/locklab/locklab/backends/live/raftkv"
)

// system is a lock system deployed live.
type system struct {
	servers  []string
	roles    []string
	resolve  func(role string) ([]string, bool)
	newLock  func(e *env, fork func() backends.Env) backends.Lock
	crash    func(name string) error
	restart  func(name string) error
	messages []any
	figures  func(start time.Duration) map[string]any
	versions map[string]string
	tokens   bool
	close    func()
}

// deployers are the systems with a live form.
var deployers = map[string]func(net *faultnet.Net, opts map[string]string, setup time.Duration) (*system, error){
	"raftkv": deployRaftKV,
}

// Systems lists the systems that can run live.
func Systems() []string {
	var out []string
	for k := range deployers {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func deployRaftKV(net *faultnet.Net, opts map[string]string, setup time.Duration) (*system, error) {
	o, err := liveraft.ParseOptions(opts)
	if err != nil {
		return nil, err
	}
	c, err := liveraft.NewCluster(net, o)
	if err != nil {
		return nil, err
	}
	if _, err := c.WaitLeader(setup); err != nil {
		c.Close()
		return nil, err
	}
	return &system{
		servers: c.Names(),
		roles:   []string{"leader", "followers"},
		resolve: c.Resolve,
		newLock: func(e *env, fork func() backends.Env) backends.Lock {
			return c.NewClient(e, fork)
		},
		crash:    c.Crash,
		restart:  c.Restart,
		messages: liveraft.MessageTypes(),
		tokens:   true,
		figures: func(start time.Duration) map[string]any {
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
		versions: map[string]string{"raft": liveraft.Version, "raftkv": "in-process: lockfsm on hashicorp/raft, InmemStore, InmemTransport"},
		close:    c.Close,
	}, nil
}

func unknownSystem(name string) error {
	return fmt.Errorf("system %q has no live form yet (live: %s)", name, strings.Join(Systems(), ", "))
}

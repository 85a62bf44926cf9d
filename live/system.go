package live

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/locklab/locklab/backends/live/faultnet"
	liveraft "github.com/locklab/locklab/backends/raftkv/live"
	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/nemesis"
)

// Deployer is a system's live form: how to describe it without starting
// it, and how to start it. Register one per system (see register).
type Deployer struct {
	// Describe names the servers and roles of the test's system and checks
	// its live options, without starting anything.
	Describe func(t harness.Test) (Description, error)
	// Deploy starts the system for a run; the system's close stops it.
	Deploy func(d Deployment) (*system, error)
	// Options is the live option table (for scaling and defaults); nil if
	// the system has none.
	Options opt.Spec
	// Note says, for `--help` and errors, what runs live ("hashicorp/raft
	// in-process", "redis-server").
	Note string
}

// Description is what a live system is made of, known before it starts:
// enough to check a fault schedule's names and kinds.
type Description struct {
	// Servers are the server node names (what crash, pause and partition
	// name).
	Servers []string
	// Roles are role names a schedule may use (leader, primary, ...);
	// Resolve maps one to the servers it may name.
	Roles   []string
	Resolve func(role string) ([]string, bool)
	// Messages are the message types a delay's match may name (nil: the
	// system's messages do not pass through locklab, and a match is refused).
	Messages []any
	// Refuse says why the system cannot perform fault f live ("" if it
	// can), beyond the kinds no live system performs (Unsupported).
	Refuse func(f nemesis.Fault) string
}

// Deployment is what a system's Deploy gets.
type Deployment struct {
	// Ctx ends when the run is interrupted; a Deploy waiting for servers
	// stops waiting.
	Ctx  context.Context
	Net  *faultnet.Net
	Test harness.Test
	// Setup bounds the start of the system (servers ready, a first leader).
	Setup time.Duration
	// Dir is where server data directories and logs go (in the run
	// directory's servers/ once the run is written).
	Dir string
}

// system is a lock system deployed live.
type system struct {
	Description
	newLock  func(e *env, fork func() lockapi.Env) lockapi.Lock
	crash    func(name string) error
	restart  func(name string) error
	figures  func(start time.Duration) map[string]any
	versions map[string]string
	tokens   bool
	close    func()

	// Real server processes perform some faults themselves; nil leaves the
	// fault to faultnet (in-process servers and every client).
	//
	// pause/resume stop and continue a server (SIGSTOP/SIGCONT).
	pause, resume func(name string) error
	// jumpClock moves a server's wall clock by d (libfaketime).
	jumpClock func(name string, d time.Duration) error
	// cut blocks the link from -> to (a proxy) and reports true, or reports
	// false when the link is not one the system carries (faultnet's).
	cut func(from, to string) (bool, error)
	// heal undoes cut.
	heal func(from, to string) error

	// A system may keep the protected data itself (the database's rows).
	//
	// storage, when set, is the storage of the client whose lock is l,
	// instead of the in-process store.
	storage func(l lockapi.Lock) lockapi.Storage
	// preset puts the workload's initial values into that storage.
	preset func(initial map[string]int64) error
	// events, when set, is given the function that records the system's own
	// events (a lock row taken over, a transaction the server aborted) in
	// the history, as the simulated system records them.
	events func(record func(kind string, targets []string, detail string))
	// delay delays what from sends to to by d until until (zero: until the
	// run ends) on a link the system carries itself, reporting false for a
	// link it does not carry (faultnet's).
	delay func(from, to string, d time.Duration, until time.Time) (bool, error)
}

// deployers are the systems with a live form.
var deployers = map[string]Deployer{}

// register adds a system's live form (from an init function).
func register(name string, d Deployer) {
	if _, dup := deployers[name]; dup {
		panic("live: system registered twice: " + name)
	}
	deployers[name] = d
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

// Notes lists the systems that can run live, each with what runs.
func Notes() []string {
	var out []string
	for _, k := range Systems() {
		out = append(out, k+" ("+deployers[k].Note+")")
	}
	return out
}

func init() {
	register("raftkv", Deployer{
		Note:     "hashicorp/raft in-process",
		Options:  liveraft.Table,
		Describe: describeRaftKV,
		Deploy:   deployRaftKV,
	})
}

func describeRaftKV(t harness.Test) (Description, error) {
	o, err := liveraft.ParseOptions(t.SystemOptions)
	if err != nil {
		return Description{}, err
	}
	var servers []string
	for i := 1; i <= o.Nodes; i++ {
		servers = append(servers, liveraft.NodeName(i))
	}
	return Description{
		Servers: servers,
		Roles:   []string{"leader", "followers"},
		Resolve: func(role string) ([]string, bool) {
			switch role {
			case "leader", "followers":
				return servers, true
			}
			return nil, false
		},
		Messages: liveraft.MessageTypes(),
	}, nil
}

func deployRaftKV(d Deployment) (*system, error) {
	o, err := liveraft.ParseOptions(d.Test.SystemOptions)
	if err != nil {
		return nil, err
	}
	c, err := liveraft.NewCluster(d.Net, o)
	if err != nil {
		return nil, err
	}
	if _, err := c.WaitLeader(d.Setup); err != nil {
		c.Close()
		return nil, err
	}
	desc, _ := describeRaftKV(d.Test)
	desc.Resolve = c.Resolve
	return &system{
		Description: desc,
		newLock: func(e *env, fork func() lockapi.Env) lockapi.Lock {
			return c.NewClient(e, fork)
		},
		crash:   c.Crash,
		restart: c.Restart,
		tokens:  true,
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

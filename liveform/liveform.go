// Package liveform is the contract between a lock system's live form and
// the live runner (package live): how a system describes the real servers it
// would start, starts them, makes a lock for each client, and performs the
// faults real processes can perform themselves (SIGSTOP, libfaketime, a
// proxy's cut).
//
// A system's live form sits beside its simulated form, in backends/<x>/live,
// and registers itself from an init function with Register, the way the
// simulated form registers with package system. The live runner names no
// system: it looks forms up here. This package starts nothing and reads no
// clock; it imports only the low floors (scenario, nemesis, lockapi,
// history, internal helpers), so that a form may import it.
package liveform

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/faultnet"
	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// ErrNotLive marks a test that cannot run live as given: a fault the live
// system cannot perform, an option its real server or library cannot
// honour. `repro --live --all` skips such a variant, naming the reason.
var ErrNotLive = errors.New("cannot run live")

// NotLive wraps err (an option refusal) so that it reads as err and matches
// ErrNotLive.
func NotLive(err error) error { return notLive{err} }

type notLive struct{ err error }

// Options parses a test's system options with the system's table and
// refuses, as not live (NotLive), those that check finds without a live
// form.
func Options[T any](table opt.Table[T], t scenario.Test, check func(T) error) (T, error) {
	o, err := table.Parse(t.SystemOptions)
	if err != nil {
		return o, err
	}
	if err := check(o); err != nil {
		return o, NotLive(err)
	}
	return o, nil
}

func (e notLive) Error() string        { return e.err.Error() }
func (e notLive) Unwrap() error        { return e.err }
func (e notLive) Is(target error) bool { return target == ErrNotLive }

// Form is a system's live form: how to describe it without starting it, and
// how to start it.
type Form struct {
	// Describe names the servers and roles of the test's system and checks
	// its live options, without starting anything.
	Describe func(t scenario.Test) (Description, error)
	// Deploy starts the system for a run; the Deployed's Close stops it.
	Deploy func(d Deployment) (*Deployed, error)
	// Options is the live option table (for scaling and defaults); nil if
	// the system has none.
	Options opt.Spec
	// Note says, for `--help` and errors, what runs live ("hashicorp/raft
	// in-process", "redis-server").
	Note string
	// UnreachableOut, when set, says why the servers of test t cannot keep
	// their data beside the run directory runDir ("" when they can): a
	// server run as its own user must be able to pass through it. Said
	// before the run, so that the run is refused before any server starts.
	UnreachableOut func(t scenario.Test, runDir string) string
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
	// can), beyond the kinds no live system performs.
	Refuse func(f nemesis.Fault) string
}

// Deployment is what a form's Deploy gets.
type Deployment struct {
	// Ctx ends when the run is interrupted; a Deploy waiting for servers
	// stops waiting.
	Ctx context.Context
	// Net carries the links locklab does not leave to real proxies, and
	// gates paused clients.
	Net  *faultnet.Net
	Test scenario.Test
	// Setup bounds the start of the system (servers ready, a first leader).
	Setup time.Duration
	// Dir is where server data directories and logs go (in the run
	// directory's servers/ once the run is written).
	Dir string
}

// Client is what a form gets for each client it makes a lock for.
type Client struct {
	// Env is the client's environment (its clocks, sleep, randomness); every
	// call passes the client's pause gate.
	Env lockapi.Env
	// Fork makes the Env of a background routine of this client (a
	// watchdog, a keep-alive goroutine).
	Fork func() lockapi.Env
	// NewRecorder opens a process of its own on the client's node in the
	// run's history (a transaction's begin and commit are recorded there).
	NewRecorder func() *history.Recorder
	// Stopped reports whether the run has stopped (nothing more is
	// recorded).
	Stopped func() bool
}

// Deployed is a lock system started live.
type Deployed struct {
	Description
	// NewLock makes the lock of one client.
	NewLock func(c Client) lockapi.Lock
	// Crash and Restart kill and start a server again.
	Crash, Restart func(name string) error
	// Figures are the system's own figures for results.json (elections
	// seen, say), from start (the workload's start on the run's clock).
	Figures func(start time.Duration) map[string]any
	// Versions names what ran ("redis-server": "7.0.15").
	Versions map[string]string
	// Tokens says whether the system's locks carry fencing tokens.
	Tokens bool
	// Close stops every server and client connection.
	Close func()

	// Real server processes perform some faults themselves; nil leaves the
	// fault to faultnet (in-process servers and every client).
	//
	// Pause and Resume stop and continue a server (SIGSTOP/SIGCONT).
	Pause, Resume func(name string) error
	// JumpClock moves a server's wall clock by d (libfaketime).
	JumpClock func(name string, d time.Duration) error
	// Cut blocks the link from -> to (a proxy) and reports true, or reports
	// false when the link is not one the system carries (faultnet's).
	Cut func(from, to string) (bool, error)
	// Heal undoes Cut.
	Heal func(from, to string) error
	// Delay delays what from sends to to by d until until (zero: until the
	// run ends) on a link the system carries itself, reporting false for a
	// link it does not carry (faultnet's).
	Delay func(from, to string, d time.Duration, until time.Time) (bool, error)

	// A system may keep the protected data itself (the database's rows).
	//
	// Storage, when set, is the storage of the client whose lock is l,
	// instead of the in-process store.
	Storage func(l lockapi.Lock) lockapi.Storage
	// Preset puts the workload's initial values into that storage.
	Preset func(initial map[string]int64) error
	// Events, when set, is given the function that records the system's own
	// events (a lock row taken over, a transaction the server aborted) in
	// the history, as the simulated system records them.
	Events func(record func(kind string, targets []string, detail string))
}

var forms = map[string]Form{}

// Register adds a system's live form; call it from an init function. The
// name is the simulated system's name. Registering a name twice panics.
func Register(name string, f Form) {
	if _, dup := forms[name]; dup {
		panic("liveform: system registered twice: " + name)
	}
	if f.Describe == nil || f.Deploy == nil {
		panic("liveform: system " + name + " registered without Describe or Deploy")
	}
	forms[name] = f
}

// Unregister removes the live form of the named system and reports whether
// it was there: for a test that registers a throw-away system (as
// system.Unregister is) and must leave the registry as it found it.
func Unregister(name string) bool {
	_, ok := forms[name]
	delete(forms, name)
	return ok
}

// Find returns the live form of the named system.
func Find(name string) (Form, bool) {
	f, ok := forms[name]
	return f, ok
}

// Names lists the systems with a live form, sorted.
func Names() []string {
	out := make([]string, 0, len(forms))
	for k := range forms {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Notes lists the systems with a live form, each with what runs.
func Notes() []string {
	var out []string
	for _, k := range Names() {
		out = append(out, k+" ("+forms[k].Note+")")
	}
	return out
}

// Unknown is the error for a system with no live form. It says how a
// program gets live forms: a user's lock registered with package
// userlock/live, the built-in systems' with package backends/builtin.
func Unknown(name string) error {
	return fmt.Errorf("system %q has no live form yet (live: %s); %s", name, strings.Join(Names(), ", "), NotLinked)
}

// NotLinked says where live forms come from, for a program that asks for
// one it did not link.
const NotLinked = "a lock of your own gets its live form when registered with package userlock/live " +
	"(userlive.RegisterRedis ...) instead of userlock, and the built-in systems' come with package " +
	"backends/builtin, which the locklab command imports"

// RetryDeploy tries a deployment up to three times when a server exits
// before it is ready: ports are reserved by binding and releasing them
// (proc.FreePorts), and a proxy's own listener, or another process, may
// take one before its server binds it. Each try has its own directory. A
// server counts as ready only when its port answers as itself, so a start
// whose port was taken fails as one that exited before it was ready.
func RetryDeploy(deploy func(Deployment) (*Deployed, error)) func(Deployment) (*Deployed, error) {
	return func(d Deployment) (*Deployed, error) {
		var err error
		for try := 1; try <= 3; try++ {
			dt := d
			if try > 1 {
				dt.Dir = filepath.Join(d.Dir, fmt.Sprintf("retry%d", try))
			}
			var sys *Deployed
			sys, err = deploy(dt)
			if err == nil || !strings.Contains(err.Error(), "before it was ready") || (d.Ctx != nil && d.Ctx.Err() != nil) {
				return sys, err
			}
		}
		return nil, err
	}
}

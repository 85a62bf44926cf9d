package zookeeper

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/lockapi"
)

// scriptEnv is a client routine's Env whose clock moves only by its sleeps.
type scriptEnv struct {
	now time.Duration
	rnd *rand.Rand
}

func (e *scriptEnv) Name() string          { return "c1" }
func (e *scriptEnv) Mono() time.Duration   { return e.now }
func (e *scriptEnv) Wall() time.Duration   { return e.now }
func (e *scriptEnv) Sleep(d time.Duration) { e.now += d }
func (e *scriptEnv) Rand() *rand.Rand      { return e.rnd }

func newScriptEnv() *scriptEnv { return &scriptEnv{rnd: rand.New(rand.NewPCG(1, 2))} }

// scriptTransport answers the recipe's requests from a script, in order,
// and records them; it starts no routine (Go records the name only).
type scriptTransport struct {
	script  []func(r Request) (Response, error)
	sent    []Request
	started []string
}

func (t *scriptTransport) Connect(lockapi.Env) error                  { return nil }
func (t *scriptTransport) Mark() int                                  { return 0 }
func (t *scriptTransport) Ready() bool                                { return true }
func (t *scriptTransport) Session() int64                             { return 7 }
func (t *scriptTransport) Vouches(int64) bool                         { return true }
func (t *scriptTransport) LastHeard() time.Duration                   { return 0 }
func (t *scriptTransport) Adopt(string, int64)                        {}
func (t *scriptTransport) Await(lockapi.Env, int, time.Duration) bool { return true }
func (t *scriptTransport) Go(_ lockapi.Env, name string, _ func(lockapi.Env)) {
	t.started = append(t.started, name)
}

func (t *scriptTransport) Call(_ lockapi.Env, r Request) (Response, error) {
	t.sent = append(t.sent, r)
	if len(t.script) == 0 {
		return Response{}, fmt.Errorf("request %d (%s %s) not in the script", len(t.sent), r.Op, r.Path)
	}
	next := t.script[0]
	t.script = t.script[1:]
	return next(r)
}

func code(c Code) func(Request) (Response, error) {
	return func(Request) (Response, error) { return Response{Code: c}, nil }
}

// created answers a create with the node's path and czxid.
func created(czxid uint64) func(Request) (Response, error) {
	return func(r Request) (Response, error) {
		return Response{Code: CodeOK, Path: r.Path + "0000000000", Stat: Stat{Czxid: czxid, EphemeralOwner: 7}}, nil
	}
}

// TestTheRecipeOnARealServersAnswers: what only a real server (through the
// live handle) answers, the recipe handles too; the simulated tree makes a
// lock's parents itself and answers a create with its stat, so these paths
// do not run in the simulator.
func TestTheRecipeOnARealServersAnswers(t *testing.T) {
	tests := []struct {
		name   string
		script []func(Request) (Response, error)
		// ops are the requests' operations and paths, in order ("*" is our node).
		ops     []string
		granted bool
		want    error // the acquire's outcome, when not granted
		started []string
	}{
		{
			name: "a create that finds no parent makes the parents, then creates again",
			script: []func(Request) (Response, error){
				code(CodeNoNode), code(CodeOK), code(CodeNodeExists), created(5),
				func(r Request) (Response, error) {
					return Response{Code: CodeOK, Children: []string{"_c_x-lock-0000000001", "_c_" + guid1 + "-lock-0000000000"}}, nil
				},
			},
			ops:     []string{"create *", "create /lock", "create /lock/k", "create *", "getChildren /lock/k"},
			granted: true,
		},
		{
			name: "a create answered without a stat gives its node up: certainly not acquired",
			script: []func(Request) (Response, error){
				func(r Request) (Response, error) {
					return Response{Code: CodeOK, Path: r.Path + "0000000000"}, errors.New("exists: no stat")
				},
				code(CodeOK),
			},
			ops:  []string{"create *", "delete *0000000000"},
			want: lockapi.ErrNotAcquired,
		},
		{
			name: "a create answered without a stat whose delete goes unanswered is unknown, and deleted in the background",
			script: []func(Request) (Response, error){
				func(r Request) (Response, error) {
					return Response{Code: CodeOK, Path: r.Path + "0000000000"}, errors.New("exists: no stat")
				},
				func(Request) (Response, error) { return Response{}, ErrNoReply },
			},
			ops:     []string{"create *", "delete *0000000000"},
			want:    lockapi.ErrUnknown,
			started: []string{"c1/zk-io", "c1/zk-delete"},
		},
		{
			name: "a closed handle ends the create's retries at once",
			script: []func(Request) (Response, error){
				func(Request) (Response, error) { return Response{}, ErrClosed },
			},
			ops:  []string{"create *"},
			want: lockapi.ErrNotAcquired,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := &scriptTransport{script: tc.script}
			c := NewClient(newScriptEnv(), tr, DefaultOptions())
			l, err := c.Acquire("k", time.Second)
			ours := "/lock/k/_c_" + guid1 + "-lock-"
			var ops []string
			for _, r := range tr.sent {
				p := r.Path
				if len(p) >= len(ours) && p[:len(ours)] == ours {
					p = "*" + p[len(ours):]
				}
				ops = append(ops, string(r.Op)+" "+p)
			}
			assert.Equal(t, tc.ops, ops)
			if tc.granted {
				require.NoError(t, err)
				assert.Equal(t, uint64(5), l.Token, "the czxid of the node created after its parents")
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, tc.want)
			if !errors.Is(tc.want, lockapi.ErrUnknown) {
				assert.NotErrorIs(t, err, lockapi.ErrUnknown)
			}
			if tc.started != nil {
				assert.Equal(t, tc.started, tr.started)
			}
		})
	}
}

// guid1 is the first guid the script env's stream draws.
var guid1 = fmt.Sprintf("%016x", rand.New(rand.NewPCG(1, 2)).Uint64())

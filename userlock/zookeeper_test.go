package userlock_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/userlock"
)

// zkLock is a ZooKeeper lock as a user writes it against the raw API: an
// ephemeral sequential child of /locks/<key>; the lowest child holds; a
// waiter watches its predecessor. Its token is the child's sequence number
// plus one (tokens start at 1).
type zkLock struct {
	env    userlock.Env
	conn   userlock.ZooKeeper
	fenced bool
}

var zkACL = zk.WorldACL(zk.PermAll)

func (l *zkLock) Acquire(key string, wait time.Duration) (userlock.Lease, error) {
	deadline := l.env.Mono() + wait
	dir := "/locks/" + key
	for _, p := range []string{"/locks", dir} {
		if _, err := l.conn.Create(p, nil, 0, zkACL); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return userlock.Lease{}, fmt.Errorf("create %s: %w: %w", p, err, userlock.ErrNotAcquired)
		}
	}
	ours, err := l.conn.Create(dir+"/lock-", []byte(l.env.Name()), zk.FlagEphemeral|zk.FlagSequence, zkACL)
	if errors.Is(err, zk.ErrConnectionClosed) {
		return userlock.Lease{}, fmt.Errorf("create: %w: %w", err, userlock.ErrUnknown)
	}
	if err != nil {
		return userlock.Lease{}, fmt.Errorf("create: %w: %w", err, userlock.ErrNotAcquired)
	}
	giveUp := func(cause error) (userlock.Lease, error) {
		if err := l.conn.Delete(ours, -1); err != nil && !errors.Is(err, zk.ErrNoNode) {
			return userlock.Lease{}, fmt.Errorf("%w; delete %s: %w: %w", cause, ours, err, userlock.ErrUnknown)
		}
		return userlock.Lease{}, fmt.Errorf("%w: %w", cause, userlock.ErrNotAcquired)
	}
	for {
		children, _, err := l.conn.Children(dir)
		if err != nil {
			return giveUp(err)
		}
		slices.Sort(children)
		i := slices.Index(children, ours[len(dir)+1:])
		switch {
		case i < 0:
			return userlock.Lease{}, fmt.Errorf("%s is gone: %w", ours, userlock.ErrNotAcquired)
		case i == 0:
			seq, _ := strconv.ParseUint(ours[len(ours)-10:], 10, 64)
			return userlock.Lease{Key: key, Owner: ours, Token: seq + 1, HasToken: l.fenced}, nil
		}
		exists, _, ch, err := l.conn.ExistsW(dir + "/" + children[i-1])
		if err != nil {
			return giveUp(err)
		}
		if !exists {
			continue
		}
		left := deadline - l.env.Mono()
		if left <= 0 {
			return giveUp(errors.New("wait budget spent"))
		}
		userlock.WaitEvent(l.env, ch, left)
	}
}

func (l *zkLock) Release(lease userlock.Lease) error {
	switch err := l.conn.Delete(lease.Owner, -1); {
	case err == nil:
		return nil
	case errors.Is(err, zk.ErrNoNode):
		return fmt.Errorf("%s: %w", lease.Owner, userlock.ErrNotHeld)
	default:
		return fmt.Errorf("delete %s: %w: %w", lease.Owner, err, userlock.ErrUnknown)
	}
}

func registerZK(t *testing.T, name string, fenced bool) {
	userlock.RegisterZooKeeper(userlock.ZooKeeperLock{
		Spec: userlock.Spec{Name: name, Tokens: fenced, SafeRelease: true},
		New: func(env userlock.Env, conn userlock.ZooKeeper) userlock.Lock {
			return &zkLock{env: env, conn: conn, fenced: fenced}
		},
	})
	t.Cleanup(func() {
		system.Unregister(name)
		liveform.Unregister(name)
	})
}

// holderPause is the catalog's kleppmann-gc-pause on a user's lock: client
// 1 pauses for 15 s right after its read under the lock, longer than its
// 10 s session.
func holderPause(name string, fenced bool) scenario.Test {
	t := scenario.Test{System: name, Clients: 2, Seed: 1, Time: 30 * time.Second,
		Schedule: scenario.Schedule(scenario.PauseAfter("c1", "read", 15*time.Second))}
	if fenced {
		t = scenario.Fenced(t)
	}
	return t
}

// TestAUsersZooKeeperLockIsJudgedAgainstTheServersRecord: the holder-pause
// scenario on a user's raw-API lock. Unfenced, client 1's write after its
// session expired lands over client 2's: critical-sections INVALID, and the
// servers' record of grants backs it (client 1's grant ran out before
// client 2's began: the servers kept their promise; the lock did not). With
// the sequence number as fencing token the stale write is rejected: valid.
func TestAUsersZooKeeperLockIsJudgedAgainstTheServersRecord(t *testing.T) {
	tests := []struct {
		name   string
		fenced bool
		want   models.Result
	}{
		{"test-zk-raw-unfenced", false, models.Invalid},
		{"test-zk-raw-fenced", true, models.Valid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			registerZK(t, tc.name, tc.fenced)
			p, err := harness.Prepare(holderPause(tc.name, tc.fenced))
			require.NoError(t, err)
			p.RecordGrants()
			r, err := p.Run()
			require.NoError(t, err)
			cs := verdict(r, "critical-sections")
			require.NotEmpty(t, cs.Check, "critical-sections ran")
			assert.Equal(t, tc.want, cs.Result, cs.Reason)
			assert.Equal(t, models.Valid, verdict(r, userlock.ConductCheck).Result, verdict(r, userlock.ConductCheck).Reason)
			assert.Contains(t, story(r), "session-expired", "the leader expired client 1's session during its pause")

			grants := p.Deployment.Grants.Grants()
			t.Logf("critical-sections: %s; %d grants", cs.Reason, len(grants))
			var c1, c2 *lockapi.Grant
			for i, g := range grants {
				switch {
				case g.Client == "c1" && c1 == nil:
					c1 = &grants[i]
				case g.Client == "c2" && c1 != nil && c2 == nil:
					c2 = &grants[i]
				}
			}
			require.NotNil(t, c1, "the record has client 1's grant: %+v", grants)
			require.NotNil(t, c2, "the record has client 2's grant after it: %+v", grants)
			t.Logf("client 1: %+v\nclient 2: %+v", *c1, *c2)
			assert.True(t, strings.HasPrefix(c1.Owner, "/locks/"), "the record names the lock node: %s", c1.Owner)
			assert.LessOrEqual(t, c1.Until, c2.At, "client 1's grant ran out (its session expired) before client 2's began")
			assert.Empty(t, p.Deployment.Grants.Breaches(), "the servers broke no promise")
			if tc.want == models.Invalid {
				assert.Contains(t, owners(r), c1.Owner, "the history's lease is the node the record granted")
			}
		})
	}
}

// TestAUsersZooKeeperLockRunsDeterministically: the same seed gives a
// byte-identical history.
func TestAUsersZooKeeperLockRunsDeterministically(t *testing.T) {
	registerZK(t, "test-zk-raw-determinism", false)
	tc := scenario.Test{System: "test-zk-raw-determinism", Clients: 3, Seed: 7, Time: 20 * time.Second, Nemesis: "random"}
	var hist [2][]byte
	for i := range hist {
		r, err := harness.Run(tc)
		require.NoError(t, err)
		require.NotEmpty(t, r.Events)
		hist[i], err = json.Marshal(r.Events)
		require.NoError(t, err)
	}
	assert.Equal(t, string(hist[0]), string(hist[1]), "two runs of seed 7 gave different histories")
}

func story(r scenario.Result) string {
	var b strings.Builder
	for _, e := range r.Events {
		fmt.Fprintf(&b, "%s %s %s\n", e.F, e.Owner, e.Detail)
	}
	return b.String()
}

func owners(r scenario.Result) []string {
	var out []string
	for _, e := range r.Events {
		if e.Owner != "" && !slices.Contains(out, e.Owner) {
			out = append(out, e.Owner)
		}
	}
	return out
}

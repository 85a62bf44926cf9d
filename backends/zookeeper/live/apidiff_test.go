package live

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/backends/zookeeper"
	"github.com/locklab/locklab/sim"
)

// zkAPI is the part of *zk.Conn the differential test calls; the simulated
// zookeeper.Conn has the same methods.
type zkAPI interface {
	Create(path string, data []byte, flags int32, acl []zk.ACL) (string, error)
	Delete(path string, version int32) error
	Exists(path string) (bool, *zk.Stat, error)
	ExistsW(path string) (bool, *zk.Stat, <-chan zk.Event, error)
	Get(path string) ([]byte, *zk.Stat, error)
	GetW(path string) ([]byte, *zk.Stat, <-chan zk.Event, error)
	Set(path string, data []byte, version int32) (*zk.Stat, error)
	Children(path string) ([]string, *zk.Stat, error)
	ChildrenW(path string) ([]string, *zk.Stat, <-chan zk.Event, error)
	Sync(path string) (string, error)
}

// apiScript makes the same calls on c and returns what each answered, in
// words that leave out what differs by nature (absolute zxids, session
// ids, times, the order of children). root is a fresh node's path; wait
// waits for one watch event.
func apiScript(c zkAPI, root string, wait func(<-chan zk.Event) string) []string {
	acl := zk.WorldACL(zk.PermAll)
	var out []string
	say := func(call string, v ...any) { out = append(out, call+" -> "+fmt.Sprint(v...)) }
	st := func(s *zk.Stat) string {
		if s == nil {
			return "nil"
		}
		return fmt.Sprintf("{version %d cversion %d children %d len %d ephemeral %v}", s.Version, s.Cversion, s.NumChildren,
			s.DataLength, s.EphemeralOwner != 0)
	}
	e := func(err error) string {
		if err == nil {
			return "ok"
		}
		return err.Error()
	}
	rel := func(p string) string { return strings.TrimPrefix(p, root) }
	p, err := c.Create(root, []byte("x"), 0, acl)
	say("create root", rel(p), " ", e(err))
	_, err = c.Create(root, nil, 0, acl)
	say("create root again", e(err))
	_, err = c.Create(root+"/none/a", nil, 0, acl)
	say("create under a missing parent", e(err))
	for i := range 2 {
		p, err = c.Create(root+"/e-", nil, zk.FlagEphemeral|zk.FlagSequence, acl)
		say(fmt.Sprint("create ephemeral sequential ", i), rel(p), " ", e(err))
	}
	_, err = c.Create(root+"/e-0000000000/x", nil, 0, acl)
	say("create under an ephemeral", e(err))
	p, err = c.Create(root+"/s-", []byte("abc"), zk.FlagSequence, acl)
	say("create sequential", rel(p), " ", e(err))
	_, err = c.Create(root+"/noacl", nil, 0, nil)
	say("create without ACL", e(err))
	_, err = c.Create("bad", nil, 0, acl)
	say("create a relative path", e(err))
	_, err = c.Create(root+"/f", nil, 9, acl)
	say("create with flag 9", e(err))
	data, s, err := c.Get(root)
	say("get root", string(data), " ", st(s), " ", e(err))
	_, err = c.Set(root, []byte("y"), 5)
	say("set with a wrong version", e(err))
	s, err = c.Set(root, []byte("yz"), 0)
	say("set with the right version", st(s), " ", e(err))
	err = c.Delete(root, -1)
	say("delete a node with children", e(err))
	err = c.Delete(root+"/e-0000000000", 7)
	say("delete with a wrong version", e(err))
	kids, s, err := c.Children(root)
	slices.Sort(kids)
	say("children", kids, " ", st(s), " ", e(err))
	ok, s, err := c.Exists(root + "/zz")
	say("exists missing", ok, " ", st(s), " ", e(err))
	ok, s, err = c.Exists(root + "/e-0000000001")
	say("exists ephemeral", ok, " ", st(s), " ", e(err))
	err = c.Delete(root+"/e-0000000000", 0)
	say("delete", e(err))
	err = c.Delete(root+"/e-0000000000", -1)
	say("delete again", e(err))
	_, _, err = c.Get(root + "/zz")
	say("get missing", e(err))
	p, err = c.Sync(root)
	say("sync", rel(p), " ", e(err))
	p, err = c.Sync(root + "/zz")
	say("sync missing", rel(p), " ", e(err))
	_, err = c.Sync("bad")
	say("sync a relative path", e(err))
	_, _, _, err = c.GetW(root + "/zz")
	say("getW missing", e(err))

	ok, _, ch, err := c.ExistsW(root + "/w")
	say("existsW missing", ok, " ", e(err))
	_, err = c.Create(root+"/w", nil, 0, acl)
	say("create watched", e(err), " fires ", wait(ch))
	_, _, ch, err = c.GetW(root + "/w")
	say("getW", e(err))
	_, err = c.Set(root+"/w", []byte("1"), -1)
	say("set watched", e(err), " fires ", wait(ch))
	_, _, ch, err = c.ChildrenW(root)
	say("childrenW", e(err))
	_, err = c.Create(root+"/c", nil, 0, acl)
	say("create a child", e(err), " fires ", wait(ch))
	ok, _, ch, err = c.ExistsW(root + "/w")
	say("existsW", ok, " ", e(err))
	err = c.Delete(root+"/w", -1)
	say("delete watched", e(err), " fires ", wait(ch))
	return out
}

func event(ev zk.Event, ok bool) string {
	if !ok {
		return "nothing"
	}
	return fmt.Sprintf("%s %s", ev.Type, ev.Path)
}

// TestTheSimulatedConnAnswersAsZooKeeper: the same calls on the simulated
// zookeeper.Conn and on go-zookeeper's *zk.Conn against a real ZooKeeper
// 3.8 server give the same answers: paths and sequence numbers, errors
// (node exists, no node, bad version, not empty, no children for
// ephemerals, invalid ACL, invalid path, invalid flags), data, versions,
// child counts and the watches' events.
func TestTheSimulatedConnAnswersAsZooKeeper(t *testing.T) {
	// The simulated side.
	w := sim.NewWorld(sim.Config{Seed: 1})
	e, err := zookeeper.NewEnsemble(w, zookeeper.DefaultOptions())
	require.NoError(t, err)
	w.Run(3 * time.Second) // a leader first, as a real ensemble has one before its clients come
	var simulated []string
	client := w.AddNode("c1", sim.NodeOptions{})
	client.Spawn("c1", func(p *sim.Proc) {
		c := e.NewConn(p, nil)
		wait := func(ch <-chan zk.Event) string {
			for range 1000 {
				select { // determinism:ok filled by the simulated connection
				case ev, ok := <-ch:
					return event(ev, ok)
				default:
				}
				p.Sleep(time.Millisecond)
			}
			return "nothing"
		}
		simulated = apiScript(c, "/diff", wait)
	})
	w.Run(30 * time.Second)
	require.NotEmpty(t, simulated, "the simulated script did not finish")

	if testing.Short() {
		t.Skip("-short: the real side starts a ZooKeeper server")
	}
	if _, err := Java(); err != nil {
		t.Skipf("ZooKeeper (Debian's zookeeper, %s, and java) is absent: %v", Jar, err)
	}
	o := zookeeper.DefaultOptions()
	o.Servers = 1
	ctx := context.Background()
	ens, err := Start(ctx, o, t.TempDir(), 60*time.Second)
	require.NoError(t, err)
	t.Cleanup(ens.Close)
	conn, _, err := zk.Connect(ens.Addrs(), 10*time.Second, zk.WithLogInfo(false))
	require.NoError(t, err)
	t.Cleanup(conn.Close)
	wait := func(ch <-chan zk.Event) string {
		select {
		case ev, ok := <-ch:
			return event(ev, ok)
		case <-time.After(5 * time.Second):
			return "nothing"
		}
	}
	real := apiScript(conn, "/diff", wait)
	t.Logf("ZooKeeper %s answered:\n%s", ens.ServerVersion(), strings.Join(real, "\n"))
	assert.Equal(t, real, simulated)
}

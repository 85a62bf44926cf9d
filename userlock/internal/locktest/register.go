package locktest

import (
	"testing"

	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/userlock"
	userlive "github.com/locklab/locklab/userlock/live"
)

// RegisterZooKeeperRaw registers the raw-API ZooKeeper lock as the system
// name (with tokens when fenced), in both worlds, for the length of t.
func RegisterZooKeeperRaw(t testing.TB, name string, fenced bool) {
	userlive.RegisterZooKeeper(userlock.ZooKeeperLock{
		Spec: userlock.Spec{Name: name, Tokens: fenced, SafeRelease: true},
		New: func(env userlock.Env, conn userlock.ZooKeeper) userlock.Lock {
			return NewZooKeeperRaw(env, conn, fenced)
		},
	})
	t.Cleanup(func() {
		system.Unregister(name)
		liveform.Unregister(name)
	})
}

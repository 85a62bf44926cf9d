package zookeeper

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/sim"
)

// TestAConnRefusesCallsFromGoroutinesOfItsOwn: a call of the simulated
// connection from a goroutine the user's code started touches nothing of the
// simulator: it returns ErrForeignGoroutine at once, and the client's next
// proper call reports it (which call, after which time) to the misconduct
// callback.
func TestAConnRefusesCallsFromGoroutinesOfItsOwn(t *testing.T) {
	w := sim.NewWorld(sim.Config{Seed: 1})
	e, err := NewEnsemble(w, DefaultOptions())
	require.NoError(t, err)
	w.Run(3 * time.Second)
	var reported []string
	var foreign, proper error
	client := w.AddNode("c1", sim.NodeOptions{})
	client.Spawn("c1", func(p *sim.Proc) {
		c := e.NewConn(p, func(call, detail string, _ time.Duration) { reported = append(reported, call+": "+detail) })
		_, _, proper = c.Exists("/")
		done := make(chan error)
		go func() { // determinism:ok the user's mistake under test
			_, _, err := c.Exists("/")
			done <- err
		}()
		foreign = <-done
		_, _, _ = c.Exists("/")
	})
	w.Run(10 * time.Second)
	assert.NoError(t, proper)
	assert.ErrorIs(t, foreign, ErrForeignGoroutine)
	require.Len(t, reported, 1)
	assert.Contains(t, reported[0], "Exists: Exists called from a goroutine the simulator does not run")
}

// TestSyncGoesThroughTheLog: Sync answers with its path once the client's
// server applied what was committed before it, whether the node exists or
// not: a read after it sees another client's write.
func TestSyncGoesThroughTheLog(t *testing.T) {
	w := sim.NewWorld(sim.Config{Seed: 1})
	e, err := NewEnsemble(w, DefaultOptions())
	require.NoError(t, err)
	w.Run(3 * time.Second)
	acl := []zk.ACL{{Perms: zk.PermAll, Scheme: "world", ID: "anyone"}}
	var created, synced, missing string
	var createErr, syncErr, missingErr, getErr error
	var data []byte
	w.AddNode("c1", sim.NodeOptions{}).Spawn("c1", func(p *sim.Proc) {
		created, createErr = e.NewConn(p, nil).Create("/a", []byte("v1"), 0, acl)
	})
	w.AddNode("c2", sim.NodeOptions{}).Spawn("c2", func(p *sim.Proc) {
		c := e.NewConn(p, nil)
		p.Sleep(time.Second)
		synced, syncErr = c.Sync("/a")
		data, _, getErr = c.Get("/a")
		missing, missingErr = c.Sync("/none")
	})
	w.Run(10 * time.Second)
	require.NoError(t, createErr)
	assert.Equal(t, "/a", created)
	require.NoError(t, syncErr)
	assert.Equal(t, "/a", synced)
	require.NoError(t, getErr)
	assert.Equal(t, "v1", string(data))
	require.NoError(t, missingErr)
	assert.Equal(t, "/none", missing)
}

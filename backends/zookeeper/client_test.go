package zookeeper

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/sim"
)

// TestAConnectionTheClientAbandonedAnswersNothing (issue 28, item 8): the
// handle's connection has an identity. When a request on it goes unanswered
// for the read timeout, the handle closes it: a reply that comes on it later
// (a cut held it and delivered it at the heal) answers nothing, the request
// it was waiting for ends in a connection loss (its outcome unknown), and a
// connection attempt the client gave up never reaches a server (its TCP
// handshake cannot complete once the client closed the socket).
//
// Read timeout 3 s, a ping every second; the servers' messages to the client
// are held from 1.5 s after the connection to 5.2 s: the ping of 2 s times
// out at 5 s (the handle abandons the connection), the request of 2.5 s gets
// its reply, on the abandoned connection, at the heal.
func TestAConnectionTheClientAbandonedAnswersNothing(t *testing.T) {
	tests := []struct {
		name string
		// run is the client's part, started once the ensemble has a leader
		// (it asserts without stopping: it runs as a simulated process); cut
		// holds (on) or heals the servers' links to the client.
		run func(t *testing.T, p *sim.Proc, c *Client, cut func(on bool))
	}{
		{
			name: "a reply on the abandoned connection is a connection loss",
			run: func(t *testing.T, p *sim.Proc, c *Client, cut func(on bool)) {
				if !assert.NoError(t, c.connect(p)) {
					return
				}
				h := c.t.(*handle)
				start, epoch := p.Mono(), h.epoch
				p.Sleep(1500 * time.Millisecond)
				cut(true)
				p.Spawn("heal", func(w *sim.Proc) {
					w.Sleep(5200*time.Millisecond - (w.Mono() - start))
					cut(false)
				})
				p.Sleep(time.Second)
				_, err := c.call(p, Request{Op: OpExists, Path: "/"})
				assert.Error(t, err, "answered on the connection the pinger abandoned at 5 s")
				assert.ErrorIs(t, err, ErrConnLoss)
				assert.Less(t, p.Mono()-start, 5500*time.Millisecond, "ended by the heal's delivery, not the request's own timeout")
				assert.True(t, !h.connected || h.epoch != epoch, "the connection was abandoned")
			},
		},
		{
			name: "a connect the client gave up on never arrives",
			run: func(t *testing.T, p *sim.Proc, c *Client, cut func(on bool)) {
				server := c.t.(*handle).servers[0]
				late := Request{Op: OpConnect, Session: 99, New: true, Timeout: int64(10 * time.Second),
					Until: p.Node().TrueTimeAtMono(p.Mono() - time.Millisecond)}
				_, err := p.Call(server, late, time.Second)
				assert.ErrorIs(t, err, sim.ErrTimeout, "a server answered a connect its client had given up")
				on := late
				on.Until = p.Node().TrueTimeAtMono(p.Mono() + time.Second)
				reply, err := p.Call(server, on, time.Second)
				if assert.NoError(t, err) {
					assert.Equal(t, CodeOK, reply.(Response).Code)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := sim.NewWorld(sim.Config{Seed: 1, Cuts: sim.CutHolds})
			o := DefaultOptions()
			o.ReadTimeout, o.PingInterval = 3*time.Second, time.Second
			e, err := NewEnsemble(w, o)
			require.NoError(t, err)
			w.Run(3 * time.Second)
			require.NotNil(t, e.Leader(), "no leader after 3 s")
			client := w.AddNode("c1", sim.NodeOptions{})
			done := false
			client.Spawn("c1", func(p *sim.Proc) {
				c := e.NewClient(p)
				cut := func(on bool) {
					for _, s := range e.Nodes() {
						if on {
							w.Network().Block(s, client)
						} else {
							w.Network().Unblock(s, client)
						}
					}
				}
				tc.run(t, p, c, cut)
				done = true
			})
			w.Run(20 * time.Second)
			require.True(t, done, "the client did not finish")
		})
	}
}

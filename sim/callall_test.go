package sim

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestCallAllFansOutAndCollects(t *testing.T) {
	w := NewWorld(Config{Seed: 1, Link: Link{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond}})
	a := w.AddNode("a", NodeOptions{Handler: &echo{}})
	b := w.AddNode("b", NodeOptions{Handler: &echo{}})
	silent := w.AddNode("silent", NodeOptions{Handler: &echo{}})
	c := w.AddNode("c", NodeOptions{})
	w.Network().Block(c, silent)
	var got []string
	var took time.Duration
	c.Spawn("c", func(p *Proc) {
		start := p.Mono()
		rs := p.CallAll([]Request{{a.ID(), 1}, {silent.ID(), 2}, {b.ID(), 3}}, 50*time.Millisecond)
		took = p.Mono() - start
		for _, r := range rs {
			got = append(got, fmt.Sprintf("%v timeout=%v", r.Body, errors.Is(r.Err, ErrTimeout)))
		}
		rs = p.CallAll([]Request{{a.ID(), 4}, {b.ID(), 5}}, time.Second)
		got = append(got, fmt.Sprint(rs[0].Body, rs[1].Body))
		assert.Empty(t, p.CallAll(nil, time.Second))
	})
	w.Run(time.Second)
	assert.Equal(t, []string{"echo:1 timeout=false", "<nil> timeout=true", "echo:3 timeout=false", "echo:4echo:5"}, got)
	assert.Equal(t, 50*time.Millisecond, took, "waits for the slowest until the timeout")
}

func TestCallAllPausedAfterSendingReadsLate(t *testing.T) {
	w := NewWorld(Config{Seed: 1, Link: Link{LatencyMin: time.Millisecond, LatencyMax: time.Millisecond}})
	a := w.AddNode("a", NodeOptions{Handler: &echo{}})
	c := w.AddNode("c", NodeOptions{})
	var readAt time.Duration
	c.Spawn("c", func(p *Proc) {
		rs := p.CallAll([]Request{{a.ID(), 1}}, 0)
		readAt = p.World().Now()
		assert.NoError(t, rs[0].Err)
	})
	w.At(500*time.Microsecond, c.Pause) // the request is on its way
	w.At(5*time.Second, c.Resume)
	w.Run(10 * time.Second)
	assert.Equal(t, 5*time.Second, readAt)
	assert.Equal(t, uint64(2), w.Network().Stats().Delivered, "the request left before the pause")
}

// TestTimeoutErrorsNameTheNodeAndTheWait: a timed-out Call or CallAll says
// which node and how long, whatever timed out before it (the world reuses
// the error of a node while the timeout is the same).
func TestTimeoutErrorsNameTheNodeAndTheWait(t *testing.T) {
	w := NewWorld(Config{Seed: 1})
	a := w.AddNode("a", NodeOptions{Handler: &echo{}})
	b := w.AddNode("b", NodeOptions{Handler: &echo{}})
	c := w.AddNode("c", NodeOptions{})
	w.Network().Block(c, a)
	w.Network().Block(c, b)
	var got []string
	c.Spawn("c", func(p *Proc) {
		for _, d := range []time.Duration{time.Second, time.Second, 2 * time.Second} {
			_, err := p.Call(a.ID(), 1, d)
			got = append(got, fmt.Sprintf("%v is-timeout=%v", err, errors.Is(err, ErrTimeout)))
		}
		for _, r := range p.CallAll([]Request{{a.ID(), 1}, {b.ID(), 2}}, time.Second) {
			got = append(got, r.Err.Error())
		}
	})
	w.Run(time.Minute)
	assert.Equal(t, []string{
		"call to a: sim: request timed out after 1s is-timeout=true",
		"call to a: sim: request timed out after 1s is-timeout=true",
		"call to a: sim: request timed out after 2s is-timeout=true",
		"call to a: sim: request timed out after 1s",
		"call to b: sim: request timed out after 1s",
	}, got)
}

package redis

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/sim"
)

func TestAScriptsErrorReachesTheRunsNotes(t *testing.T) {
	w := newWorld(PersistNone)
	errs := NewCommandErrors()
	w.rs.RecordCommandErrors(errs)
	ctx := context.Background()
	const missing = `if redis.call("SET", KEYS[1], ARGV[1], "NX", "PX", 1000) then return redis.call("NOSUCHCMD", KEYS[1]) end return 0`
	w.goClient("c1", DefaultGoRedisOptions(), func(p *sim.Proc, c *GoRedisClient) {
		p.Sleep(time.Second)
		require.Error(t, c.Eval(ctx, missing, []string{"lock"}, "a").Err())
		require.Error(t, c.Eval(ctx, missing, []string{"other"}, "a").Err())
		require.Error(t, c.EvalSha(ctx, "0000000000000000000000000000000000000000", []string{"lock"}).Err(), "NOSCRIPT: not recorded")
		require.Error(t, c.Incr(ctx, "lock").Err(), "an error of a plain command: not recorded")
		require.Error(t, c.Do(ctx, "NOSUCHCMD", "lock").Err())
		require.Error(t, c.Eval(ctx, "return redis.call('INCR', KEYS[1])", []string{"lock"}).Err())
		require.Error(t, c.Eval(ctx, "return redis.call('HGET', KEYS[1], 'f')", []string{"lock"}).Err())
		require.NoError(t, c.Eval(ctx, "return 1", nil).Err())
	})
	w.w.Run(time.Minute)
	assert.Equal(t, 5, errs.Count())
	notes := errs.Notes()
	require.Len(t, notes, 1)
	for _, want := range []string{
		"Redis answered 5 of the lock's scripts or commands with an error",
		`2× EVAL "ERR Unknown Redis command called from script script: `,
		"(first to c1 at 1.001s)",
		`1× NOSUCHCMD "ERR unknown command 'NOSUCHCMD'`,
		"1 other error text(s)",
		"the simulated Redis does not implement",
	} {
		assert.Contains(t, notes[0], want)
	}
}

func TestNoUnexpectedErrorNoNote(t *testing.T) {
	for _, e := range []*CommandErrors{nil, NewCommandErrors()} {
		assert.Nil(t, e.Notes())
		assert.Zero(t, e.Count())
	}
	e := NewCommandErrors()
	e.note([]string{"EVALSHA", "x", "0"}, "NOSCRIPT No matching script. Please use EVAL.", "c1", 0)
	e.note([]string{"GET", "h"}, "WRONGTYPE Operation against a key holding the wrong kind of value", "c1", 0)
	e.note(nil, "ERR empty command", "c1", 0)
	assert.Nil(t, e.Notes())
	var zero CommandErrors
	zero.note([]string{"EVAL", "x", "0"}, "ERR boom", "c1", 0)
	assert.Zero(t, zero.Count(), "the zero value records nothing")
}

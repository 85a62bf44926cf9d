package redis

import (
	"time"

	"github.com/locklab/locklab/internal/opt"
)

// UserOptions are the options of a user's lock over Redis (package
// userlock), simulated and live: the servers' options of the redis system
// that a lock written against go-redis keeps (replicas, down-after,
// persistence, expiry-clock, restart-delay; the recipe's are unused), and
// go-redis's options of the same names (ReadTimeout, MaxRetries).
type UserOptions struct {
	Options
	ReadTimeout time.Duration
	MaxRetries  int
}

// userNotes are what the servers' options mean to a user's lock, beyond
// what they mean to the redis system.
var userNotes = map[string]string{
	"replicas":      " (the lock's client follows it, as a go-redis FailoverClient does)",
	"restart-delay": " (TRYAGAIN)",
}

// UserTable declares the options of a user's lock over Redis.
var UserTable = opt.Table[UserOptions]{Owner: "redis lock", Options: append(userServerOptions(),
	opt.Var("read-timeout", "the client's wait for each reply (go-redis's ReadTimeout; a context's deadline "+
		"is not honoured in the simulator)", "3s",
		func(o *UserOptions) *time.Duration { return &o.ReadTimeout }, opt.Positive),
	opt.Var("max-retries", "how often the client sends a timed-out or refused command again (go-redis's MaxRetries; "+
		"-1: never)", "3",
		func(o *UserOptions) *int { return &o.MaxRetries }, opt.Range(-1, 20)),
)}

func userServerOptions() []opt.Option[UserOptions] {
	keep := Table.Only("replicas", "down-after", "persistence", "expiry-clock", "restart-delay")
	for i := range keep {
		keep[i].Doc += userNotes[keep[i].Name]
	}
	return opt.Embed(keep, func(u *UserOptions) *Options { return &u.Options })
}

// Servers are the redis system's options with the servers' of o (the
// recipe's at their defaults).
func (o UserOptions) Servers() Options {
	s := DefaultOptions()
	s.Replicas, s.DownAfter = o.Replicas, o.DownAfter
	s.Persistence, s.ExpiryClock, s.RestartDelay = o.Persistence, o.ExpiryClock, o.RestartDelay
	return s
}

// Client is go-redis's options with those of o (the others at go-redis's
// defaults).
func (o UserOptions) Client() GoRedisOptions {
	c := DefaultGoRedisOptions()
	c.ReadTimeout, c.MaxRetries = o.ReadTimeout, o.MaxRetries
	return c
}

package redislive

import (
	"errors"
	"fmt"
	"net"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/lockapi"
)

// Classify wraps a go-redis error from instance: certain when the command
// cannot have run (a refused connection, an error reply), ErrUnknown
// otherwise (a timeout, a connection that broke after the command went out).
func Classify(instance string, err error) error {
	if err == nil {
		return nil
	}
	var rerr goredis.Error
	if errors.As(err, &rerr) && !errors.Is(err, goredis.Nil) {
		return fmt.Errorf("redis %s: %s", instance, rerr.Error())
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return fmt.Errorf("redis %s: connection refused: %w", instance, err)
	}
	return fmt.Errorf("redis %s: %w: %w", instance, lockapi.ErrUnknown, err)
}

// Refused reports whether err (from Classify) says the command did not run.
func Refused(err error) bool { return err != nil && !lockapi.Unknown(err) }

// NewConn is a go-redis client for one instance at addr: every request bounded
// by its context, no retries of its own (the lock recipes retry), no client
// identity commands (CLIENT SETINFO is newer than Debian's redis 7.0).
func NewConn(addr string, dial time.Duration) *goredis.Client {
	return goredis.NewClient(&goredis.Options{
		Addr:                  addr,
		DialTimeout:           dial,
		Protocol:              2,
		MaxRetries:            -1,
		ContextTimeoutEnabled: true,
		DisableIndentity:      true,
		PoolSize:              4,
	})
}

package etcd

import (
	"maps"
	"slices"
	"time"

	"github.com/locklab/locklab/internal/opt"
)

// UserOptions configure the etcd cluster a user's lock runs against (package
// userlock) and its simulated clientv3 (package etcdclient): the cluster's options
// that concern the servers, and the bound on each call of the lock.
type UserOptions struct {
	Options
	// CallTimeout bounds each call of the lock to its client, as the
	// context deadline a user gives clientv3: past it the call returns
	// context.DeadlineExceeded.
	CallTimeout time.Duration
}

// userServerOptions are the names of the etcd options that concern the
// servers (and the client's retries), which a user's lock keeps; the others
// (lock, ttl, unlock, resource, reads, ...) configure the built-in lock.
var userServerOptions = []string{"members", "leader-change-extends", "tick", "election-timeout", "initial-leader",
	"backoff-max"}

// UserTable declares the options of a user's lock over etcd.
var UserTable = opt.Table[UserOptions]{Owner: "etcd (your lock)", Options: append(opt.Embed(Table.Only(userServerOptions...),
	func(u *UserOptions) *Options { return &u.Options }),
	opt.Var("request-timeout", "bound on each call of the lock to its etcd client, on the client's monotonic clock "+
		"(the context deadline it would give clientv3): past it the call returns context.DeadlineExceeded", "5s",
		func(o *UserOptions) *time.Duration { return &o.CallTimeout }, opt.Positive),
	opt.Var("attempt-timeout", "bound on one attempt at one member, after which the client tries the next", "500ms",
		func(o *UserOptions) *time.Duration { return &o.RequestTimeout }, opt.Positive),
)}

// ParseUser reads the options of a user's lock over etcd: the table's
// defaults and the given values over the built-in etcd's defaults (for the
// settings the table leaves out), validated.
func ParseUser(given map[string]string) (UserOptions, error) {
	o := UserOptions{Options: DefaultOptions()}
	for _, d := range UserTable.Docs() {
		if err := UserTable.Set(&o, d.Name, d.Default); err != nil {
			return o, err
		}
	}
	for _, k := range slices.Sorted(maps.Keys(given)) {
		if err := UserTable.Set(&o, k, given[k]); err != nil {
			return o, err
		}
	}
	return o, o.Validate()
}

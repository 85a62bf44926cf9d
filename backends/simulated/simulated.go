// Package simulated registers every lock system locklab ships in its
// simulated form only: importing it (for its side effects, as a program
// imports a database/sql driver) fills the system registry and the
// scenario catalog without the live forms, so a program that imports it
// builds without the real servers' client libraries (pgx, hashicorp/raft,
// redsync, clientv3's concurrency) and the live runner's deployments.
// Package cli imports it; package builtin imports it and the live forms
// (the locklab command imports builtin).
package simulated

import (
	// Each system registers itself, its designs and its scenarios from init.
	_ "github.com/locklab/locklab/backends/chubby"
	_ "github.com/locklab/locklab/backends/control"
	_ "github.com/locklab/locklab/backends/database"
	_ "github.com/locklab/locklab/backends/etcd"
	_ "github.com/locklab/locklab/backends/kubernetes"
	_ "github.com/locklab/locklab/backends/raftkv"
	_ "github.com/locklab/locklab/backends/redis"
	_ "github.com/locklab/locklab/backends/redlock"
	_ "github.com/locklab/locklab/backends/zookeeper"
)

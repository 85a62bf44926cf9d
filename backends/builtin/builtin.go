// Package builtin registers every lock system locklab ships: importing it
// (for its side effects, as a program imports a database/sql driver) fills
// the system registry and the scenario catalog. A program or test that runs
// systems imports it; harness itself names no system.
package builtin

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

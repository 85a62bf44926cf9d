// Package builtin registers every lock system locklab ships: importing it
// (for its side effects, as a program imports a database/sql driver) fills
// the system registry and the scenario catalog. A program or test that runs
// systems imports it; harness itself names no system.
//
// A system with a live form is imported through it (backends/<x>/live,
// which imports and so registers the simulated form too): one line per
// system either way. The determinism test knows this package as wiring: it
// runs nothing, so importing live forms does not make it real-time code.
package builtin

import (
	// Each system registers itself, its designs and its scenarios from init.
	_ "github.com/locklab/locklab/backends/chubby"
	_ "github.com/locklab/locklab/backends/control"
	_ "github.com/locklab/locklab/backends/database/live"
	_ "github.com/locklab/locklab/backends/etcd/live"
	_ "github.com/locklab/locklab/backends/kubernetes"
	_ "github.com/locklab/locklab/backends/raftkv/live"
	_ "github.com/locklab/locklab/backends/redis/live"
	_ "github.com/locklab/locklab/backends/redlock/live"
	_ "github.com/locklab/locklab/backends/zookeeper/live"
)

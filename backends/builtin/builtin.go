// Package builtin registers every lock system locklab ships, simulated and
// live: importing it (for its side effects, as a program imports a
// database/sql driver) fills the system registry, the scenario catalog and
// the live forms. The locklab command and the tests that run systems
// import it; harness itself names no system. Package simulated registers
// the simulated forms alone (package cli imports only that, so a user's
// program built on cli does not link the live servers' clients unless it
// imports this package or userlock/live).
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
	_ "github.com/locklab/locklab/backends/simulated"
	_ "github.com/locklab/locklab/backends/zookeeper/live"
)

// Command locklab runs lock services under faults in a deterministic simulator,
// checks what the clients saw, and writes a report.
//
//	locklab run --system redis --nemesis pause --seed 7
//
// Everything it does is package cli's; see its documentation. This command
// also links the built-in systems' live forms (package backends/builtin),
// which package cli alone does not.
package main

import (
	// The built-in systems' live forms (run --live, repro --live).
	_ "github.com/locklab/locklab/backends/builtin"
	"github.com/locklab/locklab/cli"
)

func main() { cli.Main() }

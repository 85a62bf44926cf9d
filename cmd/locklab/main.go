// Command locklab runs lock services under faults in a deterministic simulator,
// checks what the clients saw, and writes a report.
//
//	locklab run --system redis --nemesis pause --seed 7
//
// Everything it does is package cli's; see its documentation.
package main

import "github.com/locklab/locklab/cli"

func main() { cli.Main() }

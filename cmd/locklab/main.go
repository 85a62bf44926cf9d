// Command locklab runs lock services under faults in a deterministic simulator,
// checks what the clients saw, and writes a report.
//
//	locklab run --system redis --nemesis pause --seed 7
//
// Exit codes: 0 every check valid; 1 a safety check invalid; 2 usage error;
// 3 a check could not decide or a liveness check failed; 4 the harness crashed.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/locklab/locklab/harness"
)

// usageError marks errors in what the user asked for (exit code 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usage(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// exitError carries the exit code of a command that completed.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "locklab",
		Short:         "Jepsen-style checks of distributed locks in a deterministic simulator",
		SilenceUsage:  true,
		SilenceErrors: true,
		Long: `locklab runs lock services (single and replicated Redis, Redlock, a Raft-replicated
KV lock) under partitions, clock jumps and drift, GC pauses, crashes and message
delays in a deterministic simulator, records what the clients saw, checks the history
(atomic critical sections, mutual exclusion, the lease contract, fencing tokens,
liveness), and writes a run directory with an HTML report.

Exit codes: 0 every check valid; 1 a safety check invalid; 2 usage error;
3 a check could not decide or a liveness check failed; 4 the harness crashed.`,
	}
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newRunCmd())
	root.AddCommand(newReportCmd())
	root.AddCommand(newScenariosCmd(), newReproCmd(), newExploreCmd())
	root.AddCommand(newCheckCmd())
	root.AddCommand(newSystemsCmd(), newVersionCmd())
	setVersionFlag(root)
	return root
}

func main() {
	os.Exit(execute(os.Args[1:]))
}

// execute runs the CLI with args and returns the exit code.
func execute(args []string) int {
	root := newRoot()
	root.SetArgs(args)
	err := root.Execute()
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
		return harness.ExitValid
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command"):
		fmt.Fprintf(os.Stderr, "locklab: %v\n", err)
		fmt.Fprintln(os.Stderr, "Run 'locklab --help' for usage.")
		return harness.ExitUsage
	default:
		fmt.Fprintf(os.Stderr, "locklab: %v\n", err)
		return harness.ExitCrash
	}
}

// noArgs is cobra.NoArgs with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if err := cobra.NoArgs(cmd, args); err != nil {
		return usageError{err}
	}
	return nil
}

// exactArgs is cobra.ExactArgs with a usage error.
func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(n)(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

package cli

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/locklab/locklab/vet"
)

func newVetCmd() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "vet [packages]",
		Short: "Check Go code that runs inside the simulator for clock reads, sleeps, goroutines, global randomness and map iteration",
		Long: `vet checks the Go packages of a lock that runs inside locklab's simulator (a lock of your own,
registered as a system) with the rules locklab enforces on its own simulated code: no time.Now,
time.Sleep or other timers of the machine, no global or crypto randomness, no goroutines or select,
no range over a map (sort the keys), no os.Getenv. Time, sleep and randomness come from the
client's environment (lockapi.Env). A line that breaks a rule on purpose says "determinism:ok" in a
comment.

What it cannot catch: it reads the packages named, not the libraries they call (a real client
library that reads the clock or starts goroutines passes unseen), nor a call through an interface
or a function value, nor blocking on a channel or a mutex. The simulator stops such a run at run
time; vet catches the common mistakes before it.

Packages are patterns as 'go build' reads them (default "."), from --dir.
Exit codes: 0 nothing found; 1 findings (each printed as file:line:column: message);
2 the packages could not be read or do not compile.`,
		Example: "  locklab vet ./mylock/...",
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				dir = "."
			}
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				return usageError{fmt.Errorf("--dir %s: not a directory", dir)}
			}
			findings, err := vet.Packages(dir, args...)
			if err != nil {
				return usageError{fmt.Errorf("vet: %w", err)}
			}
			out := cmd.OutOrStdout()
			for _, f := range findings {
				fmt.Fprintln(out, f)
			}
			if len(findings) > 0 {
				fmt.Fprintf(out, "%d finding(s): this code would make a simulated run depend on the machine\n", len(findings))
				return exitError{1}
			}
			fmt.Fprintln(out, "no findings")
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "dir", "", "the directory the package patterns are read from (default: the current directory)")
	return cmd
}

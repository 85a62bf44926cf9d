// Package cli is the locklab command: it runs lock services under faults in
// a deterministic simulator, checks what the clients saw, and writes a
// report. cmd/locklab is Main and nothing else, so that a program of a few
// lines builds a locklab in which a lock of its own (registered with
// package userlock) is a system like the built-in ones:
//
//	func main() {
//		userlock.RegisterRedis(userlock.RedisLock{
//			Spec: userlock.Spec{Name: "mylock"},
//			New:  mylock.New,
//		})
//		cli.Main()
//	}
//
// (Example in example_test.go is this program, compiled by go test.)
//
// Package cli registers the built-in systems in their simulated form only
// (package backends/simulated), so such a program builds without the live
// servers' client libraries. For `run --live` of the user's own lock,
// register it with userlock/live's RegisterRedis (RegisterRedlock,
// RegisterEtcd, RegisterZooKeeper) instead; the built-in systems' live
// forms come with package backends/builtin, which the locklab command
// imports.
//
// Exit codes: 0 every check valid; 1 a safety check invalid; 2 usage error;
// 3 a check could not decide or a liveness check failed; 4 the harness crashed;
// 5 the lock broke, the data is safe: only mutual-exclusion, lease or mutex is
// invalid, and on fenced storage critical-sections and fencing-tokens are
// valid (a fenced design working as designed: a CI job that relies on
// fencing accepts 0 and 5).
package cli

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	// The lock systems locklab ships register themselves (simulated only;
	// cmd/locklab imports backends/builtin for their live forms).
	_ "github.com/locklab/locklab/backends/simulated"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/live"
	"github.com/locklab/locklab/reports"
	"github.com/locklab/locklab/system"
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
		Long:          rootLong(),
	}
	// Suggestions for a mistyped command are locklab's own (unknownCommand):
	// on one line, and case-insensitive.
	root.DisableSuggestions = true
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(newRunCmd())
	root.AddCommand(newReportCmd())
	root.AddCommand(newScenariosCmd(), newReproCmd(), newExploreCmd(), newShrinkCmd())
	root.AddCommand(newSweepCmd(), newMatrixCmd(), newMergeCmd(), newCrosscheckCmd())
	root.AddCommand(newCheckCmd())
	root.AddCommand(newSystemsCmd(), newVersionCmd(), newDocsCmd(), newVetCmd())
	setVersionFlag(root)
	return root
}

// rootLong is locklab's help: what it does, every registered system (read
// from the registry, so a new system is named without editing this), live
// mode with the systems it runs, and the exit codes.
func rootLong() string {
	var b strings.Builder
	b.WriteString(`locklab runs lock services under partitions, clock jumps and drift, GC pauses, crashes and
message delays in a deterministic simulator, records what the clients saw, checks the history
(atomic critical sections, mutual exclusion, the lease contract, fencing tokens, liveness), and
writes a run directory with an HTML report. A run replays byte for byte from its seed.

Systems (locklab run --system NAME; 'locklab systems' for their options and designs):
`)
	width := 0
	for _, s := range system.All() {
		width = max(width, len(s.Name))
	}
	for _, s := range system.All() {
		fmt.Fprintf(&b, "  %s%s\n", pad(s.Name, width+2), oneLine(s.Doc, termWidth-width-4))
	}
	b.WriteString("\nLive mode (run --live, repro --live): the same tests in real time against the real code, on\n" +
		"servers locklab starts on loopback, with faults done for real (SIGSTOP, SIGKILL, TCP proxies,\n" +
		"libfaketime); the same checks and run directory, not replayable byte for byte. Live systems:\n")
	for i, name := range live.Systems() {
		// A note is "name (what runs)".
		note := strings.TrimSuffix(strings.TrimPrefix(live.Notes()[i], name+" ("), ")")
		fmt.Fprintf(&b, "  %s%s\n", pad(name, width+2), oneLine(note, termWidth-width-4))
	}
	b.WriteString(`
Exit codes: 0 every check valid; 1 a safety check invalid; 2 usage error;
3 a check could not decide or a liveness check failed; 4 the harness crashed;
5 the lock broke, the data is safe: only mutual-exclusion, lease or mutex invalid, while
on fenced storage critical-sections and fencing-tokens are valid (a fenced design as designed:
CI that relies on fencing accepts 0 and 5).`)
	return b.String()
}

// Main runs the locklab command with the process's arguments and exits with
// its exit code. The systems it knows are the registered ones: the built-in
// systems, and whatever the program registered before calling it.
func Main() {
	os.Exit(execute(os.Args[1:]))
}

// execute runs the CLI with args and returns the exit code.
func execute(args []string) int {
	root := newRoot()
	root.SetArgs(args)
	cmd, err := root.ExecuteC()
	var ee exitError
	var ue usageError
	var oe *reports.OutDirError
	switch {
	case err == nil:
		return judge.ExitValid
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue) || errors.As(err, &oe) || strings.HasPrefix(err.Error(), "unknown command"):
		msg := plainMessage(err)
		if s := unknownCommand(cmd, err); s != "" {
			msg = s
		}
		fmt.Fprintf(os.Stderr, "locklab: %s\n", namingTheFlag(cmd, err, msg))
		fmt.Fprintf(os.Stderr, "See '%s --help'.\n", helpPath(root, cmd))
		return judge.ExitUsage
	default:
		fmt.Fprintf(os.Stderr, "locklab: %s\n", plainMessage(err))
		return judge.ExitCrash
	}
}

// helpPath is the command whose help covers the error: the subcommand that
// failed, or locklab itself.
func helpPath(root, cmd *cobra.Command) string {
	if cmd == nil {
		return root.CommandPath()
	}
	return cmd.CommandPath()
}

// flagError turns pflag's parse errors into usage errors in plain words:
// `--seed "abc": want a whole number ≥ 0` rather than `invalid argument
// "abc" for "--seed" flag: strconv.ParseUint: parsing "abc": invalid syntax`;
// a flag the command does not have is answered with the flags it resembles.
func flagError(cmd *cobra.Command, err error) error {
	var nee *pflag.NotExistError
	if errors.As(err, &nee) {
		return unknownFlag(cmd, nee)
	}
	var ive *pflag.InvalidValueError
	if !errors.As(err, &ive) {
		return usageError{err}
	}
	f := ive.GetFlag()
	want := map[string]string{
		"int": "a whole number", "int64": "a whole number", "int32": "a whole number",
		"uint": "a whole number ≥ 0", "uint64": "a whole number ≥ 0", "uint32": "a whole number ≥ 0",
		"float64": "a number", "bool": "true or false", "duration": durationHint,
	}[f.Value.Type()]
	var ne *strconv.NumError
	inner := ive.Unwrap()
	if inner == nil {
		inner = err
	}
	parseFailed := errors.As(inner, &ne) || timeError.MatchString(inner.Error())
	switch {
	case want == "" || !parseFailed:
		// A flag of its own type, or a value that parsed but is out of the
		// flag's bounds: its own message says what is wanted.
		return usageError{fmt.Errorf("--%s %q: %s", f.Name, ive.GetValue(), plainMessage(inner))}
	case errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange):
		return usageError{fmt.Errorf("--%s %q: out of range", f.Name, ive.GetValue())}
	}
	return usageError{fmt.Errorf("--%s %q: want %s", f.Name, ive.GetValue(), want)}
}

// durationHint says what a duration looks like.
const durationHint = "a duration such as 30s, 1m30s or 200ms"

// timeError matches the errors of time.ParseDuration, which have no type.
var timeError = regexp.MustCompile(`time: (invalid duration|missing unit in duration|unknown unit "[^"]*" in duration) "[^"]*"`)

// plainMessage is err's message without Go's internals: the strconv and time
// parse errors that option parsers pass on are said in plain words.
func plainMessage(err error) string {
	msg := err.Error()
	for e := err; e != nil; {
		var ne *strconv.NumError
		if !errors.As(e, &ne) {
			break
		}
		msg = strings.ReplaceAll(msg, ne.Error(), plainNumError(ne))
		e = ne.Err
	}
	return timeError.ReplaceAllString(msg, "not "+durationHint)
}

// plainNumError says what a strconv error means to the person who typed the
// value.
func plainNumError(ne *strconv.NumError) string {
	if errors.Is(ne.Err, strconv.ErrRange) {
		return "out of range"
	}
	switch ne.Func {
	case "ParseBool":
		return "want true or false"
	case "ParseFloat":
		return "not a number"
	case "ParseUint":
		return "not a whole number ≥ 0"
	}
	return "not a whole number"
}

// noArgs is cobra.NoArgs with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if err := cobra.NoArgs(cmd, args); err != nil {
		return usageError{err}
	}
	return nil
}

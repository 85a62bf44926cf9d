package cli

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/locklab/locklab/internal/suggest"
)

// Near misses on the command line: a mistyped flag, command or name is
// refused with what it was probably meant to be, and an unknown name says
// which flag it was given to.

// unknownFlag is pflag's error for a flag the command does not have, with
// the flags it was probably meant to be: `unknown flag: --sytem — did you
// mean --system?`; a long name typed with one dash (`-sytem`) is taken for
// shorthands by pflag, and is answered with the long flag it resembles.
func unknownFlag(cmd *cobra.Command, ne *pflag.NotExistError) error {
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, f.Name)
		}
	})
	typed := ne.GetSpecifiedName()
	if short := ne.GetSpecifiedShortnames(); short != "" {
		// -sytem: the shorthands "sytem", of which 's' does not exist.
		if typed = strings.TrimPrefix(short, "-"); len(typed) < 2 {
			return usageError{ne}
		}
	}
	near := suggest.Closest(typed, names)
	if slices.Contains(names, typed) {
		near = []string{typed} // -system: the long flag with one dash
	}
	if len(near) == 0 {
		return usageError{ne}
	}
	for i, n := range near {
		near[i] = "--" + n
	}
	return usageError{fmt.Errorf("%w — did you mean %s?", ne, strings.Join(near, " or "))}
}

// unknownCommandError matches cobra's error for a command that does not
// exist (cobra has no error type for it).
var unknownCommandError = regexp.MustCompile(`^unknown command ("[^"]*") for "[^"]*"`)

// unknownCommand is the message for a command that does not exist, with
// the commands it was probably meant to be: `unknown command "rnu" for
// "locklab" — did you mean "run"?`; "" when err is not that.
func unknownCommand(cmd *cobra.Command, err error) string {
	m := unknownCommandError.FindStringSubmatch(err.Error())
	if m == nil || cmd == nil {
		return ""
	}
	var typed string
	if _, serr := fmt.Sscanf(m[1], "%q", &typed); serr != nil {
		return m[0]
	}
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
			names = append(names, c.Aliases...)
		}
	}
	if near := suggest.Closest(typed, names); len(near) > 0 {
		return m[0] + " — did you mean " + suggest.Either(near) + "?"
	}
	return m[0]
}

// namingTheFlag is msg, the message of err, led by the flag whose value
// holds the unknown name err is about: `--system: unknown system "Redis" —
// did you mean "redis"?`. A context that only repeats the flag's name
// ("nemesis: ") gives way to the flag; a message that names a flag already,
// or an unknown name no flag was given, is left as it is.
func namingTheFlag(cmd *cobra.Command, err error, msg string) string {
	var ue *suggest.UnknownError
	if cmd == nil || !errors.As(err, &ue) || strings.HasPrefix(msg, "--") {
		return msg
	}
	flag := ""
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if flag == "" && slices.Contains(flagValues(f), ue.Name) {
			flag = f.Name
		}
	})
	if flag == "" {
		return msg
	}
	return "--" + flag + ": " + strings.TrimPrefix(msg, flag+": ")
}

// flagValues are the values a flag was given: each of a list flag's, each
// of a comma-separated string's.
func flagValues(f *pflag.Flag) []string {
	var vs []string
	if sv, ok := f.Value.(pflag.SliceValue); ok {
		vs = sv.GetSlice()
	} else {
		vs = strings.Split(f.Value.String(), ",")
	}
	for i, v := range vs {
		vs[i] = strings.TrimSpace(v)
	}
	return vs
}

package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/internal/suggest"
	"github.com/locklab/locklab/storage"
	"github.com/locklab/locklab/system"
	"github.com/locklab/locklab/workloads"
)

// termWidth is the width the listings fit in.
const termWidth = 100

func newSystemsCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "systems [NAME...]",
		Short: "List every lock system (with its designs), workload and storage mode with each option, its default and meaning",
		Long: `systems lists what 'locklab run' can combine: every lock system (--system, options with
-o key=value), every workload (--workload, options with -w key=value) and every storage mode
(--storage), each option with its default, its meaning and the values it accepts. Under each
system come the designs its users choose between, in their words ("Redis SET NX PX + INCR
fencing token"), each with the flags that run it and the storage modes it comes in (the safety
matrix's rows). The list is read from the same tables and registrations the runs use, so it is
always the code's. With NAMEs it shows only those systems, workloads or storage modes.`,
		Example: `  locklab systems
  locklab systems redlock stock`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return listSystems(cmd.OutOrStdout(), args)
		},
	}
}

// entry is one system, workload or storage mode of the listing.
type entry struct {
	name, doc string
	options   opt.Spec
	// designs are a system's designs (system.System.Designs).
	designs []system.Design
}

func listSystems(out io.Writer, only []string) error {
	var systems, loads, modes []entry
	designs := system.Designs()
	for _, s := range system.All() {
		e := entry{name: s.Name, doc: s.Doc, options: s.Options}
		for _, d := range designs {
			if d.System == s.Name {
				e.designs = append(e.designs, d)
			}
		}
		systems = append(systems, e)
	}
	for _, w := range workloads.All() {
		loads = append(loads, entry{name: w.Name, doc: w.Doc, options: w.Options})
	}
	for _, m := range storage.Modes {
		doc := m.Doc
		if m.Mode == storage.Check { // the systems that have sequencers, from the registry
			doc += " (" + strings.Join(system.Sequencers(), ", ") + ")"
		}
		modes = append(modes, entry{name: string(m.Mode), doc: doc})
	}
	if len(only) > 0 {
		var known []string
		for _, e := range slices.Concat(systems, loads, modes) {
			known = append(known, e.name)
		}
		for _, name := range only {
			if !slices.Contains(known, name) {
				return usageError{suggest.Unknown("system, workload or storage mode", name, known)}
			}
		}
		keep := func(es []entry) []entry {
			return slices.DeleteFunc(es, func(e entry) bool { return !slices.Contains(only, e.name) })
		}
		systems, loads, modes = keep(systems), keep(loads), keep(modes)
	}
	sections := []struct {
		title   string
		entries []entry
	}{
		{"Lock systems (locklab run --system NAME -o option=value):", systems},
		{"Workloads (locklab run --workload NAME -w option=value):", loads},
		{"Storage modes (locklab run --storage MODE [--fence-reads]):", modes},
	}
	first := true
	for _, s := range sections {
		if len(s.entries) == 0 {
			continue
		}
		if !first {
			fmt.Fprintln(out)
		}
		first = false
		fmt.Fprintln(out, s.title)
		width := 0
		for _, e := range s.entries {
			width = max(width, utf8.RuneCountInString(e.name))
		}
		for _, e := range s.entries {
			fmt.Fprintln(out)
			printEntry(out, e, width)
		}
	}
	return nil
}

// printEntry prints an entry's name and meaning, then its options as a table
// whose meaning column is wrapped to fit termWidth, then its designs.
func printEntry(out io.Writer, e entry, width int) {
	printOptions(out, e, width)
	if len(e.designs) == 0 {
		return
	}
	// One line a design; the flags go whole on a line of their own when
	// both do not fit, so that they can be copied.
	fmt.Fprintln(out, "  DESIGN: locklab run FLAGS")
	for _, d := range e.designs {
		line := "  " + d.Name + ": " + designFlags(d)
		if utf8.RuneCountInString(line) > termWidth {
			line = "  " + d.Name + ":\n      " + designFlags(d)
		}
		fmt.Fprintln(out, line)
	}
}

// designFlags are the flags that run a design, its storage modes as
// alternatives: "--system chubby --storage check | fenced [--fence-reads]".
func designFlags(d system.Design) string {
	base, _, _ := strings.Cut(d.Flags(d.Modes[0]), " --storage ")
	var modes []string
	for _, m := range d.Modes {
		mode := string(m.Storage)
		if m.FenceReads {
			if i := slices.Index(modes, mode); i >= 0 {
				modes[i] = mode + " [--fence-reads]"
				continue
			}
			mode += " --fence-reads"
		}
		modes = append(modes, mode)
	}
	return base + " --storage " + strings.Join(modes, " | ")
}

// printOptions prints an entry's name and meaning, then its options.
func printOptions(out io.Writer, e entry, width int) {
	lines := wrap(e.doc, termWidth-width-2)
	for i, l := range lines {
		name := ""
		if i == 0 {
			name = e.name
		}
		fmt.Fprintln(out, strings.TrimRight(pad(name, width+2)+l, " "))
	}
	if e.options == nil {
		return
	}
	docs := e.options.Docs()
	if len(docs) == 0 {
		fmt.Fprintf(out, "%sno options\n", strings.Repeat(" ", width+2))
		return
	}
	nameW, defW := len("OPTION"), len("DEFAULT")
	for _, d := range docs {
		nameW = max(nameW, utf8.RuneCountInString(d.Name))
		defW = max(defW, utf8.RuneCountInString(showDefault(d.Default)))
	}
	indent := 2 + nameW + 2 + defW + 2
	fmt.Fprintln(out, "  "+pad("OPTION", nameW+2)+pad("DEFAULT", defW+2)+"MEANING [VALUES]")
	for _, d := range docs {
		for i, l := range wrap(d.Doc+" ["+d.Accepts+"]", termWidth-indent) {
			left := strings.Repeat(" ", indent)
			if i == 0 {
				left = "  " + pad(d.Name, nameW+2) + pad(showDefault(d.Default), defW+2)
			}
			fmt.Fprintln(out, left+l)
		}
	}
}

// showDefault shows an empty default as "".
func showDefault(s string) string {
	if s == "" {
		return `""`
	}
	return s
}

// pad pads s with spaces to n runes.
func pad(s string, n int) string {
	return s + strings.Repeat(" ", max(0, n-utf8.RuneCountInString(s)))
}

// wrap breaks text into lines of at most width runes at spaces; a word longer
// than width is cut.
func wrap(text string, width int) []string {
	width = max(width, 10)
	var lines []string
	line := ""
	for _, word := range strings.Fields(text) {
		for utf8.RuneCountInString(word) > width {
			if line != "" {
				lines = append(lines, line)
				line = ""
			}
			r := []rune(word)
			lines = append(lines, string(r[:width]))
			word = string(r[width:])
		}
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}

// Package vet is locklab's determinism check as a go/analysis Analyzer: the
// rules locklab enforces on its own simulated packages (sim, backends,
// workloads, nemesis), offered to code that runs inside the simulator — a
// user's own lock, whose Go code runs as a simulated client process.
//
// Inside the simulator a client's code must not read the machine's clock,
// sleep, start goroutines, use global randomness or let a map's iteration
// order decide anything: time, scheduling and randomness come from the
// client's lockapi.Env, so that the same seed gives the same history. The
// Analyzer reports:
//
//   - calls of time.Now, Sleep, After, AfterFunc, NewTimer, NewTicker, Tick,
//     Since and Until (the machine's clock);
//   - package-level functions of math/rand and math/rand/v2 other than the
//     constructors of explicit sources (New, NewPCG, NewChaCha8, NewSource,
//     NewZipf), and any import of crypto/rand (global randomness);
//   - runtime.Gosched, os.Getenv and os.LookupEnv;
//   - go statements and select statements (only the kernel's coroutines run);
//   - range loops over maps (random order; sort the keys first).
//
// A line that must break a rule on purpose says so with a comment containing
// "determinism:ok".
//
// What it cannot catch, plainly: it reads the packages it is given, not what
// they call. A library that reads the clock or starts goroutines inside
// (a real Redis or etcd client, a logger that stamps times, a retry helper
// with its own timer) passes unseen, and so does a call through an
// interface or a function value that ends in time.Now. Blocking on a
// channel or a sync.Mutex held across a call that blocks in the simulator
// deadlocks the kernel without being reported. A map iteration whose order
// cannot change the outcome is reported all the same (say so with
// determinism:ok). The simulator catches what it can at run time; this
// check catches the common mistakes before the run.
package vet

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"
)

// Analyzer reports code that would make a simulated run depend on the
// machine (see the package doc for the rules and their limits).
var Analyzer = &analysis.Analyzer{
	Name: "determinism",
	Doc:  "report clock reads, sleeps, goroutines, global randomness and map iteration in code that runs inside locklab's simulator",
	Run:  run,
}

// forbiddenFuncs are package-level functions that read the machine's clock,
// global randomness or the environment (nil: every function of the package
// but the allowed constructors).
var forbiddenFuncs = map[string][]string{
	"time":         {"Now", "Sleep", "After", "AfterFunc", "NewTimer", "NewTicker", "Tick", "Since", "Until"},
	"math/rand":    nil,
	"math/rand/v2": nil,
	"crypto/rand":  nil,
	"runtime":      {"Gosched"},
	"os":           {"Getenv", "LookupEnv"},
}

// allowedRand are the constructors of explicit random sources.
var allowedRand = []string{"New", "NewPCG", "NewChaCha8", "NewSource", "NewZipf"}

func run(pass *analysis.Pass) (any, error) {
	for _, f := range pass.Files {
		for _, d := range Check(pass.Fset, pass.TypesInfo, f) {
			pass.Report(d)
		}
	}
	return nil, nil
}

// Check applies the rules to one type-checked file and returns what breaks
// them, in source order.
func Check(fset *token.FileSet, info *types.Info, f *ast.File) []analysis.Diagnostic {
	var out []analysis.Diagnostic
	okLines := map[int]bool{}
	for _, cg := range f.Comments {
		for _, c := range cg.List {
			if strings.Contains(c.Text, "determinism:ok") {
				okLines[fset.Position(c.Pos()).Line] = true
			}
		}
	}
	report := func(n ast.Node, format string, args ...any) {
		if okLines[fset.Position(n.Pos()).Line] {
			return
		}
		out = append(out, analysis.Diagnostic{Pos: n.Pos(), End: n.End(), Message: fmt.Sprintf(format, args...)})
	}
	for _, imp := range f.Imports {
		if strings.Trim(imp.Path.Value, `"`) == "crypto/rand" {
			report(imp, "imports crypto/rand")
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			report(n, "starts a goroutine (only the kernel's coroutines may run)")
		case *ast.SelectStmt:
			report(n, "select statement (channels are not deterministic under the kernel)")
		case *ast.RangeStmt:
			if tv, ok := info.Types[n.X]; ok {
				if _, isMap := tv.Type.Underlying().(*types.Map); isMap {
					report(n, "ranges over a map (random order); sort the keys first")
				}
			}
		case *ast.SelectorExpr:
			fn, ok := info.Uses[n.Sel].(*types.Func)
			if !ok || fn.Pkg() == nil || fn.Type().(*types.Signature).Recv() != nil {
				return true
			}
			path := fn.Pkg().Path()
			names, listed := forbiddenFuncs[path]
			if !listed {
				return true
			}
			if strings.HasPrefix(path, "math/rand") && slices.Contains(allowedRand, fn.Name()) {
				return true
			}
			if names == nil || slices.Contains(names, fn.Name()) {
				report(n, "calls %s.%s (the machine's clock, global randomness or environment)", path, fn.Name())
			}
		}
		return true
	})
	return out
}

// Finding is one place that breaks a rule.
type Finding struct {
	// Pos is file:line:column.
	Pos     token.Position
	Package string
	Message string
}

func (f Finding) String() string { return fmt.Sprintf("%s: %s", f.Pos, f.Message) }

// Packages loads the packages matching patterns (as `go build` reads them)
// from dir and returns every finding, sorted by file and line. A pattern
// that matches nothing, or a package that does not compile, is an error
// naming it.
func Packages(dir string, patterns ...string) ([]Finding, error) {
	if len(patterns) == 0 {
		patterns = []string{"."}
	}
	cfg := &packages.Config{Dir: dir, Mode: packages.LoadAllSyntax}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", strings.Join(patterns, " "), err)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("no Go package matches %s in %s", strings.Join(patterns, " "), dir)
	}
	var problems []string
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		for _, e := range p.Errors {
			problems = append(problems, e.Error())
		}
	})
	if len(problems) > 0 {
		return nil, fmt.Errorf("the packages do not compile: %s", strings.Join(problems, "; "))
	}
	g, err := checker.Analyze([]*analysis.Analyzer{Analyzer}, pkgs, nil)
	if err != nil {
		return nil, fmt.Errorf("analyse %s: %w", strings.Join(patterns, " "), err)
	}
	var out []Finding
	for _, act := range g.Roots {
		if act.Err != nil {
			return nil, fmt.Errorf("analyse %s: %w", act.Package.PkgPath, act.Err)
		}
		for _, d := range act.Diagnostics {
			out = append(out, Finding{Pos: act.Package.Fset.Position(d.Pos), Package: act.Package.PkgPath, Message: d.Message})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Pos, out[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return out, nil
}

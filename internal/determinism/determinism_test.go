package determinism

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/locklab/locklab/vet"
)

// simulated are the package patterns that run inside the simulator.
var simulated = []string{"../../sim/...", "../../backends/...", "../../lockapi/...", "../../storage/...", "../../workloads/...", "../../nemesis/..."}

// isLive reports a live-mode package (real time, goroutines): the live
// runner (live/...), a system's live form (backends/<x>/live) and the live
// storage (storage/live): any package with a path element "live".
func isLive(path string) bool {
	return slices.Contains(strings.Split(path, "/"), "live")
}

// wiring are packages under the simulated patterns that run nothing: they
// import systems for their registration (a live form registers its
// simulated form too), as a program imports a database/sql driver.
var wiring = []string{"github.com/locklab/locklab/backends/builtin"}

func TestSimulatedPackagesAreDeterministic(t *testing.T) {
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedImports |
		packages.NeedTypes | packages.NeedTypesInfo, Tests: false}
	pkgs, err := packages.Load(cfg, simulated...)
	if err != nil {
		t.Fatalf("load packages: %v", err)
	}
	if len(pkgs) < 5 {
		t.Fatalf("loaded only %d packages", len(pkgs))
	}
	var problems []string
	for _, p := range pkgs {
		for _, e := range p.Errors {
			t.Fatalf("package %s: %v", p.PkgPath, e)
		}
		if isLive(p.PkgPath) || slices.Contains(wiring, p.PkgPath) {
			continue // real time by design, or wiring; the simulated packages must not import it (below)
		}
		for path := range p.Imports {
			if isLive(path) {
				problems = append(problems, fmt.Sprintf("%s imports the live package %s", p.PkgPath, path))
			}
		}
		for _, f := range p.Syntax {
			problems = append(problems, check(p.Fset, p.TypesInfo, f)...)
		}
	}
	slices.Sort(problems)
	for _, pr := range problems {
		t.Error(pr)
	}
}

// check applies locklab's determinism rules (package vet) to one file.
func check(fset *token.FileSet, info *types.Info, f *ast.File) []string {
	var out []string
	for _, d := range vet.Check(fset, info, f) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(d.Pos), d.Message))
	}
	return out
}

// TestTheCheckerCatchesViolations feeds the checker a file that breaks every
// rule, so that a checker that silently passes everything is caught too.
func TestTheCheckerCatchesViolations(t *testing.T) {
	src := `package bad
import (
	"math/rand/v2"
	"time"
)
func f(m map[string]int) {
	_ = time.Now()
	time.Sleep(time.Second)
	_ = rand.IntN(3)
	_ = rand.New(rand.NewPCG(1, 2)) // allowed
	go func() {}()
	for k := range m { _ = k }
	_ = time.Now() // determinism:ok only for the test
}`
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedImports |
		packages.NeedTypes | packages.NeedTypesInfo, Overlay: map[string][]byte{}, Dir: t.TempDir()}
	dir := cfg.Dir
	cfg.Overlay[dir+"/bad.go"] = []byte(src)
	cfg.Overlay[dir+"/go.mod"] = []byte("module bad\ngo 1.26\n")
	pkgs, err := packages.Load(cfg, "file="+dir+"/bad.go")
	if err != nil || len(pkgs) != 1 || len(pkgs[0].Syntax) != 1 {
		t.Fatalf("load: %v %v", err, pkgs)
	}
	got := check(pkgs[0].Fset, pkgs[0].TypesInfo, pkgs[0].Syntax[0])
	want := []string{"time.Now", "time.Sleep", "math/rand/v2.IntN", "goroutine", "ranges over a map"}
	if len(got) != len(want) {
		t.Fatalf("want %d problems, got %d:\n%s", len(want), len(got), strings.Join(got, "\n"))
	}
	for i, w := range want {
		if !strings.Contains(got[i], w) {
			t.Errorf("problem %d: want %q in %q", i, w, got[i])
		}
	}
}

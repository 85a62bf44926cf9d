package userlocktest_test

import (
	"fmt"
	"testing"

	"github.com/locklab/locklab/models"
	"github.com/locklab/locklab/userlock"
	"github.com/locklab/locklab/userlock/internal/locktest"
	"github.com/locklab/locklab/userlock/userlocktest"
)

// register is what a user's main.go registers: here a ZooKeeper lock whose
// leases carry the node's sequence number as a fencing token.
func register() {
	userlock.RegisterZooKeeper(userlock.ZooKeeperLock{
		Spec: userlock.Spec{Name: "mylock", Tokens: true, SafeRelease: true},
		New: func(env userlock.Env, conn userlock.ZooKeeper) userlock.Lock {
			return locktest.NewZooKeeperRaw(env, conn, true)
		},
	})
}

// exampleT stands for the *testing.T of a test function (an Example is
// given none): it prints what a test would report.
type exampleT struct{ testing.TB }

func (exampleT) Helper() {}
func (exampleT) Errorf(format string, args ...any) {
	fmt.Printf("FAIL: "+format+"\n", args...)
}
func (t exampleT) Fatalf(format string, args ...any) {
	t.Errorf(format, args...)
	panic("the test stops here")
}

// theLockIsFenced is the package doc's first test.
func theLockIsFenced(t testing.TB) {
	userlocktest.Expect(t, "mylock", "gc-pause-fenced", map[string]models.Result{
		"critical-sections": models.Valid,
	})
}

// theDataIsSafe is the package doc's second test: the lock breaks under a
// long pause (mutual exclusion is invalid), but fenced storage refuses the
// stale write: exit code 5, the data is safe.
func theDataIsSafe(t testing.TB) userlocktest.Run {
	return userlocktest.ExpectDataSafe(t, "mylock", "gc-pause-fenced")
}

// Example runs the package doc's two tests as go test runs them, against a
// fenced ZooKeeper lock registered as a user's main.go does: both pass
// (nothing is reported), and the run exits with code 5.
func Example() {
	register()
	t := exampleT{}
	theLockIsFenced(t)
	r := theDataIsSafe(t)
	fmt.Println("mutual-exclusion", r.Verdict("mutual-exclusion"))
	fmt.Println("critical-sections", r.Verdict("critical-sections"))
	fmt.Println("exit code", r.ExitCode())
	// Output:
	// mutual-exclusion invalid
	// critical-sections valid
	// exit code 5
}

// ExampleSearchLibrary is a go test of a lock a program uses over go-redis
// (SET NX PX, released by compare-and-delete), searched in library mode:
// the search finds the lost update under a GC pause, shrinks it to one
// pause, and writes the run directory with report.html. The test itself is
// TestSearchLibraryFindsTheLostUpdate in library_test.go (an Example is
// given no *testing.T, which library mode needs for its synctest bubble).
func ExampleSearchLibrary() {
	testMyLock := func(t *testing.T) {
		rep := userlocktest.ExpectLibraryFinds(t, setNX(false), "critical-sections")
		t.Log(rep.Text()) // the searches, the shrunk schedule, the replay line
	}
	_ = testMyLock
}

package useretcd_test

import (
	"fmt"

	"github.com/locklab/locklab/harness"
	"github.com/locklab/locklab/judge"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/userlock"
	"github.com/locklab/locklab/userlock/useretcd"
)

// ExampleRegister is the package doc's program without cli.Main: it
// registers a lock over etcd written against Etcd (a lease, a txn on the
// key's create revision, the create revision as fencing token) and runs the
// fenced GC-pause variant of the scenario locklab stages against it
// (`locklab repro myetcdlock --variant gc-pause-fenced`): the paused holder
// outlives its lease, and fenced storage refuses its stale write.
func ExampleRegister() {
	useretcd.Register(useretcd.EtcdLock{
		Spec: userlock.Spec{Name: "myetcdlock", Tokens: true, SafeRelease: true},
		New:  newKVLock,
	})
	s, _ := scenario.Find("myetcdlock")
	v, _ := s.FindVariant("gc-pause-fenced")
	r, err := harness.Run(v.ReproTest())
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, vd := range r.Verdicts {
		fmt.Println(vd.Check, vd.Result)
	}
	fmt.Println("exit code", judge.ExitCode(r.Verdicts))
	// Output:
	// critical-sections valid
	// mutual-exclusion invalid
	// lease valid
	// fencing-tokens valid
	// liveness valid
	// lock-conduct valid
	// exit code 5
}

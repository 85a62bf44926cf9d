package live

import (
	"maps"
	"time"

	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
	"github.com/locklab/locklab/workloads"
)

// Scale returns t with every duration multiplied by k: the run time, the
// schedule's times, durations and amounts, and every duration-valued option
// of the workload and of the live system (defaults included). k = 1 returns
// t unchanged.
func Scale(t scenario.Test, k float64) scenario.Test {
	if k == 1 || k <= 0 {
		return t
	}
	t = t.WithDefaults()
	sc := func(d time.Duration) time.Duration { return time.Duration(float64(d) * k) }
	t.Time = sc(t.Time)
	if t.Schedule != nil {
		s := *t.Schedule
		s.Faults = append([]nemesis.Fault(nil), s.Faults...)
		for i, f := range s.Faults {
			f.At, f.Duration, f.Amount = nemesis.Duration(sc(time.Duration(f.At))), nemesis.Duration(sc(time.Duration(f.Duration))),
				nemesis.Duration(sc(time.Duration(f.Amount)))
			if f.After != nil {
				a := *f.After
				a.Delay = nemesis.Duration(sc(time.Duration(a.Delay)))
				f.After = &a
			}
			if f.Until != nil {
				u := *f.Until
				u.Delay = nemesis.Duration(sc(time.Duration(u.Delay)))
				f.Until = &u
			}
			s.Faults[i] = f
		}
		t.Schedule = &s
	}
	if w, err := workloads.Find(t.Workload); err == nil {
		t.WorkloadOptions = scaleOptions(t.WorkloadOptions, w.Options, sc)
	}
	if spec := systemSpec(t.System); spec != nil {
		t.SystemOptions = scaleOptions(t.SystemOptions, spec, sc)
	}
	return t
}

// scaleOptions is every option of spec (given or default) with its
// durations scaled; options spec refuses are left as given.
func scaleOptions(given map[string]string, spec opt.Spec, sc func(time.Duration) time.Duration) map[string]string {
	out := maps.Clone(given)
	if out == nil {
		out = map[string]string{}
	}
	settings, err := spec.Effective(given)
	if err != nil {
		return out
	}
	for _, s := range settings {
		d, err := time.ParseDuration(s.Value)
		if err != nil || d == 0 {
			continue
		}
		out[s.Name] = sc(d).String()
	}
	return out
}

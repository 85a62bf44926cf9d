package models

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/locklab/locklab/history"
)

// parseHistory reads the compact history notation used by these tests, one
// event per line:
//
//	<ms> <process> <node> <type> <f> [key] [token=N] [value=N] [values=[N,...]] [owner=S] [deadline=MS]
//	<ms> nemesis start|stop <kind> <target,...> [key=K]
//
// Times are milliseconds; '#' starts a comment.
func parseHistory(t *testing.T, text string) []history.Event {
	t.Helper()
	var out []history.Event
	for n, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		fail := func(msg string) { t.Fatalf("history line %d %q: %s", n+1, line, msg) }
		ms, err := strconv.ParseFloat(f[0], 64)
		if err != nil || len(f) < 4 {
			fail("want <ms> <process> <node> <type> <f> ...")
		}
		e := history.Event{Index: len(out), Time: int64(ms * 1e6)}
		if f[1] == "nemesis" {
			e.Process, e.Type, e.F = history.NemesisProcess, history.Type(f[2]), f[3]
			if len(f) > 4 {
				e.Targets = strings.Split(f[4], ",")
			}
			for _, kv := range f[5:] {
				if k, v, _ := strings.Cut(kv, "="); k == "key" {
					e.Key = v
				} else {
					fail("unknown nemesis attribute " + kv)
				}
			}
			out = append(out, e)
			continue
		}
		if len(f) < 5 {
			fail("want <ms> <process> <node> <type> <f> ...")
		}
		p, err := strconv.Atoi(strings.TrimPrefix(f[1], "p"))
		if err != nil {
			fail("bad process")
		}
		e.Process, e.Node, e.Type, e.F = p, f[2], history.Type(f[3]), f[4]
		for _, kv := range f[5:] {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				e.Key = kv
				continue
			}
			num, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "token":
				e.Token = history.Ptr(uint64(num))
			case "value":
				e.Value = history.Ptr(int64(num))
			case "owner":
				e.Owner = v
			case "deadline":
				e.Deadline = history.Ptr(int64(num * 1e6))
			case "values":
				e.Values = []int64{}
				for _, x := range strings.Split(strings.Trim(v, "[]"), ",") {
					if x == "" {
						continue
					}
					n, err := strconv.ParseInt(x, 10, 64)
					if err != nil {
						fail("bad values")
					}
					e.Values = append(e.Values, n)
				}
			default:
				fail("unknown attribute " + k)
			}
		}
		out = append(out, e)
	}
	if err := history.Validate(out); err != nil {
		t.Fatalf("test history is malformed: %v", err)
	}
	return out
}

func describe(v Verdict) string {
	s := fmt.Sprintf("%s: %s", v.Result, v.Reason)
	if v.Counterexample != nil {
		s += "\n" + strings.Join(v.Counterexample.Explanation, "\n")
	}
	return s
}

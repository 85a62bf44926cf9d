package clientgodiff

import (
	"flag"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/backends/kubernetes"
)

var schedules = flag.Int("schedules", 250, "how many random schedules to compare")

// runFor is how long each schedule runs (virtual time).
const runFor = 2 * time.Minute

// TestTheModelSendsWhatClientGoSends: over random schedules of API answers
// (latencies, errors, lost answers, writes by another candidate) and
// elector timings, client-go's LeaderElector (v0.36.3) and the model
// (client-go=0.36) send the same Lease requests at the same times, and
// start and stop leading at the same times.
func TestTheModelSendsWhatClientGoSends(t *testing.T) {
	var n counts
	for seed := uint64(1); seed <= uint64(*schedules); seed++ {
		real := runClientGo(t, seed, runFor)
		model, err := runModel(seed, runFor, kubernetes.ClientGo036)
		require.NoError(t, err)
		n.add(real)
		if d := firstDifference(real, model); d != "" {
			n.disagreements++
			t.Errorf("schedule %d (%+v): %s", seed, drawSettings(seed), d)
		}
	}
	t.Logf("%d schedules: client-go sent %d requests (%d updates, %d of them ReleaseOnCancel's), led %d times; %d disagreements",
		*schedules, n.requests, n.updates, n.releases, n.leads, n.disagreements)
}

// TestTheComparisonTellsAnotherReleaseLine: the model set to client-go
// 0.33's release (no get before the update) parts from client-go v0.36.3
// on some schedule: the comparison is able to fail.
func TestTheComparisonTellsAnotherReleaseLine(t *testing.T) {
	for seed := uint64(1); seed <= 100; seed++ {
		if !drawSettings(seed).ReleaseOnCancel {
			continue
		}
		model, err := runModel(seed, runFor, kubernetes.ClientGo033)
		require.NoError(t, err)
		if firstDifference(runClientGo(t, seed, runFor), model) != "" {
			return
		}
	}
	t.Fatal("the model with client-go 0.33's release agreed with client-go v0.36.3 on 100 schedules")
}

// counts are what the schedules exercised.
type counts struct {
	requests, updates, releases, leads, disagreements int
}

func (n *counts) add(tr trace) {
	n.requests += len(tr.Requests)
	for _, r := range tr.Requests {
		if r.Verb == "update" {
			n.updates++
			if r.Rec.Holder == "" {
				n.releases++
			}
		}
	}
	for _, l := range tr.Leading {
		if l.Started {
			n.leads++
		}
	}
}

// firstDifference describes where the traces part, "" when they agree.
func firstDifference(real, model trace) string {
	for i := range max(len(real.Requests), len(model.Requests)) {
		var r, m string
		if i < len(real.Requests) {
			r = real.Requests[i].String()
		}
		if i < len(model.Requests) {
			m = model.Requests[i].String()
		}
		if r != m {
			return fmt.Sprintf("request %d: client-go %q, model %q (before: %s)", i, r, m, tail(real.Requests[:min(i, len(real.Requests))]))
		}
	}
	for i := range max(len(real.Leading), len(model.Leading)) {
		var r, m string
		if i < len(real.Leading) {
			r = real.Leading[i].String()
		}
		if i < len(model.Leading) {
			m = model.Leading[i].String()
		}
		if r != m {
			return fmt.Sprintf("leadership %d: client-go %q, model %q", i, r, m)
		}
	}
	return ""
}

func tail(rs []request) string {
	var b []string
	for _, r := range rs[max(0, len(rs)-4):] {
		b = append(b, r.String())
	}
	return strings.Join(b, "; ")
}

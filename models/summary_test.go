package models

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/history"
)

// TestSummaryCountsEveryFunction: the summary counts the completions of
// every function and the starts of every fault kind, with few functions or
// many (beyond the tally's slice).
func TestSummaryCountsEveryFunction(t *testing.T) {
	for _, fns := range []int{1, 3, tallyMax, 5 * tallyMax} {
		t.Run(fmt.Sprint(fns), func(t *testing.T) {
			var events []history.Event
			add := func(e history.Event) {
				e.Index, e.Time = len(events), int64(len(events))
				events = append(events, e)
			}
			wantOps := map[string]Counts{}
			wantFaults := map[string]int{}
			for i := range 4 * fns {
				f := fmt.Sprintf("f%d", i%fns)
				add(history.Event{Process: 0, Type: history.Invoke, F: f})
				c := wantOps[f]
				switch i % 3 {
				case 0:
					add(history.Event{Process: 0, Type: history.OK, F: f})
					c.OK++
				case 1:
					add(history.Event{Process: 0, Type: history.Fail, F: f})
					c.Fail++
				default:
					add(history.Event{Process: 0, Type: history.Info, F: f})
					c.Info++
				}
				wantOps[f] = c
				kind := fmt.Sprintf("k%d", i%fns)
				add(history.Event{Process: history.NemesisProcess, Type: history.Start, F: kind})
				wantFaults[kind]++
			}
			add(history.Event{Process: 1, Type: history.Invoke, F: "f0"})
			c := wantOps["f0"]
			c.Pending++
			wantOps["f0"] = c
			s := Summarize(events)
			assert.Equal(t, wantOps, s.Ops)
			assert.Equal(t, wantFaults, s.Faults)
			assert.Equal(t, len(events), s.Events)
		})
	}
}

package clientgodiff

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/locklab/locklab/backends/kubernetes"
)

// TestDumpSchedule prints both sides' traces of the schedule named by
// DIFF_SEED, side by side, for reading a disagreement.
func TestDumpSchedule(t *testing.T) {
	seed, err := strconv.ParseUint(os.Getenv("DIFF_SEED"), 10, 64)
	if err != nil {
		t.Skip("DIFF_SEED=<schedule> prints the traces of one schedule")
	}
	real := runClientGo(t, seed, runFor)
	model, err := runModel(seed, runFor, kubernetes.ClientGo036)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("settings %+v\n", drawSettings(seed))
	for i := range max(len(real.Requests), len(model.Requests)) {
		var r, m string
		if i < len(real.Requests) {
			r = real.Requests[i].String()
		}
		if i < len(model.Requests) {
			m = model.Requests[i].String()
		}
		mark := " "
		if r != m {
			mark = "!"
		}
		fmt.Printf("%s %3d %-90s | %s\n", mark, i, r, m)
	}
	fmt.Println("client-go:", real.Leading)
	fmt.Println("model:    ", model.Leading)
}

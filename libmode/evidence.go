package libmode

import (
	"fmt"

	"github.com/locklab/locklab/lockapi"
)

// Outlived is a lost update the servers' record explains: the writer's
// holding of the lock (by the instances' record, with a quorum when there
// are several) had ended before its write landed, and another client had
// been granted the lock in between. It is Kleppmann's GC-pause lost
// update as the ground truth shows it: the servers kept their promise;
// the client outlived it.
type Outlived struct {
	// Write is the stale write that overwrote Lost.
	Write, Lost lockapi.AppliedWrite
	// Held is the writer's holding; Next the other client's, which began
	// after Held ended and before Write landed.
	Held, Next lockapi.Holding
}

func (o Outlived) String() string {
	return fmt.Sprintf("%s held %q until %.3fs; %s was granted it at %.3fs; %s's write of %d landed at %.3fs, overwriting %s's write of %d",
		o.Held.Client, o.Held.Key, o.Held.To.Seconds(), o.Next.Client, o.Next.From.Seconds(),
		o.Write.Client, o.Write.Value, o.Write.At.Seconds(), o.Lost.Client, o.Lost.Value)
}

// outlived finds, for each lost update, the holdings that explain it.
func outlived(key string, holdings []lockapi.Holding, lost []lockapi.LostUpdate) []Outlived {
	var out []Outlived
	for _, u := range lost {
		w := u.By
		var held *lockapi.Holding
		for i := range holdings {
			h := &holdings[i]
			if h.Key == key && h.Client == w.Client && h.From <= w.ReadAt && (held == nil || h.From > held.From) {
				held = h
			}
		}
		if held == nil || held.To >= w.At {
			continue
		}
		for _, h := range holdings {
			if h.Key == key && h.Client != w.Client && h.From >= held.To && h.From <= w.At {
				out = append(out, Outlived{Write: w, Lost: u.Lost, Held: *held, Next: h})
				break
			}
		}
	}
	return out
}

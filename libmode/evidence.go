package libmode

import (
	"fmt"
	"time"

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

// JumpBreach is a breach of the servers' record that a clock jump
// explains: the instance whose clock jumped granted the lock to both
// owners, the earlier before the jump and the later after it, while the
// earlier owner's promise (in true time) had not run out.
type JumpBreach struct {
	Breach   lockapi.Breach
	Instance string
	// At and By are the jump's moment and size.
	At, By time.Duration
	// Earlier and Later are the instance's two grants.
	Earlier, Later lockapi.Grant
}

func (j JumpBreach) String() string {
	return fmt.Sprintf("%s granted %q to %s at %.3fs (promised until %.3fs), its clock jumped %+v at %.3fs, and it granted %q to %s at %.3fs",
		j.Instance, j.Earlier.Key, j.Earlier.Client, j.Earlier.At.Seconds(), j.Earlier.Until.Seconds(), j.By, j.At.Seconds(),
		j.Later.Key, j.Later.Client, j.Later.At.Seconds())
}

// jumpBreaches explains the breaches by the clock jumps among faults.
func jumpBreaches(breaches []lockapi.Breach, grants []lockapi.Grant, faults []Fault) []JumpBreach {
	var out []JumpBreach
	for _, b := range breaches {
		if b.Removal {
			continue
		}
	jumps:
		for _, f := range faults {
			j, ok := f.(ClockJump)
			if !ok {
				continue
			}
			for _, e := range grants {
				if e.Server != j.Instance || e.Key != b.Key || e.Owner != b.Held.Owner || e.At > j.At || e.Until <= j.At {
					continue
				}
				for _, l := range grants {
					if l.Server == j.Instance && l.Key == b.Key && l.Owner == b.Other.Owner && l.At >= j.At && l.At < e.Until {
						out = append(out, JumpBreach{Breach: b, Instance: j.Instance, At: j.At, By: j.By, Earlier: e, Later: l})
						break jumps
					}
				}
			}
		}
	}
	return out
}

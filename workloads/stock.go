package workloads

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/backends"
	"github.com/locklab/locklab/internal/opt"
)

// Stock is the stock workload: a shop keeps Items items in one storage cell;
// every client is a buyer who wants a number of items and buys once. Under the
// lock it reads the stock level and, if there is enough, writes level−quantity
// with its token; a buyer who finds too little gives up, one whose acquire
// failed tries again. With mutual exclusion the shop never sells more than it
// has; two buyers who both read the same level oversell it. Reads and writes
// are recorded like fenced-counter's, so the critical-sections check applies.
type Stock struct {
	// Key is the lock key and the storage cell. Default "stock".
	Key string
	// Items is the stock level before the run. Default 4.
	Items int64
	// Quantities are what the buyers want: client cN wants Quantities[(N-1) mod
	// len]. Default [3, 2].
	Quantities []int
	// Stagger delays client cN's first attempt by (N-1)·Stagger, so the
	// buyers come in order. Default 10 ms.
	Stagger time.Duration
	// Hold is the time between the read and the write. Default 100 ms.
	Hold time.Duration
	// Think is the pause before another attempt after a failed acquire. Default 100 ms.
	Think time.Duration
	// Wait is the acquire wait budget. Default 5 s.
	Wait time.Duration
}

// DefaultStock returns the documented defaults.
func DefaultStock() Stock {
	return Stock{Key: "stock", Items: 4, Quantities: []int{3, 2}, Stagger: 10 * time.Millisecond,
		Hold: 100 * time.Millisecond, Think: 100 * time.Millisecond, Wait: 5 * time.Second}
}

// StockOptions lists the keys Stock.Set understands.
var StockOptions = []string{"items", "quantities", "stagger", "hold", "think", "wait"}

// Set sets one option from its textual form (key=value on the command line).
func (w *Stock) Set(key, value string) error {
	var err error
	switch key {
	case "items":
		var n int
		n, err = opt.IntIn(value, 0, 1_000_000)
		w.Items = int64(n)
	case "quantities":
		w.Quantities, err = opt.Ints(value, 1, 1_000_000)
	case "stagger":
		w.Stagger, err = opt.NonNegativeDuration(value)
	case "hold":
		w.Hold, err = opt.NonNegativeDuration(value)
	case "think":
		w.Think, err = opt.NonNegativeDuration(value)
	case "wait":
		w.Wait, err = opt.NonNegativeDuration(value)
	default:
		return fmt.Errorf("stock has no option %q (options: %s)", key, strings.Join(StockOptions, ", "))
	}
	if err != nil {
		return fmt.Errorf("stock option %s=%q: %w", key, value, err)
	}
	return nil
}

// Initial is the stock level before the run (workloads.Initializer).
func (w Stock) Initial() map[string]int64 { return map[string]int64{w.Key: w.Items} }

// clientNumber is N for a client called cN (1 when the name has no number).
func clientNumber(name string) int {
	i := len(name)
	for i > 0 && name[i-1] >= '0' && name[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(name[i:])
	if err != nil || n < 1 {
		return 1
	}
	return n
}

// Quantity is what the client called name wants to buy.
func (w Stock) Quantity(name string) int {
	return w.Quantities[(clientNumber(name)-1)%len(w.Quantities)]
}

// Run is the buyer's program: it ends once the buyer bought or found too
// little stock.
func (w Stock) Run(c Client) {
	qty := int64(w.Quantity(c.Env.Name()))
	c.Env.Sleep(time.Duration(clientNumber(c.Env.Name())-1) * w.Stagger)
	for {
		if lease, err := Acquire(c, w.Key, w.Wait); err == nil {
			done := false
			if level, err := Read(c, w.Key, lease); err == nil {
				done = level < qty // sold out for this buyer
				if !done {
					c.Env.Sleep(w.Hold)
					err := Write(c, w.Key, level-qty, lease)
					done = err == nil || backends.Unknown(err) // a rejected write is tried again

				}
			}
			_ = Release(c, lease)
			if done {
				return
			}
		}
		c.Env.Sleep(w.Think)
	}
}

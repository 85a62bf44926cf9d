package workloads

import (
	"strconv"
	"time"

	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/lockapi"
)

// Stock is the stock workload: a shop keeps Items items in one storage cell
// (StockKey); every client is a buyer who wants a number of items and buys once. Under the
// lock it reads the stock level and, if there is enough, writes level−quantity
// with its token; a buyer who finds too little gives up, one whose acquire
// failed tries again. With mutual exclusion the shop never sells more than it
// has; two buyers who both read the same level oversell it. Reads and writes
// are recorded like fenced-counter's, so the critical-sections check applies.
type Stock struct {
	// Items is the stock level before the run.
	Items int64
	// Quantities are what the buyers want: client cN wants Quantities[(N-1) mod
	// len].
	Quantities []int
	// Stagger delays client cN's first attempt by (N-1)·Stagger, so the
	// buyers come in order.
	Stagger time.Duration
	// Hold is the time between the read and the write.
	Hold time.Duration
	// Think is the pause before another attempt after a failed acquire.
	Think time.Duration
	// Wait is the acquire wait budget.
	Wait time.Duration
}

// StockTable declares the options of the stock workload.
var StockTable = opt.Table[Stock]{Owner: "stock", Options: []opt.Option[Stock]{
	opt.Var("items", "the stock level before the run", "4", func(w *Stock) *int64 { return &w.Items },
		opt.Range[int64](0, 1_000_000)),
	opt.Var("quantities", "what the buyers want: client cN wants the ((N-1) mod len)-th", "3,2",
		func(w *Stock) *[]int { return &w.Quantities }, opt.IntList(1, 1_000_000)),
	opt.Var("stagger", "client cN makes its first attempt after (N-1)*stagger, so buyers come in order", "10ms",
		func(w *Stock) *time.Duration { return &w.Stagger }, opt.NonNegative),
	opt.Var("hold", "time between the read of the stock level and the write", "100ms",
		func(w *Stock) *time.Duration { return &w.Hold }, opt.NonNegative),
	opt.Var("think", "pause before another attempt after a failed acquire", "100ms",
		func(w *Stock) *time.Duration { return &w.Think }, opt.NonNegative),
	opt.Var("wait", "the acquire wait budget", "5s",
		func(w *Stock) *time.Duration { return &w.Wait }, opt.NonNegative),
}}

// StockKey is the stock workload's lock key and storage cell.
const StockKey = "stock"

// DefaultStock returns the declared defaults.
func DefaultStock() Stock { return StockTable.Defaults() }

// Set sets one option from its textual form (key=value on the command line).
func (w *Stock) Set(key, value string) error { return StockTable.Set(w, key, value) }

// Initial is the stock level before the run (workloads.Initializer).
func (w Stock) Initial() map[string]int64 { return map[string]int64{StockKey: w.Items} }

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
		if lease, err := Acquire(c, StockKey, w.Wait); err == nil {
			done := false
			if level, err := Read(c, StockKey, lease); err == nil {
				done = level < qty // sold out for this buyer
				if !done {
					c.Env.Sleep(w.Hold)
					err := Write(c, StockKey, level-qty, lease)
					done = err == nil || lockapi.Unknown(err) // a rejected write is tried again

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

package workloads

import (
	"fmt"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/internal/opt"
	"github.com/locklab/locklab/lockapi"
)

// ListAppend is the list-append workload: each client loops acquire -> read
// the whole list -> hold -> append a new element with its token -> release ->
// think. With mutual exclusion every append lands once, in order; without it
// two holders read the same list, append to it, and one element is lost.
//
// The storage holds numbers, so a list L lives in cells: L/len is its length
// and L/0, L/1, ... its elements; an append writes the element past the end,
// then the new length. Reading a list costs one storage read per element, so
// lists are kept short: the list of lock key k is k.G, where G is the
// generation in cell k/gen, and a holder that finds its list full moves the
// clients on to the next generation (a read of k/gen and a write of G+1, a
// critical section of its own).
type ListAppend struct {
	// FencedCounter's Keys, Hold, Think and Wait mean the same here, with the
	// same defaults: the lock keys, the time between the read and the append,
	// the mean pause between iterations and the acquire wait budget.
	FencedCounter
	// Max is the number of elements a list holds before the next one starts.
	Max int
}

// ListAppendTable declares the options of the list-append workload:
// fenced-counter's, and max.
var ListAppendTable = counterTable("list-append", func(w *ListAppend) *FencedCounter { return &w.FencedCounter },
	opt.Var("max", "elements a list holds before the holder starts the next one", "8",
		func(w *ListAppend) *int { return &w.Max }, opt.AtLeast(1)))

// DefaultListAppend returns the declared defaults.
func DefaultListAppend() ListAppend { return ListAppendTable.Defaults() }

// Set sets one option from its textual form (key=value on the command line).
func (w *ListAppend) Set(key, value string) error { return ListAppendTable.Set(w, key, value) }

// Run is the client program.
func (w ListAppend) Run(c Client) {
	seq := int64(0)
	w.rounds(c, func(key string) {
		if lease, err := Acquire(c, key, w.Wait); err == nil {
			seq++
			w.section(c, key, lease, seq)
			_ = Release(c, lease)
		}
	})
}

// section is one critical section: find the current list, read it, and
// append to it (or start the next list when it is full).
func (w ListAppend) section(c Client, key string, lease lockapi.Lease, seq int64) {
	genKey := key + "/gen"
	gen, err := Read(c, genKey, lease)
	if err != nil {
		return
	}
	list := fmt.Sprintf("%s.%d", key, gen)
	elems, err := ReadList(c, list, lease)
	if err != nil {
		return
	}
	c.Env.Sleep(w.Hold)
	if len(elems) >= w.Max {
		if g, err := Read(c, genKey, lease); err == nil {
			_ = Write(c, genKey, g+1, lease)
		}
		return
	}
	_ = Append(c, list, int64(len(elems)), elementOf(c.Env.Name(), seq), lease)
}

// elementOf is a value no other client appends: the sequence number of the
// iteration and the client's name.
func elementOf(node string, seq int64) int64 {
	var h int64
	for _, r := range node {
		h = h*31 + int64(r)
	}
	return seq*1000 + (h%1000+1000)%1000
}

// ReadList reads the list stored under list (its length, then each element)
// under lease l and records it as one read whose completion carries the
// values.
func ReadList(c Client, list string, l lockapi.Lease) ([]int64, error) {
	op := c.Rec.Invoke(history.Event{F: history.FRead, Key: list, Owner: l.Owner, Token: tokenOf(l)})
	elems, err := readCells(c, list, l)
	e := history.Event{Detail: detail(err), Token: tokenOf(l)}
	if err == nil {
		e.Values = elems
	}
	op.Complete(Outcome(err), e)
	return elems, err
}

func readCells(c Client, list string, l lockapi.Lease) ([]int64, error) {
	n, err := c.Store.Read(list+"/len", l.Token)
	if err != nil {
		return nil, err
	}
	elems := make([]int64, 0, n)
	for i := range n {
		x, err := c.Store.Read(fmt.Sprintf("%s/%d", list, i), l.Token)
		if err != nil {
			return nil, err
		}
		elems = append(elems, x)
	}
	return elems, nil
}

// Append appends x to list, whose length the caller read as n, under lease
// l, and records it. The element is written past the end first, then the new
// length. An element whose length was not written is invisible (the next
// append overwrites it), so the length write decides the outcome: when the
// element write fails in any way the length is not written and the append
// certainly did not happen.
func Append(c Client, list string, n, x int64, l lockapi.Lease) error {
	op := c.Rec.Invoke(history.Event{F: history.FAppend, Key: list, Owner: l.Owner, Token: tokenOf(l), Value: history.Ptr(x)})
	outcome := history.Fail
	err := c.Store.Write(fmt.Sprintf("%s/%d", list, n), x, l.Token)
	if err == nil {
		err = c.Store.Write(list+"/len", n+1, l.Token)
		outcome = Outcome(err)
	}
	op.Complete(outcome, history.Event{Detail: detail(err), Token: tokenOf(l), Value: history.Ptr(x)})
	return err
}

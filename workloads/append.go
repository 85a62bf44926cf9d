package workloads

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/locklab/locklab/backends"
	"github.com/locklab/locklab/history"
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
	// Default 8.
	Max int
}

// DefaultListAppend returns the documented defaults.
func DefaultListAppend() ListAppend {
	return ListAppend{FencedCounter: DefaultFencedCounter(), Max: 8}
}

// Set sets one option from its textual form (key=value on the command line).
func (w *ListAppend) Set(key, value string) error {
	switch key {
	case "max":
		n, err := strconv.Atoi(value)
		if err == nil && n < 1 {
			err = errors.New("must be at least 1")
		}
		if err != nil {
			return fmt.Errorf("list-append option %s=%q: %w", key, value, err)
		}
		w.Max = n
		return nil
	case "keys", "hold", "think", "wait":
		if err := w.FencedCounter.Set(key, value); err != nil {
			return fmt.Errorf("list-append option %s=%q: %w", key, value, errors.Unwrap(err))
		}
		return nil
	}
	return fmt.Errorf("list-append has no option %q (options: keys, max, hold, think, wait)", key)
}

// Run is the client program.
func (w ListAppend) Run(c Client) {
	RecordRenewals(c)
	rnd := c.Env.Rand()
	seq := int64(0)
	for {
		key := w.Keys[rnd.IntN(len(w.Keys))]
		if lease, err := Acquire(c, key, w.Wait); err == nil {
			seq++
			w.section(c, key, lease, seq)
			_ = Release(c, lease)
		}
		c.Env.Sleep(time.Duration(rnd.Int64N(int64(2*w.Think) + 1)))
	}
}

// section is one critical section: find the current list, read it, and
// append to it (or start the next list when it is full).
func (w ListAppend) section(c Client, key string, lease backends.Lease, seq int64) {
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
func ReadList(c Client, list string, l backends.Lease) ([]int64, error) {
	op := c.Rec.Invoke(history.Event{F: history.FRead, Key: list, Owner: l.Owner, Token: tokenOf(l)})
	elems, err := readCells(c, list, l)
	e := history.Event{Detail: detail(err), Token: tokenOf(l)}
	if err == nil {
		e.Values = elems
	}
	op.Complete(Outcome(err), e)
	return elems, err
}

func readCells(c Client, list string, l backends.Lease) ([]int64, error) {
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
func Append(c Client, list string, n, x int64, l backends.Lease) error {
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

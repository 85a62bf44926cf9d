package sweep

import (
	"runtime"
	"sync"
)

// pool works through items on jobs workers (0: GOMAXPROCS): each worker runs
// work on one item at a time, and done receives each item with what work
// returned, in the order they finish, from the calling goroutine (so done may
// write the journal without a lock). perJob results per worker may wait for
// done, so that workers go on while done fsyncs. The first error — work's or done's
// — stops handing out items; pool waits for the workers and returns how many
// items done accepted, and that error, or ErrStopped when stop closed before
// every item was done.
func pool[In, Out any](items []In, jobs, perJob int, stop <-chan struct{}, work func(In) (Out, error), done func(In, Out) error) (int, error) {
	type result struct {
		in  In
		out Out
		err error
	}
	if jobs <= 0 {
		jobs = runtime.GOMAXPROCS(0)
	}
	queue := make(chan In)
	results := make(chan result, perJob*jobs)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for in := range queue {
				out, err := work(in)
				results <- result{in, out, err}
			}
		}()
	}
	quit := make(chan struct{})
	go func() {
		defer close(queue)
		for _, in := range items {
			select {
			case queue <- in:
			case <-quit:
				return
			case <-stop:
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	accepted := 0
	var firstErr error
	for res := range results {
		if firstErr != nil {
			continue
		}
		err := res.err
		if err == nil {
			err = done(res.in, res.out)
		}
		if err != nil {
			firstErr = err
			close(quit)
			continue
		}
		accepted++
	}
	if firstErr == nil && accepted < len(items) {
		firstErr = ErrStopped
	}
	return accepted, firstErr
}

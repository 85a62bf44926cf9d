package reuse

import (
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestPoolGivesBackWhatWasPut(t *testing.T) {
	var p Pool[int]
	fresh := p.Get()
	if assert.NotNil(t, fresh, "an empty pool makes a zero value") {
		assert.Zero(t, *fresh)
	}
	x := new(int)
	*x = 7
	p.Put(x)
	runtime.GC() // unlike sync.Pool, a collection loses nothing
	runtime.GC()
	assert.Same(t, x, p.Get())
	assert.NotSame(t, x, p.Get(), "a value is given out once")
	p.Put(nil)
	assert.NotNil(t, p.Get(), "nil is not kept")
}

func TestPoolKeepsAtMostOnePerProcessorPlusOne(t *testing.T) {
	var p Pool[int]
	for range 10 * runtime.GOMAXPROCS(0) {
		p.Put(new(int))
	}
	assert.Equal(t, runtime.GOMAXPROCS(0)+1, p.Len())
}

func TestPoolIsSafeForConcurrentWorkers(t *testing.T) {
	var p Pool[[]int]
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				s := p.Get()
				*s = append((*s)[:0], w, i)
				assert.Equal(t, []int{w, i}, *s, "no other worker holds it")
				p.Put(s)
			}
		}()
	}
	wg.Wait()
}

func TestRoomIsTheSameMemoryWhenLargeEnough(t *testing.T) {
	s := make([]int, 3, 10)
	assert.Len(t, Room(s, 5), 0)
	assert.Equal(t, 10, cap(Room(s, 5)), "room enough: the same memory")
	assert.Equal(t, 20, cap(Room(s, 20)))
}

package lockapi_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/lockapi"
)

// TestSerialRenewalsRunsOneAtATime: an observer called from many goroutines
// at once sees its calls one after the other.
func TestSerialRenewalsRunsOneAtATime(t *testing.T) {
	inside, most := 0, 0
	fn := lockapi.SerialRenewals(func(lockapi.Lease, bool, error) {
		inside++
		most = max(most, inside)
		time.Sleep(time.Microsecond)
		inside--
	})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				fn(lockapi.Lease{}, true, nil)
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 1, most, "never two calls at once")
}

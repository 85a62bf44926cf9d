// Package bad is a lock whose code breaks every rule of the simulator.
package bad

import (
	crand "crypto/rand" // want `imports crypto/rand`
	"math/rand/v2"
	"os"
	"runtime"
	"time"
)

var _ = crand.Reader

func acquire(m map[string]int, ch chan int) {
	_ = time.Now()              // want `calls time.Now`
	time.Sleep(time.Second)     // want `calls time.Sleep`
	_ = time.Since(time.Time{}) // want `calls time.Since`
	<-time.After(time.Second)   // want `calls time.After`
	_ = rand.IntN(3)            // want `calls math/rand/v2.IntN`
	_ = os.Getenv("HOME")       // want `calls os.Getenv`
	runtime.Gosched()           // want `calls runtime.Gosched`
	go func() {}()              // want `starts a goroutine`
	select {                    // want `select statement`
	case <-ch:
	default:
	}
	for k := range m { // want `ranges over a map`
		_ = k
	}
}

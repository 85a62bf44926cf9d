package models_test

import (
	"fmt"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/models"
)

// The lock models are Porcupine models: run one on a history with Porcupine
// itself (here, a mutex granted to two clients at once).
func ExampleLockService_Porcupine() {
	events, err := history.Read(strings.NewReader(`{"time":0,"process":0,"node":"c1","type":"invoke","f":"acquire","key":"k"}
{"time":1,"process":0,"node":"c1","type":"ok","f":"acquire","key":"k","owner":"a"}
{"time":2,"process":1,"node":"c2","type":"invoke","f":"acquire","key":"k"}
{"time":3,"process":1,"node":"c2","type":"ok","f":"acquire","key":"k","owner":"b"}
`), "example")
	if err != nil {
		panic(err)
	}
	model, ops := models.LockService{}.Porcupine(events)
	fmt.Println("linearizable:", porcupine.CheckOperations(model, ops))
	fmt.Println(models.Run(models.LockService{}, events).Reason)
	// Output:
	// linearizable: false
	// the lock service broke the mutex model on "k": c2 was granted the lock while c1 held it
}

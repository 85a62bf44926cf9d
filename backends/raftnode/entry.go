package raftnode

import (
	"encoding/json"
	"fmt"
)

// EncodeJSON renders v, an entry a service proposes to its log, as JSON (the
// services whose entries are few and small: Chubby's, ZooKeeper's). An entry
// that does not render is the service's own bug: it panics, naming service.
func EncodeJSON[T any](service string, v T) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("%s: encode %+v: %v", service, v, err))
	}
	return b
}

// DecodeJSON reads an entry EncodeJSON rendered. One that does not read was
// not written by the service: it panics, naming service.
func DecodeJSON[T any](service string, b []byte) T {
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		panic(fmt.Sprintf("%s: decode %q: %v", service, b, err))
	}
	return v
}

package kubernetes

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Record is a coordination.k8s.io/v1 Lease's spec as client-go's
// LeaderElectionRecord reads it.
type Record struct {
	// Holder is holderIdentity ("" when released).
	Holder string
	// DurationSeconds is leaseDurationSeconds.
	DurationSeconds int
	// AcquireTime and RenewTime are the writer's wall clock (Unix ns): the
	// elector never compares them with its own clock, only notices that the
	// record changed.
	AcquireTime, RenewTime time.Duration
	// Transitions is leaseTransitions.
	Transitions int
}

// encode is the record as the API server stores it in etcd.
func (r Record) encode() string {
	return fmt.Sprintf("%s|%d|%d|%d|%d", r.Holder, r.DurationSeconds, int64(r.AcquireTime), int64(r.RenewTime), r.Transitions)
}

// observedBytes is the record as the elector compares it with the one it
// observed: client-go compares the JSON of its LeaderElectionRecord, whose
// acquireTime and renewTime are metav1.Time, written in RFC 3339 to the
// second. Two records that differ only within a second of renewTime are
// the same to it: a holder renewing more than once a second is seen to
// change only when the second changes, and a candidate's observedTime is
// up to a second older than the holder's last renewal.
func (r Record) observedBytes() string {
	r.AcquireTime = r.AcquireTime.Truncate(time.Second)
	r.RenewTime = r.RenewTime.Truncate(time.Second)
	return r.encode()
}

// decodeRecord reads what encode wrote.
func decodeRecord(s string) (Record, error) {
	f := strings.Split(s, "|")
	if len(f) != 5 {
		return Record{}, fmt.Errorf("lease record %q: want 5 fields", s)
	}
	var n [4]int64
	for i, x := range f[1:] {
		v, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return Record{}, fmt.Errorf("lease record %q: field %d: %w", s, i+2, err)
		}
		n[i] = v
	}
	return Record{Holder: f[0], DurationSeconds: int(n[0]), AcquireTime: time.Duration(n[1]), RenewTime: time.Duration(n[2]),
		Transitions: int(n[3])}, nil
}

// Namespace is the namespace of every Lease the clients elect with.
const Namespace = "default"

// leaseKey is the etcd key of the Lease called name, where the API server
// keeps it.
func leaseKey(name string) string { return "/registry/leases/" + Namespace + "/" + name }

// Verb is a request's verb on a Lease.
type Verb string

// Verbs the elector uses.
const (
	VerbGet    Verb = "get"
	VerbCreate Verb = "create"
	VerbUpdate Verb = "update"
)

// Status is an API server's answer, as its HTTP status code.
type Status int

// Statuses the API server answers with.
const (
	StatusOK       Status = 200
	StatusCreated  Status = 201
	StatusNotFound Status = 404
	// StatusConflict: an update's resourceVersion is stale (Conflict) or a
	// create found the object there (AlreadyExists).
	StatusConflict Status = 409
	// StatusInvalid: the Lease's spec failed validation (422 Invalid).
	StatusInvalid Status = 422
	// StatusInternal: etcd refused or could not be reached; the write
	// certainly did not happen.
	StatusInternal Status = 500
	// StatusTimeout: etcd did not answer; the write may have happened.
	StatusTimeout Status = 504
)

// Request is a client's request to an API server for the Lease Name.
type Request struct {
	Verb Verb
	Name string
	// Record is the spec to create or update.
	Record Record
	// ResourceVersion is an update's precondition: the version the client
	// read or wrote last.
	ResourceVersion int64
	// Client is the requesting node (for the record of holders).
	Client string
}

// Response answers a Request.
type Response struct {
	Status Status
	// Reason says why a request failed ("Conflict", "AlreadyExists").
	Reason string
	// Record and ResourceVersion are the Lease after the request (get: as
	// read; create/update: as written).
	Record          Record
	ResourceVersion int64
	// Server is the API server that answered.
	Server string
}

// MessageTypes are one value of every message type the clients and the API
// servers send (etcd's among them: the API servers' requests and the raft
// group's messages), for a schedule's delay "match".
func MessageTypes() []any {
	return []any{Request{}, Response{}}
}

// validate is kube-apiserver's ValidateLeaseSpec for the fields the elector
// writes (pkg/apis/coordination/validation): leaseDurationSeconds must be
// greater than 0 and leaseTransitions at least 0; a create or update that
// breaks either is refused with 422 Invalid before it reaches etcd.
// client-go always sets leaseDurationSeconds, to LeaseDuration in whole
// seconds, so a sub-second LeaseDuration makes every write of the elector
// fail: nobody ever leads.
func (r Record) validate(name string) error {
	var errs []string
	if r.DurationSeconds <= 0 {
		errs = append(errs, fmt.Sprintf("spec.leaseDurationSeconds: Invalid value: %d: must be greater than 0", r.DurationSeconds))
	}
	if r.Transitions < 0 {
		errs = append(errs, fmt.Sprintf("spec.leaseTransitions: Invalid value: %d: must be greater than or equal to 0", r.Transitions))
	}
	if len(errs) == 0 {
		return nil
	}
	msg := fmt.Sprintf("Lease.coordination.k8s.io %q is invalid: ", name)
	if len(errs) == 1 {
		return errors.New(msg + errs[0])
	}
	return errors.New(msg + "[" + strings.Join(errs, ", ") + "]")
}

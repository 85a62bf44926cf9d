package nemesis

import (
	"errors"
	"regexp"
	"testing"
)

// located is how every error of Parse begins: the file and a line.
var located = regexp.MustCompile(`^fuzz\.json:[1-9][0-9]*: `)

// FuzzParse: a schedule file never crashes the parser; every error it returns
// is an *Error that names the file and the line; what it accepts is valid and
// survives a round trip through JSON unchanged.
func FuzzParse(f *testing.F) {
	f.Add(`{"faults":[{"kind":"pause","targets":["c1"],"duration":"15s","after":{"node":"c1","f":"read"}}]}`)
	f.Add(`{"faults":[{"kind":"partition","targets":["primary"],"duration":"10s","after":{"node":"c1","f":"acquire"}}]}`)
	f.Add(`{"faults":[{"kind":"delay","from":["redis"],"to":["replicas"],"amount":"5ms","match":"storage.WriteReq","count":1}]}`)
	f.Add(`{"faults":[{"kind":"clock-jump","targets":["redis-c"],"amount":"20s"}]}`)
	f.Add(`{"faults":[{"kind":"clock-drift","targets":["redis-c"],"drift":0.5,"at":1000}]}`)
	f.Add(`{"faults":[{"kind":"partition","groups":[["c1"],["redis"]]},{"kind":"crash","targets":["n1"],"duration":null}]}`)
	f.Add(`{"faults":[{"kind":"pause"}]}`)
	f.Add("{\"faults\": [\n {\"kind\": \"pause\", \"after\": {\"node\": \"c1\", \"f\": \"aquire\", \"type\": \"OK\"}}\n]}")
	f.Add(``)
	f.Add(`{}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, data string) {
		s, err := Parse([]byte(data), "fuzz.json")
		if err != nil {
			var se *Error
			if !errors.As(err, &se) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			if !located.MatchString(err.Error()) {
				t.Fatalf("error does not name the file and line: %v", err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("accepted an invalid schedule: %v", err)
		}
		back, err := Parse(s.JSON(), "again.json")
		if err != nil {
			t.Fatalf("its own JSON does not parse: %v\n%s", err, s.JSON())
		}
		if string(back.JSON()) != string(s.JSON()) {
			t.Fatalf("round trip changed the schedule:\n%s\n%s", s.JSON(), back.JSON())
		}
	})
}

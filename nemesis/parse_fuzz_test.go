package nemesis

import (
	"testing"
)

// FuzzParse: a schedule file never crashes the parser; what it accepts is
// valid and survives a round trip through JSON unchanged.
func FuzzParse(f *testing.F) {
	f.Add(`{"faults":[{"kind":"pause","targets":["c1"],"duration":"15s","after":{"node":"c1","f":"read"}}]}`)
	f.Add(`{"faults":[{"kind":"partition","targets":["primary"],"duration":"10s","after":{"node":"c1","f":"acquire"}}]}`)
	f.Add(`{"faults":[{"kind":"delay","from":["redis"],"to":["replicas"],"amount":"5ms"}]}`)
	f.Add(`{"faults":[{"kind":"clock-jump","targets":["redis-c"],"amount":"20s"}]}`)
	f.Add(`{"faults":[{"kind":"pause"}]}`)
	f.Fuzz(func(t *testing.T, data string) {
		s, err := Parse([]byte(data), "fuzz.json")
		if err != nil {
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

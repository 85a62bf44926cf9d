package harness

import "encoding/json"

// MarshalJSON writes a test with its durations in Go's notation ("1m0s"), as
// schedule files write theirs, so that results.json and the report's
// configuration read as durations rather than raw nanoseconds; an unbounded
// check budget is "unbounded".
func (t Test) MarshalJSON() ([]byte, error) {
	type plain Test // without this method
	budget := t.CheckBudget.String()
	if t.CheckBudget == Unbounded {
		budget = "unbounded"
	}
	return json.Marshal(struct {
		plain
		Time        string `json:"time"`
		CheckBudget string `json:"check_budget"`
	}{plain(t), t.Time.String(), budget})
}

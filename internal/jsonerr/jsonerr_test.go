package jsonerr

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type sample struct {
	Time    int64             `json:"time"`
	Token   *uint64           `json:"token"`
	Targets []string          `json:"targets"`
	Values  []int64           `json:"values"`
	Ratio   float64           `json:"ratio"`
	On      bool              `json:"on"`
	Opts    map[string]string `json:"opts"`
}

func TestPlainSpeaksJSONNotGo(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"time":"a"}`, `field "time": want a whole number, got a string`},
		{`{"time":1.5}`, `field "time": want a whole number, got 1.5`},
		{`{"time":99999999999999999999}`, `field "time": want a whole number, got 99999999999999999999, which is out of range`},
		{`{"token":-1}`, `field "token": want a whole number ≥ 0, got -1`},
		{`{"targets":"c1"}`, `field "targets": want a list of strings, got a string`},
		{`{"values":{}}`, `field "values": want a list of whole numbers, got an object`},
		{`{"ratio":"x"}`, `field "ratio": want a number, got a string`},
		{`{"on":1}`, `field "on": want true or false, got a number`},
		{`{"opts":[]}`, `field "opts": want an object, got an array`},
		{`[1]`, `want an object, got an array`},
		{`{"time":`, `unexpected end of JSON input`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			var s sample
			err := json.Unmarshal([]byte(tc.in), &s)
			require.Error(t, err)
			got := Plain(err).Error()
			assert.Equal(t, tc.want, got)
			assert.NotContains(t, got, "int64")
			assert.NotContains(t, got, "json:")
		})
	}
	var m map[string]any
	err := json.Unmarshal([]byte(`[1]`), &m)
	assert.Equal(t, "want an object, got an array", Plain(err).Error())
}

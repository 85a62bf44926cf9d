package live

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAClientTriesItsOwnServerFirstThenTheNextOnes(t *testing.T) {
	addrs := []string{"zk1:1", "zk2:2", "zk3:3"}
	type try struct {
		server     string
		retryStart bool
	}
	tests := []struct {
		name      string
		first     int
		connectAt int // the try after which the client connects (-1: never)
		want      []try
	}{
		{"own server zk2, then zk3, zk1, and a pause once all were tried", 1, -1,
			[]try{{"zk2:2", false}, {"zk3:3", false}, {"zk1:1", false}, {"zk2:2", true}}},
		{"connected to zk3: a lost connection moves on to zk1 and the round ends at zk3", 2, 0,
			[]try{{"zk3:3", false}, {"zk1:1", false}, {"zk2:2", false}, {"zk3:3", true}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHosts(addrs, tc.first)
			require.NoError(t, h.Init([]string{"zk3:3", "zk1:1", "zk2:2"}), "go-zookeeper hands over the servers shuffled")
			assert.Equal(t, 3, h.Len())
			var got []try
			for i := range len(tc.want) {
				s, retry := h.Next()
				got = append(got, try{s, retry})
				if i == tc.connectAt {
					h.Connected()
				}
			}
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestHostsRefuseServersOtherThanTheirOwn(t *testing.T) {
	h := newHosts([]string{"zk1:1", "zk2:2"}, 0)
	assert.ErrorContains(t, h.Init([]string{"zk1:1", "zk9:9"}), "was given")
}

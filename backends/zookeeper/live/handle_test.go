package live

import (
	"errors"
	"testing"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"

	"github.com/locklab/locklab/backends/zookeeper"
)

// TestTheServersDefiniteAnswersAreCodes: go-zookeeper's errors for a node
// that is not there or already is are answers of the server, given to the
// recipe as the simulated protocol's codes; other errors stay errors.
func TestTheServersDefiniteAnswersAreCodes(t *testing.T) {
	ok := zookeeper.Response{Code: zookeeper.CodeOK, Path: "/lock/k/n"}
	other := errors.New("zk: not empty")
	tests := []struct {
		name     string
		err      error
		want     zookeeper.Response
		wantsErr error
	}{
		{"success is the answer as it is", nil, ok, nil},
		{"no node", zk.ErrNoNode, zookeeper.Response{Code: zookeeper.CodeNoNode}, nil},
		{"node exists", zk.ErrNodeExists, zookeeper.Response{Code: zookeeper.CodeNodeExists}, nil},
		{"a wrapped no node", errors.Join(errors.New("create"), zk.ErrNoNode), zookeeper.Response{Code: zookeeper.CodeNoNode}, nil},
		{"any other error stays an error, without a code", other, zookeeper.Response{}, other},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := answer(ok, tc.err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.wantsErr, err)
		})
	}
}

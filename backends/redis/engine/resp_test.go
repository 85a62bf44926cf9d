package engine

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCommand(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		args []string
		n    int
		err  error
		bad  bool
	}{
		{name: "array", in: "*2\r\n$3\r\nGET\r\n$1\r\nk\r\nrest", args: []string{"GET", "k"}, n: 20},
		{name: "empty bulk", in: "*1\r\n$0\r\n\r\n", args: []string{""}, n: 10},
		{name: "inline", in: "PING hi\r\n", args: []string{"PING", "hi"}, n: 9},
		{name: "partial header", in: "*2\r", err: ErrIncomplete},
		{name: "partial bulk", in: "*1\r\n$5\r\nab", err: ErrIncomplete},
		{name: "missing element", in: "*2\r\n$1\r\na\r\n", err: ErrIncomplete},
		{name: "not a bulk", in: "*1\r\n:1\r\n", bad: true},
		{name: "bad length", in: "*x\r\n", bad: true},
		{name: "no CRLF after bulk", in: "*1\r\n$1\r\nabc", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, n, err := ParseCommand([]byte(tc.in))
			switch {
			case tc.bad:
				require.Error(t, err)
				assert.NotErrorIs(t, err, ErrIncomplete)
			case tc.err != nil:
				require.ErrorIs(t, err, tc.err)
			default:
				require.NoError(t, err)
				assert.Equal(t, tc.args, args)
				assert.Equal(t, tc.n, n)
			}
		})
	}
}

func TestAppendReply(t *testing.T) {
	for _, tc := range []struct {
		name   string
		r      Reply
		v2, v3 string
	}{
		{"bulk", "ab", "$2\r\nab\r\n", "$2\r\nab\r\n"},
		{"status", Status("OK"), "+OK\r\n", "+OK\r\n"},
		{"int", int64(-3), ":-3\r\n", ":-3\r\n"},
		{"nil", nil, "$-1\r\n", "_\r\n"},
		{"error", &Error{Msg: "ERR x\ny"}, "-ERR x y\r\n", "-ERR x y\r\n"},
		{"array", []Reply{"a", int64(1), nil}, "*3\r\n$1\r\na\r\n:1\r\n$-1\r\n", "*3\r\n$1\r\na\r\n:1\r\n_\r\n"},
		{"map", Map{{"proto", int64(3)}}, "*2\r\n$5\r\nproto\r\n:3\r\n", "%1\r\n$5\r\nproto\r\n:3\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.v2, string(AppendReply(nil, tc.r, 2)))
			assert.Equal(t, tc.v3, string(AppendReply(nil, tc.r, 3)))
		})
	}
}

func TestSession(t *testing.T) {
	s := NewSession(New(), 7)
	assert.Equal(t, 2, s.Proto())
	r := s.Exec(0, []string{"HELLO", "3", "SETNAME", "c1"})
	require.IsType(t, Map{}, r)
	assert.Equal(t, 3, s.Proto())
	assert.Equal(t, "c1", s.Exec(0, []string{"CLIENT", "GETNAME"}))
	assert.Equal(t, Status("OK"), s.Exec(0, []string{"CLIENT", "SETINFO", "LIB-NAME", "go-redis"}))
	assert.Equal(t, Status("OK"), s.Exec(1000, []string{"SET", "k", "v", "PX", "10"}))
	assert.Equal(t, "v", s.Exec(1005, []string{"GET", "k"}))
	assert.Nil(t, s.Exec(1011, []string{"GET", "k"}))
	assert.IsType(t, &Error{}, s.Exec(0, []string{"HELLO", "4"}))
	assert.IsType(t, &Error{}, s.Exec(0, []string{"MULTI"}))
	assert.IsType(t, &Error{}, s.Exec(0, []string{"SELECT", "1"}))
	s.Exec(0, []string{"QUIT"})
	assert.True(t, s.Quit)
}

// FuzzParseCommand: any input parses, asks for more, or is refused; never
// a panic, and a parsed command never takes more than the input.
func FuzzParseCommand(f *testing.F) {
	for _, s := range []string{"*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", "PING\r\n", "*1\r\n$-1\r\n", "*3\r\n$1\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		args, n, err := ParseCommand(b)
		if err != nil {
			return
		}
		if n <= 0 || n > len(b) {
			t.Fatalf("took %d of %d bytes", n, len(b))
		}
		_ = AppendReply(nil, argsReply(args), 3)
	})
}

func argsReply(args []string) Reply {
	out := make([]Reply, len(args))
	for i, a := range args {
		out[i] = a
	}
	return out
}

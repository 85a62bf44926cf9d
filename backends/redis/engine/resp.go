package engine

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The RESP front end: the wire protocol a Redis client (go-redis, rueidis,
// redis-cli) speaks, on top of the engine. ParseCommand reads one command
// from what a connection received, AppendReply writes a reply in RESP2 or
// RESP3, and Session is one connection's state (the protocol HELLO chose)
// with the connection-level commands the engine itself does not have.

// ErrIncomplete is ParseCommand's answer when buf holds only part of a
// command: read more and call again.
var ErrIncomplete = errors.New("resp: incomplete command")

// maxBulk bounds one argument's length, as redis-server's proto-max-bulk-len
// (512 MB) does; a smaller bound keeps a corrupt stream from allocating.
const maxBulk = 64 << 20

// maxArgs bounds a command's argument count.
const maxArgs = 1 << 20

// ParseCommand reads one command from the start of buf: a RESP array of
// bulk strings (what clients send) or an inline command (a line of words,
// as telnet sends). It returns the command's arguments and how many bytes
// it took; ErrIncomplete when buf ends inside the command; another error
// for a stream that is not RESP (the connection cannot go on).
func ParseCommand(buf []byte) (args []string, n int, err error) {
	if len(buf) == 0 {
		return nil, 0, ErrIncomplete
	}
	if buf[0] != '*' {
		line, rest, ok := cutLine(buf)
		if !ok {
			return nil, 0, ErrIncomplete
		}
		return strings.Fields(string(line)), len(buf) - len(rest), nil
	}
	line, rest, ok := cutLine(buf[1:])
	if !ok {
		return nil, 0, ErrIncomplete
	}
	count, perr := strconv.Atoi(string(line))
	if perr != nil || count > maxArgs {
		return nil, 0, fmt.Errorf("resp: invalid multibulk length %q", line)
	}
	args = make([]string, 0, max(count, 0))
	for range count {
		if len(rest) == 0 {
			return nil, 0, ErrIncomplete
		}
		if rest[0] != '$' {
			return nil, 0, fmt.Errorf("resp: expected '$', got %q", rest[0])
		}
		line, after, ok := cutLine(rest[1:])
		if !ok {
			return nil, 0, ErrIncomplete
		}
		size, perr := strconv.Atoi(string(line))
		if perr != nil || size < 0 || size > maxBulk {
			return nil, 0, fmt.Errorf("resp: invalid bulk length %q", line)
		}
		if len(after) < size+2 {
			return nil, 0, ErrIncomplete
		}
		if after[size] != '\r' || after[size+1] != '\n' {
			return nil, 0, fmt.Errorf("resp: bulk string of %d bytes not followed by CRLF", size)
		}
		args = append(args, string(after[:size]))
		rest = after[size+2:]
	}
	return args, len(buf) - len(rest), nil
}

// cutLine splits b at its first CRLF.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 0 {
		return nil, b, false
	}
	return b[:i], b[i+2:], true
}

// Map is a RESP3 map reply (HELLO's answer), its entries in order; in RESP2
// it is written as a flat array of keys and values.
type Map []MapEntry

// MapEntry is one key and value of a Map.
type MapEntry struct {
	Key   string
	Value Reply
}

// AppendReply appends r to dst in protocol proto (2 or 3): string as a bulk
// string, Status as a simple string, int64 as an integer, nil as a nil bulk
// string (RESP2) or null (RESP3), []Reply as an array, *Error as an error,
// Map as a map (RESP3) or a flat array (RESP2).
func AppendReply(dst []byte, r Reply, proto int) []byte {
	switch v := r.(type) {
	case nil:
		if proto >= 3 {
			return append(dst, "_\r\n"...)
		}
		return append(dst, "$-1\r\n"...)
	case string:
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(v)), 10)
		dst = append(dst, "\r\n"...)
		dst = append(dst, v...)
		return append(dst, "\r\n"...)
	case Status:
		return append(append(append(dst, '+'), oneLine(string(v))...), "\r\n"...)
	case int64:
		return append(strconv.AppendInt(append(dst, ':'), v, 10), "\r\n"...)
	case int:
		return AppendReply(dst, int64(v), proto)
	case *Error:
		return append(append(append(dst, '-'), oneLine(v.Msg)...), "\r\n"...)
	case []Reply:
		dst = strconv.AppendInt(append(dst, '*'), int64(len(v)), 10)
		dst = append(dst, "\r\n"...)
		for _, e := range v {
			dst = AppendReply(dst, e, proto)
		}
		return dst
	case Map:
		if proto >= 3 {
			dst = strconv.AppendInt(append(dst, '%'), int64(len(v)), 10)
		} else {
			dst = strconv.AppendInt(append(dst, '*'), int64(2*len(v)), 10)
		}
		dst = append(dst, "\r\n"...)
		for _, e := range v {
			dst = AppendReply(dst, e.Key, proto)
			dst = AppendReply(dst, e.Value, proto)
		}
		return dst
	}
	panic(fmt.Sprintf("engine: no RESP form for a reply of type %T", r))
}

// oneLine keeps a simple string or error on one line, as redis-server does.
func oneLine(s string) string {
	return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
}

// Session is one client connection's state in front of a DB: the protocol
// version (RESP2 until HELLO 3) and the name CLIENT SETNAME or HELLO gave.
// It answers the connection-level commands a client sends when it connects
// (HELLO, AUTH, SELECT 0, CLIENT SETNAME/GETNAME/SETINFO/ID, QUIT, RESET,
// READONLY) and passes every other command to the DB. Commands a lock
// library does not need (SUBSCRIBE, MULTI, WATCH, CLIENT TRACKING, other
// databases than 0) get an error reply that says so.
type Session struct {
	db    *DB
	id    int64
	proto int
	name  string
	// Quit is set once the client sent QUIT: close the connection after the reply.
	Quit bool
}

// NewSession returns the state of connection id to db, in RESP2.
func NewSession(db *DB, id int64) *Session { return &Session{db: db, id: id, proto: 2} }

// Proto is the connection's protocol version (2 or 3).
func (s *Session) Proto() int { return s.proto }

// SetDB points the session at another data set (the instance restarted
// from its disk): the connection keeps its protocol.
func (s *Session) SetDB(db *DB) { s.db = db }

// Exec runs one command at now (Unix milliseconds on the server's wall clock).
func (s *Session) Exec(now int64, args []string) Reply {
	if len(args) == 0 {
		return errorf("ERR empty command")
	}
	switch strings.ToLower(args[0]) {
	case "hello":
		return s.hello(args[1:])
	case "auth":
		return Status("OK")
	case "select":
		if len(args) != 2 {
			return arityError("select")
		}
		if args[1] != "0" {
			return errorf("ERR the simulated instance has database 0 only")
		}
		return Status("OK")
	case "client":
		return s.client(args[1:])
	case "quit":
		s.Quit = true
		return Status("OK")
	case "reset":
		s.proto, s.name = 2, ""
		return Status("RESET")
	case "readonly", "readwrite":
		return Status("OK")
	case "subscribe", "psubscribe", "ssubscribe", "multi", "exec", "watch", "unwatch", "discard", "monitor":
		return errorf("ERR the simulated instance does not implement " + strings.ToUpper(args[0]))
	}
	return s.db.Do(now, args...)
}

// hello answers HELLO [protover [AUTH user pass] [SETNAME name]].
func (s *Session) hello(args []string) Reply {
	proto := s.proto
	if len(args) > 0 {
		p, err := strconv.Atoi(args[0])
		if err != nil {
			return errorf("ERR Protocol version is not an integer or out of range")
		}
		if p != 2 && p != 3 {
			return errorf("NOPROTO unsupported protocol version")
		}
		proto = p
		args = args[1:]
	}
	for len(args) > 0 {
		switch strings.ToLower(args[0]) {
		case "auth":
			if len(args) < 3 {
				return errSyntax
			}
			args = args[3:]
		case "setname":
			if len(args) < 2 {
				return errSyntax
			}
			s.name, args = args[1], args[2:]
		default:
			return errorf("ERR Syntax error in HELLO option '" + args[0] + "'")
		}
	}
	s.proto = proto
	return Map{
		{"server", "redis"}, {"version", "7.0.0"}, {"proto", int64(proto)}, {"id", s.id},
		{"mode", "standalone"}, {"role", "master"}, {"modules", []Reply{}},
	}
}

// client answers the CLIENT subcommands a client sends on connecting.
func (s *Session) client(args []string) Reply {
	if len(args) == 0 {
		return arityError("client")
	}
	switch strings.ToLower(args[0]) {
	case "setname":
		if len(args) != 2 {
			return arityError("client|setname")
		}
		s.name = args[1]
		return Status("OK")
	case "getname":
		if s.name == "" {
			return nil
		}
		return s.name
	case "setinfo":
		return Status("OK")
	case "id":
		return s.id
	}
	return errorf("ERR the simulated instance does not implement CLIENT " + strings.ToUpper(args[0]))
}

package redis

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
)

// CommandErrors is one deployment's record of the error replies its
// instances gave to Commands that a lock does not expect to meet: an error
// of a script (any error an EVAL, EVALSHA or their read-only forms
// answered, but NOSCRIPT, which a client answers by sending the script) and
// an unknown command. A lock turns such a reply into a failed call, so the
// history shows only failures; Notes says what the servers answered, for
// the run's notes. Its zero value records nothing; use NewCommandErrors.
type CommandErrors struct {
	seen  map[string]*commandError
	order []*commandError // in the order first answered
}

// commandError is one error text and what it answered.
type commandError struct {
	msg     string
	command string // the command's name, upper case
	count   int
	client  string // the client first answered
	at      time.Duration
}

// NewCommandErrors returns an empty record.
func NewCommandErrors() *CommandErrors { return &CommandErrors{seen: map[string]*commandError{}} }

// unexpected reports whether the error reply msg to a command named name
// is one CommandErrors records.
func unexpected(name, msg string) bool {
	switch strings.ToLower(name) {
	case "eval", "evalsha", "eval_ro", "evalsha_ro":
		return !strings.HasPrefix(msg, "NOSCRIPT ")
	}
	return strings.HasPrefix(msg, "ERR unknown command ")
}

// note records the reply msg to args, answered to client at true time at,
// when it is one CommandErrors records.
func (e *CommandErrors) note(args []string, msg, client string, at time.Duration) {
	if e == nil || e.seen == nil || len(args) == 0 || !unexpected(args[0], msg) {
		return
	}
	c := e.seen[msg]
	if c == nil {
		c = &commandError{msg: msg, command: strings.ToUpper(args[0]), client: client, at: at}
		e.seen[msg] = c
		e.order = append(e.order, c)
	}
	c.count++
}

// Count is how many replies were recorded.
func (e *CommandErrors) Count() int {
	if e == nil {
		return 0
	}
	n := 0
	for _, c := range e.order {
		n += c.count
	}
	return n
}

// maxNoted bounds the distinct error texts a note names.
const maxNoted = 3

// Notes says, in one note, how many such replies the servers gave and the
// most frequent texts (with the command, the client first answered and
// when); none when there were none. An error that a script called a
// command the server does not know says that the simulated Redis may lack
// it (package engine lists the commands it implements).
func (e *CommandErrors) Notes() []string {
	n := e.Count()
	if n == 0 {
		return nil
	}
	by := slices.Clone(e.order)
	slices.SortStableFunc(by, func(a, b *commandError) int { return cmp.Compare(b.count, a.count) })
	parts := make([]string, 0, maxNoted+1)
	unknown := false
	for _, c := range by[:min(len(by), maxNoted)] {
		parts = append(parts, fmt.Sprintf("%d× %s %q (first to %s at %s)", c.count, c.command, c.msg, c.client, history.FormatTime(int64(c.at))))
	}
	for _, c := range by {
		unknown = unknown || strings.Contains(c.msg, "Unknown Redis command") || strings.HasPrefix(c.msg, "ERR unknown command ")
	}
	if len(by) > maxNoted {
		parts = append(parts, fmt.Sprintf("%d other error text(s)", len(by)-maxNoted))
	}
	note := fmt.Sprintf("Redis answered %d of the lock's scripts or commands with an error, which the lock's calls returned as failures: %s",
		n, strings.Join(parts, "; "))
	if unknown {
		note += "; an unknown command is one redis-server 7.0 does not have or one the simulated Redis does not implement (package backends/redis/engine lists the commands it implements)"
	}
	return []string{note}
}

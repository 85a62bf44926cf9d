package proc

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// Some servers (postgres) move every child into a session of its own, out
// of the process group that Pause, Resume and Kill signal. The Tree
// methods reach those children too: they signal the process, its group,
// and every descendant found through /proc.

// PauseTree stops the process and every descendant (SIGSTOP), the parent
// first so that it forks no new child meanwhile.
func (p *Process) PauseTree() error {
	if err := p.Pause(); err != nil {
		return err
	}
	return signalPids(descendants(p.Pid()), syscall.SIGSTOP)
}

// ResumeTree continues what PauseTree stopped (SIGCONT), the children first.
func (p *Process) ResumeTree() error {
	if err := signalPids(descendants(p.Pid()), syscall.SIGCONT); err != nil {
		return err
	}
	return p.Resume()
}

// KillTree kills the process and every descendant at once (SIGKILL: a
// crash of the whole server) and waits, up to wait, until all are gone.
func (p *Process) KillTree(wait time.Duration) error {
	kids := descendants(p.Pid())
	_ = p.signal(syscall.SIGSTOP) // no fork between the listing and the kill
	kids = append(kids, descendants(p.Pid())...)
	if err := p.Kill(); err != nil {
		return err
	}
	_ = signalPids(kids, syscall.SIGKILL)
	deadline := time.Now().Add(wait)
	for _, pid := range kids {
		for running(pid) {
			if time.Now().After(deadline) {
				return fmt.Errorf("kill %s: child %d still running after %v", p.Name, pid, wait)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return nil
}

// Descendants lists the pids of the process's living descendants.
func (p *Process) Descendants() []int { return descendants(p.Pid()) }

func signalPids(pids []int, sig syscall.Signal) error {
	var errs []error
	for _, pid := range pids {
		if err := syscall.Kill(pid, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			errs = append(errs, fmt.Errorf("signal %d: %w", pid, err))
		}
	}
	return errors.Join(errs...)
}

// running reports whether pid exists and is not a zombie.
func running(pid int) bool {
	st, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, state, ok := parseStat(st)
	return ok && state != 'Z' && state != 'X'
}

// descendants lists the living descendants of root (children before
// grandchildren), from /proc.
func descendants(root int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	children := map[int][]int{}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		ppid, state, ok := parseStat(st)
		if !ok || state == 'Z' || state == 'X' {
			continue
		}
		children[ppid] = append(children[ppid], pid)
	}
	var out []int
	queue := []int{root}
	for len(queue) > 0 {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c)
		}
		queue = queue[1:]
	}
	return out
}

// parseStat reads the parent pid and the state from a /proc/<pid>/stat
// line ("pid (comm) S ppid ..."; comm may hold spaces and parentheses).
func parseStat(b []byte) (ppid int, state byte, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	if err != nil {
		return 0, 0, false
	}
	return ppid, f[0][0], true
}

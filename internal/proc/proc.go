// Package proc starts and stops the real server processes of live mode
// (redis-server, etcd, ZooKeeper's JVM, postgres) so that none outlives the
// run that started it.
//
// Every process is started in a process group of its own (so a signal
// reaches the server and every child it forked), with its output in a log
// file in the run directory, and with a parent-death signal: if the harness
// itself is killed (SIGKILL, a crash), the kernel kills the process too. A
// Group owns the processes of one run; Close stops them all (SIGTERM, then
// SIGKILL after a grace period). StopOnSignal makes SIGINT/SIGTERM close
// every open Group before the harness exits.
//
// Pause and Resume send SIGSTOP/SIGCONT to the whole group: the real-server
// form of a process pause (a GC pause of the server). Bytes sent to a
// stopped process wait in its socket buffers and are read on resume, so a
// pause is not a partition (see internal/tcpproxy for those).
//
// Members are the named servers of one system (etcd's members,
// ZooKeeper's servers) within a Group: a fault schedule pauses, resumes,
// crashes and restarts them by name.
//
// This package is live-only: nothing simulated imports it.
package proc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Spec says how to start one server process.
type Spec struct {
	// Name identifies the process in errors and names its log file
	// (<Group dir>/<Name>.log). Required, unique within a Group.
	Name string
	// Path is the executable (see Binary for finding one with a clear
	// error).
	Path string
	// Args are the arguments after the executable's name.
	Args []string
	// Env is added to the harness's environment (KEY=VALUE).
	Env []string
	// Dir is the working directory; default: the Group's directory.
	Dir string
	// User, when set, runs the process as that system user (postgres
	// refuses to run as root). Empty: the harness's own user.
	User string
}

// Process is one running (or exited) server process.
type Process struct {
	Name string
	// Log is the path of the file holding its stdout and stderr.
	Log string

	cmd    *exec.Cmd
	exited chan struct{}
	err    error // the wait result, set before exited is closed

	mu     sync.Mutex
	paused bool
}

// Pid is the process's id (also its process group's id).
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited is closed when the process has exited.
func (p *Process) Exited() <-chan struct{} { return p.exited }

// Alive reports whether the process has not exited yet.
func (p *Process) Alive() bool {
	select {
	case <-p.exited:
		return false
	default:
		return true
	}
}

// ExitErr is the process's exit status once Exited is closed (nil: it
// exited with status 0).
func (p *Process) ExitErr() error {
	<-p.exited
	return p.err
}

// Pause stops every process of the group (SIGSTOP).
func (p *Process) Pause() error { return p.setPaused(true) }

// Resume continues a paused group (SIGCONT).
func (p *Process) Resume() error { return p.setPaused(false) }

// setPaused pauses the group (SIGSTOP) or resumes it (SIGCONT) and records
// which.
func (p *Process) setPaused(paused bool) error {
	sig, verb := syscall.SIGCONT, "resume"
	if paused {
		sig, verb = syscall.SIGSTOP, "pause"
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.signal(sig); err != nil {
		return fmt.Errorf("%s %s: %w", verb, p.Name, err)
	}
	p.paused = paused
	return nil
}

// Kill kills the group at once (SIGKILL: a crash) and waits for the
// process to exit.
func (p *Process) Kill() error {
	if !p.Alive() {
		return nil
	}
	if err := p.signal(syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill %s: %w", p.Name, err)
	}
	<-p.exited
	return nil
}

// Stop asks the group to exit (SIGTERM; a paused group is continued so it
// can), and kills it after grace.
func (p *Process) Stop(grace time.Duration) error {
	if !p.Alive() {
		return nil
	}
	_ = p.signal(syscall.SIGTERM)
	_ = p.signal(syscall.SIGCONT)
	select {
	case <-p.exited:
		return nil
	case <-time.After(grace):
	}
	return p.Kill()
}

// signal sends sig to the process group; a group that is gone is not an
// error once the process has exited.
func (p *Process) signal(sig syscall.Signal) error {
	err := syscall.Kill(-p.cmd.Process.Pid, sig)
	if errors.Is(err, syscall.ESRCH) && !p.Alive() {
		return nil
	}
	return err
}

// Group is the set of processes of one live run, with their logs in one
// directory. It is safe for concurrent use.
type Group struct {
	dir   string
	grace time.Duration

	mu     sync.Mutex
	closed bool
	procs  []*Process
}

// NewGroup makes a Group whose logs go to dir (created if missing). Close
// it when the run ends; StopOnSignal closes it on SIGINT/SIGTERM.
func NewGroup(dir string) (*Group, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("server directory: %w", err)
	}
	g := &Group{dir: dir, grace: 3 * time.Second}
	register(g)
	return g, nil
}

// Dir is the Group's directory.
func (g *Group) Dir() string { return g.dir }

// Start starts a process described by spec in its own process group.
func (g *Group) Start(spec Spec) (*Process, error) {
	if spec.Name == "" || spec.Path == "" {
		return nil, fmt.Errorf("start: a process needs a name and a path (got %q, %q)", spec.Name, spec.Path)
	}
	g.mu.Lock()
	closed := g.closed
	g.mu.Unlock()
	if closed {
		return nil, fmt.Errorf("start %s: the run's servers are being stopped", spec.Name)
	}
	logPath := filepath.Join(g.dir, spec.Name+".log")
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: log: %w", spec.Name, err)
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Env = append(os.Environ(), spec.Env...)
	cmd.Dir = spec.Dir
	if cmd.Dir == "" {
		cmd.Dir = g.dir
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if spec.User != "" {
		cred, err := credential(spec.User)
		if err != nil {
			logf.Close()
			return nil, fmt.Errorf("start %s: %w", spec.Name, err)
		}
		cmd.SysProcAttr.Credential = cred
	}
	p := &Process{Name: spec.Name, Log: logPath, cmd: cmd, exited: make(chan struct{})}
	if err := startLocked(cmd); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s (%s): %w", spec.Name, spec.Path, err)
	}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	g.mu.Lock()
	g.procs = append(g.procs, p)
	closed = g.closed
	g.mu.Unlock()
	if closed { // Close ran while we started: do not leave this one behind
		_ = p.Kill()
		return nil, fmt.Errorf("start %s: the run's servers are being stopped", spec.Name)
	}
	return p, nil
}

// Processes lists the processes started so far, in start order.
func (g *Group) Processes() []*Process {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]*Process(nil), g.procs...)
}

// Close stops every process of the Group (SIGTERM, SIGKILL after a grace
// period of 3 s) and waits for them. It is safe to call more than once.
func (g *Group) Close() {
	g.mu.Lock()
	g.closed = true
	procs := append([]*Process(nil), g.procs...)
	g.mu.Unlock()
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = p.Stop(g.grace)
		}()
	}
	wg.Wait()
	unregister(g)
}

func credential(name string) (*syscall.Credential, error) {
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("run as user %q: %w", name, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("run as user %q: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("run as user %q: gid %q: %w", name, u.Gid, err)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
}

// The parent-death signal fires when the *thread* that started the child
// exits, and Go may retire threads: every child is started from one
// goroutine locked to a thread that never exits.
var (
	starterOnce sync.Once
	starts      chan startReq
)

type startReq struct {
	cmd  *exec.Cmd
	done chan error
}

func startLocked(cmd *exec.Cmd) error {
	starterOnce.Do(func() {
		starts = make(chan startReq)
		go func() {
			runtime.LockOSThread() // never unlocked: the thread lives as long as the harness
			for r := range starts {
				r.done <- r.cmd.Start()
			}
		}()
	})
	done := make(chan error, 1)
	starts <- startReq{cmd: cmd, done: done}
	return <-done
}

// Binary finds an executable on PATH or at one of the given absolute
// paths, and otherwise says which Debian package provides it.
func Binary(name, debianPackage string, paths ...string) (string, error) {
	for _, p := range paths {
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", &MissingError{Binary: name, Package: debianPackage}
}

// MissingError says that a server binary is not installed.
type MissingError struct {
	Binary  string
	Package string
}

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s not found: install the Debian package %s (apt-get install -y --no-install-recommends %s)",
		e.Binary, e.Package, e.Package)
}

// FreePorts reserves n distinct free TCP ports on 127.0.0.1 (by binding and
// releasing them; a server that then fails to bind should be retried on
// fresh ports).
func FreePorts(n int) ([]int, error) {
	ls := make([]net.Listener, 0, n)
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// WaitReady polls ready every 10 ms until it returns nil, the timeout
// passes, the context ends or p (if not nil) exits; the error names what
// was awaited and ends with the last probe error.
func WaitReady(ctx context.Context, what string, p *Process, timeout time.Duration, ready func() error) error {
	deadline := time.Now().Add(timeout)
	var last error
	for {
		if last = ready(); last == nil {
			return nil
		}
		if p != nil && !p.Alive() {
			return fmt.Errorf("%s: the process exited (%v) before it was ready; see %s: %w", what, p.err, p.Log, last)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not ready after %s: %w", what, timeout, last)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// The open Groups, closed by StopOnSignal's handler.
var (
	openMu sync.Mutex
	open   = map[*Group]struct{}{}
)

func register(g *Group) {
	openMu.Lock()
	open[g] = struct{}{}
	openMu.Unlock()
}

func unregister(g *Group) {
	openMu.Lock()
	delete(open, g)
	openMu.Unlock()
}

// CloseAll closes every open Group (the processes of every run in
// progress).
func CloseAll() {
	openMu.Lock()
	gs := make([]*Group, 0, len(open))
	for g := range open {
		gs = append(gs, g)
	}
	openMu.Unlock()
	var wg sync.WaitGroup
	for _, g := range gs {
		wg.Add(1)
		go func() { defer wg.Done(); g.Close() }()
	}
	wg.Wait()
}

// StopOnSignal returns a context that ends on SIGINT or SIGTERM: the run
// using it stops and closes its Group. A second signal, or a cleanup that
// takes over 10 s, kills every process of every open Group and exits the
// harness with status 130 (SIGINT) or 143 (SIGTERM). stop releases the
// signal handling.
func StopOnSignal(parent context.Context) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	quit := make(chan struct{})
	go func() {
		select {
		case <-quit:
			return
		case sig := <-sigs:
			// The run sees its context end, stops its clients and closes its Group.
			// A second signal, or a cleanup that takes over 10 s, kills what is left.
			cancel()
			code := 130
			if sig == syscall.SIGTERM {
				code = 143
			}
			select {
			case <-sigs:
			case <-time.After(10 * time.Second):
			case <-quit:
				return
			}
			killAll()
			os.Exit(code)
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(quit)
		cancel()
	}
}

// killAll kills every process of every open Group at once.
func killAll() {
	openMu.Lock()
	defer openMu.Unlock()
	for g := range open {
		for _, p := range g.Processes() {
			_ = syscall.Kill(-p.Pid(), syscall.SIGKILL)
		}
	}
}

package redislive

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/locklab/locklab/backends/redis"
	"github.com/locklab/locklab/internal/proc"
)

// The libfaketime preload that works with Debian's redis-server (LIVE.md
// 2b): plain libfaketime deadlocks in jemalloc's start-up; glibc's malloc
// debug library in front of it answers the early allocations.
const (
	mallocDebug = "/usr/lib/x86_64-linux-gnu/libc_malloc_debug.so.0"
	libfaketime = "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1"
)

// redisServer is one redis-server process (an instance, or the Sentinel).
type redisServer struct {
	name     string
	bin      string
	port     int
	dir      string   // data directory
	args     []string // after the common ones
	sentinel bool     // a redis-sentinel (its config file is args[0])
	clock    string   // libfaketime timestamp file ("" no faking)

	mu     sync.Mutex
	offset time.Duration // the faked wall clock's offset
	p      *proc.Process
	starts int
	kills  int // crashes so far
}

func (s *redisServer) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// start starts the server (again) and waits until it answers on its port as
// itself: INFO's process_id is its pid. A port reserved by binding and
// releasing it can be taken meanwhile by another process — another run's
// redis-server answers PING there just as well while ours fails to bind and
// exits — so readiness asks who answered, and such a start fails as a
// server that exited before it was ready (retryDeploy tries again).
func (s *redisServer) start(ctx context.Context, g *proc.Group, timeout time.Duration) error {
	s.mu.Lock()
	s.starts++
	name := s.name
	if s.starts > 1 {
		name = fmt.Sprintf("%s.%d", s.name, s.starts)
	}
	s.mu.Unlock()
	var args []string
	if s.sentinel {
		args = append(args, s.args...)
	} else {
		args = append([]string{"--port", strconv.Itoa(s.port), "--bind", "127.0.0.1", "--daemonize", "no", "--dir", s.dir,
			"--save", "", "--logfile", "", "--repl-diskless-sync-delay", "0"}, s.args...)
	}
	var env []string
	if s.clock != "" {
		env = []string{"LD_PRELOAD=" + mallocDebug + " " + libfaketime, "FAKETIME_TIMESTAMP_FILE=" + s.clock, "FAKETIME_NO_CACHE=1"}
	}
	p, err := g.Start(proc.Spec{Name: name, Path: s.bin, Args: args, Env: env, Dir: s.dir})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.p = p
	s.mu.Unlock()
	cl := goredis.NewClient(&goredis.Options{Addr: s.addr(), Protocol: 2, MaxRetries: -1, DisableIndentity: true,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
	defer cl.Close()
	return proc.WaitReady(ctx, s.name+" answers as itself", p, timeout, func() error {
		c, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		info, err := cl.Info(c, "server").Result()
		if err != nil {
			return err
		}
		if pid := infoField(info, "process_id"); pid != strconv.Itoa(p.Pid()) {
			return fmt.Errorf("%s is answered by another process (pid %s; the server's is %d): its port was taken", s.addr(), pid, p.Pid())
		}
		return nil
	})
}

func (s *redisServer) process() *proc.Process {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p
}

// killed is the number of crashes so far.
func (s *redisServer) killed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kills
}

// kill crashes the server (SIGKILL) and cleans libfaketime's files of it.
func (s *redisServer) kill() error {
	s.mu.Lock()
	s.kills++
	s.mu.Unlock()
	p := s.process()
	if p == nil {
		return nil
	}
	err := p.Kill()
	cleanFaketime(p.Pid())
	return err
}

// jump moves the server's wall clock by d (its libfaketime file).
func (s *redisServer) jump(d time.Duration) error {
	if s.clock == "" {
		return fmt.Errorf("%s runs without libfaketime", s.name)
	}
	s.mu.Lock()
	s.offset += d
	off := s.offset
	s.mu.Unlock()
	return writeAtomic(s.clock, fmt.Sprintf("%+.3f\n", off.Seconds()))
}

func writeAtomic(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return fmt.Errorf("faketime file: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("faketime file: %w", err)
	}
	return nil
}

// cleanFaketime removes the shared-memory files libfaketime leaves for pid
// when the process does not run its destructors (a SIGKILL).
func cleanFaketime(pid int) {
	for _, f := range []string{fmt.Sprintf("/dev/shm/faketime_shm_%d", pid), fmt.Sprintf("/dev/shm/sem.faketime_sem_%d", pid)} {
		_ = os.Remove(f)
	}
}

// persistenceArgs are redis-server's flags for a persistence option.
func persistenceArgs(p redis.Persistence) []string {
	switch p {
	case redis.PersistAlways:
		return []string{"--appendonly", "yes", "--appendfsync", "always"}
	case redis.PersistEverySec:
		return []string{"--appendonly", "yes", "--appendfsync", "everysec"}
	}
	return []string{"--appendonly", "no"}
}

// redisVersion asks redis-server for its version ("7.0.15").
func redisVersion(ctx context.Context, addr string) string {
	cl := goredis.NewClient(&goredis.Options{Addr: addr, Protocol: 2, MaxRetries: -1, DisableIndentity: true})
	defer cl.Close()
	c, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	info, err := cl.Info(c, "server").Result()
	if err != nil {
		return "unknown"
	}
	if v := infoField(info, "redis_version"); v != "" {
		return v
	}
	return "unknown"
}

// infoField is the value of field in the text of an INFO reply ("" when
// absent).
func infoField(info, field string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v
		}
	}
	return ""
}

func dataDir(root, name string) (string, error) {
	d, err := filepath.Abs(filepath.Join(root, name))
	if err != nil {
		return "", fmt.Errorf("redis data directory: %w", err)
	}
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("redis data directory: %w", err)
	}
	return d, nil
}

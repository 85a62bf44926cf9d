package cli

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/locklab/locklab/internal/proc"
)

// redisUnder lists the redis-server processes whose working directory (their
// data directory) is under dir, with the port each listens on (redis
// rewrites its command line to "redis-server 127.0.0.1:PORT").
func redisUnder(dir string) (pids, ports []int) {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, err := os.Readlink(filepath.Join("/proc", e.Name(), "cwd"))
		if err != nil || !strings.HasPrefix(cwd, dir) {
			continue
		}
		raw, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		for _, f := range strings.Fields(strings.ReplaceAll(string(raw), "\x00", " ")) {
			if port, err := strconv.Atoi(strings.TrimPrefix(f, "127.0.0.1:")); err == nil && strings.HasPrefix(f, "127.0.0.1:") {
				pids, ports = append(pids, pid), append(ports, port)
			}
		}
	}
	return pids, ports
}

// exited reports whether pid no longer runs (a zombie waiting for its
// reaper counts: it runs nothing and holds no port).
func exited(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && len(s) > i+2 && s[i+2] == 'Z'
}

// TestALiveRunLeavesNoServerBehind runs `locklab run --live --system
// redlock` (five real redis-server processes) as a separate process, stops
// it with SIGINT, SIGTERM or SIGKILL once its servers run, and requires that
// no server process and no listening port is left.
func TestALiveRunLeavesNoServerBehind(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	if _, err := proc.Binary("redis-server", "redis-server", "/usr/bin/redis-server"); err != nil {
		t.Skip(err)
	}
	self, err := os.Executable()
	require.NoError(t, err)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			dir, err := filepath.EvalSymlinks(t.TempDir())
			require.NoError(t, err)
			cmd := exec.Command(self, "run", "--live", "--system", "redlock", "--time", "1m", "--seed", "1",
				"--out", filepath.Join(dir, "run"))
			cmd.Env = append(os.Environ(), "LOCKLAB_AS_CLI=1")
			cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
			require.NoError(t, cmd.Start())
			var pids, ports []int
			require.Eventually(t, func() bool {
				pids, ports = redisUnder(dir)
				return len(pids) == 5
			}, 30*time.Second, 50*time.Millisecond, "the five Redlock instances start")
			time.Sleep(500 * time.Millisecond) // the clients are at work
			require.NoError(t, cmd.Process.Signal(sig))
			_ = cmd.Wait()
			for i, pid := range pids {
				assert.Eventually(t, func() bool { return exited(pid) }, 15*time.Second, 20*time.Millisecond,
					"redis-server pid %d outlived locklab (%v)", pid, sig)
				assert.Eventually(t, func() bool {
					c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", ports[i]), 200*time.Millisecond)
					if err == nil {
						c.Close()
					}
					return err != nil
				}, 15*time.Second, 20*time.Millisecond, "port %d still listens after locklab stopped (%v)", ports[i], sig)
			}
			if sig != syscall.SIGKILL {
				// A signalled run still writes what it saw, servers' logs included.
				assert.FileExists(t, filepath.Join(dir, "run", "results.json"))
				assert.DirExists(t, filepath.Join(dir, "run", "servers"))
			}
		})
	}
}

// TestALiveRunWithARelativeOutDirectory: the servers' directories are made
// absolute before the servers start, so a relative --out works for a server
// that runs in a directory of its own (ZooKeeper's JVM refused its config
// when the paths in it were relative to the harness's directory).
func TestALiveRunWithARelativeOutDirectory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: starts real servers")
	}
	if _, err := os.Stat("/usr/share/java/zookeeper.jar"); err != nil {
		t.Skip("ZooKeeper is not installed: install the Debian package zookeeper")
	}
	self, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	cmd := exec.Command(self, "run", "--live", "--system", "zookeeper", "--time", "3s", "--seed", "1", "--out", "run")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LOCKLAB_AS_CLI=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.FileExists(t, filepath.Join(dir, "run", "results.json"))
	assert.DirExists(t, filepath.Join(dir, "run", "servers"))
}

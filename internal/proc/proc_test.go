package proc

import (
	"bufio"
	"context"
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
)

// The test binary plays two more parts, chosen by environment variables:
// a "server" (listens on a loopback port, writes "pid port" to a file and
// waits forever) and a "harness" (starts two servers through a Group and
// waits for a signal with StopOnSignal).
func TestMain(m *testing.M) {
	switch {
	case os.Getenv("PROC_TEST_SERVER") != "":
		server(os.Getenv("PROC_TEST_SERVER"))
	case os.Getenv("PROC_TEST_HARNESS") != "":
		harness(os.Getenv("PROC_TEST_HARNESS"))
	}
	os.Exit(m.Run())
}

func server(file string) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		os.Exit(3)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if err := os.WriteFile(file+".tmp", fmt.Appendf(nil, "%d %d\n", os.Getpid(), port), 0o644); err != nil {
		os.Exit(3)
	}
	if err := os.Rename(file+".tmp", file); err != nil {
		os.Exit(3)
	}
	for {
		c, err := l.Accept()
		if err == nil {
			c.Close()
		}
	}
}

func harness(dir string) {
	ctx, stop := StopOnSignal(context.Background())
	defer stop()
	g, err := NewGroup(dir)
	if err != nil {
		os.Exit(3)
	}
	self, _ := os.Executable()
	for i := range 2 {
		name := fmt.Sprintf("s%d", i)
		if _, err := g.Start(Spec{Name: name, Path: self, Env: []string{"PROC_TEST_HARNESS=", "PROC_TEST_SERVER=" + filepath.Join(dir, name+".addr")}}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
	}
	<-ctx.Done()
	g.Close()
	os.Exit(0)
}

// children reads the servers' pids and ports once both have written them.
func children(t *testing.T, dir string) (pids, ports []int) {
	t.Helper()
	for _, name := range []string{"s0", "s1"} {
		var line string
		require.Eventually(t, func() bool {
			b, err := os.ReadFile(filepath.Join(dir, name+".addr"))
			line = string(b)
			return err == nil
		}, 10*time.Second, 10*time.Millisecond, "server %s did not start", name)
		f := strings.Fields(line)
		require.Len(t, f, 2)
		pid, _ := strconv.Atoi(f[0])
		port, _ := strconv.Atoi(f[1])
		pids, ports = append(pids, pid), append(ports, port)
	}
	return pids, ports
}

// gone reports whether pid no longer runs (a zombie waiting for a reaper
// counts as gone: it holds no port and runs no code).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	defer f.Close()
	line, _ := bufio.NewReader(f).ReadString('\n')
	i := strings.LastIndexByte(line, ')')
	return i > 0 && len(line) > i+2 && line[i+2] == 'Z'
}

func listening(port int) bool {
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), 200*time.Millisecond)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

func TestNoServerOutlivesItsHarness(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
	}{
		{"SIGINT", syscall.SIGINT},
		{"SIGTERM", syscall.SIGTERM},
		{"killed harness (SIGKILL)", syscall.SIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			h := exec.Command(self, "-test.run=^$")
			h.Env = append(os.Environ(), "PROC_TEST_HARNESS="+dir)
			require.NoError(t, h.Start())
			pids, ports := children(t, dir)
			for i := range pids {
				require.False(t, gone(pids[i]), "server %d runs", pids[i])
				require.True(t, listening(ports[i]), "server listens on %d", ports[i])
			}
			require.NoError(t, h.Process.Signal(tc.sig))
			_ = h.Wait()
			for i := range pids {
				assert.Eventually(t, func() bool { return gone(pids[i]) }, 10*time.Second, 10*time.Millisecond,
					"server pid %d outlived its harness", pids[i])
				assert.Eventually(t, func() bool { return !listening(ports[i]) }, 10*time.Second, 10*time.Millisecond,
					"port %d still listens after the harness stopped", ports[i])
			}
		})
	}
}

func TestPauseStopsTheServerAndResumeContinuesIt(t *testing.T) {
	self, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	g, err := NewGroup(dir)
	require.NoError(t, err)
	defer g.Close()
	p, err := g.Start(Spec{Name: "s0", Path: self, Env: []string{"PROC_TEST_SERVER=" + filepath.Join(dir, "s0.addr")}})
	require.NoError(t, err)
	var port int
	require.Eventually(t, func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "s0.addr"))
		if err != nil {
			return false
		}
		f := strings.Fields(string(b))
		port, _ = strconv.Atoi(f[1])
		return true
	}, 10*time.Second, 10*time.Millisecond)

	require.NoError(t, p.Pause())
	// A stopped server still completes TCP handshakes (the kernel does), but
	// never answers: its accept loop does not run, so the connection is not closed.
	c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	require.NoError(t, err)
	require.NoError(t, c.SetReadDeadline(time.Now().Add(200*time.Millisecond)))
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	assert.True(t, errors.As(err, &ne) && ne.Timeout(), "a paused server does not act: %v", err)

	require.NoError(t, p.Resume())
	require.NoError(t, c.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = c.Read(make([]byte, 1))
	assert.ErrorIs(t, err, errEOF(err), "after resume the server accepts and closes the connection")
	c.Close()

	require.NoError(t, p.Kill())
	assert.False(t, p.Alive())
	assert.Error(t, p.ExitErr(), "a killed process reports its signal")
}

// errEOF returns err when it is io.EOF or a reset (either means the server
// closed the connection), or a sentinel that fails the assertion.
func errEOF(err error) error {
	if err != nil && (err.Error() == "EOF" || errors.Is(err, syscall.ECONNRESET)) {
		return err
	}
	return errors.New("EOF or reset")
}

func TestBinaryNamesTheDebianPackage(t *testing.T) {
	_, err := Binary("locklab-no-such-server", "locklab-no-such-package")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "locklab-no-such-server not found: install the Debian package locklab-no-such-package")
	var me *MissingError
	assert.ErrorAs(t, err, &me)

	self, err := os.Executable()
	require.NoError(t, err)
	got, err := Binary("locklab-no-such-server", "x", "/nonexistent/bin", self)
	require.NoError(t, err)
	assert.Equal(t, self, got)
}

func TestWaitReadyReportsAnEarlyExit(t *testing.T) {
	g, err := NewGroup(t.TempDir())
	require.NoError(t, err)
	defer g.Close()
	p, err := g.Start(Spec{Name: "false", Path: "/bin/false"})
	require.NoError(t, err)
	err = WaitReady(context.Background(), "the server", p, 10*time.Second, func() error { return errors.New("not listening") })
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the server: the process exited")
	assert.Contains(t, err.Error(), "false.log")

	err = WaitReady(context.Background(), "the server", nil, 50*time.Millisecond, func() error { return errors.New("not listening") })
	assert.ErrorContains(t, err, "not ready after 50ms: not listening")
}

func TestFreePortsAreDistinct(t *testing.T) {
	ports, err := FreePorts(5)
	require.NoError(t, err)
	seen := map[int]bool{}
	for _, p := range ports {
		assert.False(t, seen[p], "port %d twice", p)
		seen[p] = true
	}
}

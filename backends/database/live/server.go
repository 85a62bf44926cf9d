package databaselive

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"github.com/locklab/locklab/internal/proc"
)

// Package is the Debian package that provides the PostgreSQL server.
const Package = "postgresql"

// schema is the database locklab's clients use: unique lock rows (owner,
// expiry from the acquirer's wall clock), the rows SELECT FOR UPDATE locks,
// the protected data with versions, and the grant sequence that numbers
// every grant (the fencing token).
const schema = `
CREATE TABLE locks (name text PRIMARY KEY, owner text NOT NULL, expiry bigint NOT NULL, token bigint NOT NULL);
CREATE TABLE mutex (name text PRIMARY KEY);
CREATE TABLE data (key text PRIMARY KEY, value bigint NOT NULL DEFAULT 0, version bigint NOT NULL DEFAULT 0);
CREATE SEQUENCE grants;
`

// Event is something the server did by itself, read from its log:
// "transaction-aborted" when it ended a connection that was idle (in a
// transaction, or holding session locks) for longer than its timeout.
type Event struct {
	// Conn is the connection's application_name (the client's name for it).
	Conn string
	// InTransaction: the idle-in-transaction timeout ended it (its
	// transaction aborted); otherwise the idle-session timeout did.
	InTransaction bool
}

// Server is a PostgreSQL server that locklab started: initdb'd in its own
// directory, listening on 127.0.0.1 only (no unix socket), run as the
// postgres user when the harness is root. It is safe for concurrent use.
type Server struct {
	dir, data string
	bin       string
	user      string
	port      int
	// connections is max_connections.
	connections int
	group       *proc.Group
	version     string

	mu      sync.Mutex
	proc    *proc.Process
	starts  int
	paused  bool
	onEvent func(Event)
	tail    chan struct{} // closed to stop the log reader
	tailed  sync.WaitGroup
}

// installRoot is where Debian installs PostgreSQL's versions.
var installRoot = "/usr/lib/postgresql"

// Binaries finds postgres and initdb (the newest of /usr/lib/postgresql/*/bin,
// or on PATH); a missing server is a *proc.MissingError naming the package.
func Binaries() (bin string, err error) {
	dirs, _ := filepath.Glob(filepath.Join(installRoot, "*", "bin"))
	slices.SortFunc(dirs, func(a, b string) int { return versionOf(b) - versionOf(a) })
	var paths []string
	for _, d := range dirs {
		paths = append(paths, filepath.Join(d, "postgres"))
	}
	p, err := proc.Binary("postgres", Package, paths...)
	if err != nil {
		return "", err
	}
	bin = filepath.Dir(p)
	if _, err := proc.Binary("initdb", Package, filepath.Join(bin, "initdb")); err != nil {
		return "", err
	}
	return bin, nil
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// Start initializes a database cluster in dir/data and starts postgres on a
// free port for up to clients clients (each uses at most two connections),
// waiting up to setup for it to answer as itself (ping). Its logs go to dir.
// Close stops it.
func Start(ctx context.Context, dir string, setup time.Duration, clients int) (*Server, error) {
	bin, err := Binaries()
	if err != nil {
		return nil, err
	}
	if dir, err = filepath.Abs(dir); err != nil { // postgres runs in dir: a relative -D would not do
		return nil, fmt.Errorf("postgresql directory: %w", err)
	}
	s := &Server{dir: dir, data: filepath.Join(dir, "data"), bin: bin, connections: 2*clients + 10}
	s.user = RunUser() // postgres refuses to run as root
	if err := s.prepareDir(); err != nil {
		return nil, err
	}
	if s.group, err = proc.NewGroup(dir); err != nil {
		return nil, err
	}
	if err := s.initdb(ctx); err != nil {
		s.group.Close()
		return nil, err
	}
	if err := s.startProcess(ctx, setup, true); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// prepareDir makes the data directory, owned by the user postgres runs as,
// and checks that this user can reach it.
func (s *Server) prepareDir() error {
	if err := os.MkdirAll(s.data, 0o700); err != nil {
		return fmt.Errorf("postgresql data directory: %w", err)
	}
	if s.user == "" {
		return nil
	}
	u, err := user.Lookup(s.user)
	if err != nil {
		return fmt.Errorf("postgresql runs as user %q when locklab runs as root: %w", s.user, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if err := os.Chown(s.data, uid, gid); err != nil {
		return fmt.Errorf("postgresql data directory: %w", err)
	}
	if err := os.Chown(s.dir, uid, gid); err != nil { // the server's own directory (logs are opened by locklab)
		return fmt.Errorf("postgresql directory: %w", err)
	}
	// The run's directory (locklab made it) must let the postgres user pass,
	// and so must every directory above it.
	parent := filepath.Dir(s.dir)
	if st, err := os.Stat(parent); err == nil && st.Mode().Perm()&0o001 == 0 {
		if err := os.Chmod(parent, st.Mode().Perm()|0o001); err != nil {
			return fmt.Errorf("postgresql directory: %w", err)
		}
	}
	if err := searchable(filepath.Dir(parent)); err != nil {
		return fmt.Errorf("the user %s cannot reach %s: %w", s.user, s.data, err)
	}
	return nil
}

// RunUser is the system user PostgreSQL runs as: postgres when locklab runs
// as root (postgres refuses to run as root), "" (locklab's own user) otherwise.
func RunUser() string {
	if os.Geteuid() == 0 {
		return "postgres"
	}
	return ""
}

// CheckReachable says, before any server starts, whether the user
// PostgreSQL runs as can reach a data directory that locklab makes under
// dir: dir and every directory above it must be searchable by others
// (mode o+x) when that user is not locklab's own. A directory not made yet
// is skipped (locklab makes it 0755). The error names the directory that
// stops the user.
func CheckReachable(dir string) error {
	if RunUser() == "" {
		return nil
	}
	if err := searchable(dir); err != nil {
		return fmt.Errorf("PostgreSQL runs as the user %s (locklab runs as root), which cannot reach %s: %w", RunUser(), dir, err)
	}
	return nil
}

// searchable checks that dir's existing ancestors, dir included, are
// searchable by others.
func searchable(dir string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return fmt.Errorf("postgresql directory: %w", err)
	}
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(d)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return fmt.Errorf("postgresql directory: %w", err)
		case st.Mode().Perm()&0o001 == 0:
			return fmt.Errorf("directory %s (mode %04o) is not searchable by others (chmod o+x it, or put the run directory elsewhere)", d, st.Mode().Perm())
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// initdb fills the data directory: with a copy of the cluster a previous
// run's initdb made (kept in the user's cache directory, as Go keeps its
// build cache: initdb takes seconds, a copy a few tens of milliseconds),
// or with initdb itself, whose result is then cached.
func (s *Server) initdb(ctx context.Context) error {
	tmpl := s.template()
	if tmpl != "" {
		if _, err := os.Stat(filepath.Join(tmpl, "PG_VERSION")); err == nil {
			if err := copyTree(ctx, tmpl, s.data); err == nil {
				return nil
			}
		}
	}
	p, err := s.group.Start(proc.Spec{Name: "initdb", Path: filepath.Join(s.bin, "initdb"), User: s.user,
		Args: []string{"-D", s.data, "-U", "locklab", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"}})
	if err != nil {
		return fmt.Errorf("postgresql initdb: %w", err)
	}
	select {
	case <-p.Exited():
	case <-ctx.Done():
		_ = p.Kill()
		return fmt.Errorf("postgresql initdb: %w", ctx.Err())
	}
	if err := p.ExitErr(); err != nil {
		return fmt.Errorf("postgresql initdb failed (%v); see %s", err, p.Log)
	}
	if tmpl != "" {
		// Cache it: a copy beside the template, then a rename (atomic: a
		// concurrent run sees the whole template or none).
		tmp := fmt.Sprintf("%s.tmp-%d", tmpl, os.Getpid())
		_ = os.RemoveAll(tmp)
		if err := os.MkdirAll(filepath.Dir(tmpl), 0o755); err == nil && copyTree(ctx, s.data, tmp) == nil {
			if os.Rename(tmp, tmpl) != nil {
				_ = os.RemoveAll(tmp)
			}
		} else {
			_ = os.RemoveAll(tmp)
		}
	}
	return nil
}

// template is where the initdb'd cluster of this server version and user
// is cached ("" if there is no cache directory).
func (s *Server) template() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	who := s.user
	if who == "" {
		who = strconv.Itoa(os.Geteuid())
	}
	return filepath.Join(dir, "locklab", fmt.Sprintf("postgresql-%d-%s-initdb", versionOf(s.bin), who))
}

// copyTree copies the directory from into to (created if missing), keeping
// modes and owners (cp -a).
func copyTree(ctx context.Context, from, to string) error {
	if err := os.MkdirAll(to, 0o700); err != nil {
		return err
	}
	out, err := exec.CommandContext(ctx, "cp", "-a", from+"/.", to+"/").CombinedOutput()
	if err != nil {
		return fmt.Errorf("cp -a %s %s: %w: %s", from, to, err, out)
	}
	return nil
}

// args are postgres's settings: loopback only, no unix socket, no fsync
// (a kill of the server keeps what it committed; only a machine crash would
// lose it), and the connection's name in every log line.
func (s *Server) args() []string {
	return []string{"-D", s.data, "-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=",
		"-c", "fsync=off", "-c", "full_page_writes=off", "-c", "synchronous_commit=on",
		"-c", "shared_buffers=16MB", "-c", "max_connections=" + strconv.Itoa(s.connections), "-c", "autovacuum=off",
		"-c", "dynamic_shared_memory_type=mmap", "-c", "log_line_prefix=%m [%p] %a|",
		"-c", "log_min_messages=warning"}
}

// startProcess starts postgres (on a fresh port if the first start fails to
// bind) and waits until it answers; fresh also creates the schema.
func (s *Server) startProcess(ctx context.Context, setup time.Duration, fresh bool) error {
	for try := 0; ; try++ {
		if fresh || s.port == 0 {
			ports, err := proc.FreePorts(1)
			if err != nil {
				return err
			}
			s.port = ports[0]
		}
		s.mu.Lock()
		s.starts++
		name := "postgres"
		if s.starts > 1 {
			name = fmt.Sprintf("postgres-%d", s.starts)
		}
		s.mu.Unlock()
		p, err := s.group.Start(proc.Spec{Name: name, Path: filepath.Join(s.bin, "postgres"), User: s.user, Args: s.args()})
		if err != nil {
			return fmt.Errorf("postgresql: %w", err)
		}
		s.mu.Lock()
		s.proc = p
		s.paused = false
		s.mu.Unlock()
		s.follow(p.Log)
		err = proc.WaitReady(ctx, "postgresql on "+s.Addr(), p, setup, func() error { return s.ping(ctx) })
		if err == nil {
			break
		}
		_ = p.KillTree(5 * time.Second)
		if ctx.Err() != nil || !fresh || try == 2 {
			return err
		}
	}
	if s.version == "" {
		conn, err := s.Connect(ctx, s.Addr(), "locklab-setup", nil)
		if err != nil {
			return fmt.Errorf("postgresql: %w", err)
		}
		defer conn.Close(context.Background())
		if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&s.version); err != nil {
			return fmt.Errorf("postgresql: server version: %w", err)
		}
		if fresh {
			if _, err := conn.Exec(ctx, schema); err != nil {
				return fmt.Errorf("postgresql: create the schema: %w", err)
			}
		}
	}
	return nil
}

// ping asks the server on s's port for its data directory: ready when the
// answer is s's own. A port reserved by binding and releasing it can be
// taken meanwhile by another process — another run's postgres answers there
// just as well while ours fails to bind and exits — and a run must not go on
// against it.
func (s *Server) ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	conn, err := s.Connect(ctx, s.Addr(), "locklab-ready", nil)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	var data string
	if err := conn.QueryRow(ctx, "SHOW data_directory").Scan(&data); err != nil {
		return err
	}
	if filepath.Clean(data) != filepath.Clean(s.data) {
		return fmt.Errorf("%s is answered by another postgres (data directory %s, ours is %s): its port was taken", s.Addr(), data, s.data)
	}
	return nil
}

// Addr is the server's address (host:port).
func (s *Server) Addr() string { return fmt.Sprintf("127.0.0.1:%d", s.port) }

// Version is the server's version ("15.8 (Debian 15.8-0+deb12u1)").
func (s *Server) Version() string { return s.version }

// Dir is the server's directory (data/ and the logs).
func (s *Server) Dir() string { return s.dir }

// Processes are the server's processes started so far (initdb, each postgres).
func (s *Server) Processes() []*proc.Process { return s.group.Processes() }

// Connect opens a connection to addr (the server's or a proxy's) named
// name (application_name), with the given session settings.
func (s *Server) Connect(ctx context.Context, addr, name string, params map[string]string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://locklab@%s/postgres?sslmode=disable", addr))
	if err != nil {
		return nil, fmt.Errorf("postgresql connection config: %w", err)
	}
	cfg.RuntimeParams["application_name"] = name
	for k, v := range params {
		cfg.RuntimeParams[k] = v
	}
	cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to postgresql at %s: %w", addr, err)
	}
	return conn, nil
}

// OnEvent sets the function told of every Event (nil: none).
func (s *Server) OnEvent(fn func(Event)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onEvent = fn
}

// Pause stops every process of the server (SIGSTOP): the postmaster and
// each backend, which postgres puts in sessions of their own.
func (s *Server) Pause() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.proc.PauseTree(); err != nil {
		return fmt.Errorf("postgresql: %w", err)
	}
	s.paused = true
	return nil
}

// Resume continues a paused server (SIGCONT).
func (s *Server) Resume() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.paused = false
	if err := s.proc.ResumeTree(); err != nil {
		return fmt.Errorf("postgresql: %w", err)
	}
	return nil
}

// Crash kills every process of the server at once (SIGKILL). Committed
// rows survive (they are in the kernel's page cache: fsync is off, but a
// process kill is not a machine crash); connections and locks do not.
func (s *Server) Crash() error {
	s.mu.Lock()
	p := s.proc
	s.paused = false
	s.mu.Unlock()
	if err := p.KillTree(5 * time.Second); err != nil {
		return fmt.Errorf("postgresql crash: %w", err)
	}
	return nil
}

// Restart starts postgres again on the same data directory and port (it
// recovers from its write-ahead log); a server that runs is left as it is.
func (s *Server) Restart(ctx context.Context, setup time.Duration) error {
	s.mu.Lock()
	alive := s.proc.Alive()
	s.mu.Unlock()
	if alive { // overlapping crashes: an earlier one's restart came first
		return nil
	}
	return s.startProcess(ctx, setup, false)
}

// Alive reports whether the server's postmaster runs.
func (s *Server) Alive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil && s.proc.Alive()
}

// Close stops the server (a fast shutdown: sessions end, transactions
// roll back), kills what is left after 5 s, and removes the shared memory
// a killed server leaves behind. It is safe to call more than once.
func (s *Server) Close() {
	s.mu.Lock()
	p, paused := s.proc, s.paused
	s.paused = false
	s.mu.Unlock()
	if p != nil && p.Alive() {
		if paused {
			_ = p.ResumeTree()
		}
		_ = unix.Kill(p.Pid(), unix.SIGINT) // fast shutdown
		select {
		case <-p.Exited():
		case <-time.After(5 * time.Second):
			_ = p.KillTree(5 * time.Second)
		}
	}
	s.group.Close()
	s.removeSharedMemory()
	s.stopFollowing()
}

// removeSharedMemory removes the System V segment of a postmaster that
// died without cleaning up (its postmaster.pid is still there).
func (s *Server) removeSharedMemory() {
	b, err := os.ReadFile(filepath.Join(s.data, "postmaster.pid"))
	if err != nil {
		return
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 7 {
		return
	}
	f := strings.Fields(lines[6]) // "key id"
	if len(f) != 2 {
		return
	}
	id, err := strconv.Atoi(f[1])
	if err != nil {
		return
	}
	var ds unix.SysvShmDesc
	if _, err := unix.SysvShmCtl(id, unix.IPC_STAT, &ds); err == nil && ds.Nattch == 0 {
		_, _ = unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	}
	_ = os.Remove(filepath.Join(s.data, "postmaster.pid"))
}

// follow reads the log file of the current postgres process for the
// server's own events (a stop of the previous reader first).
func (s *Server) follow(path string) {
	s.stopFollowing()
	stop := make(chan struct{})
	s.mu.Lock()
	s.tail = stop
	s.mu.Unlock()
	s.tailed.Add(1)
	go func() {
		defer s.tailed.Done()
		f, err := os.Open(path)
		if err != nil {
			return
		}
		defer f.Close()
		r := bufio.NewReader(f)
		var partial string
		for {
			line, err := r.ReadString('\n')
			partial += line
			if err == nil {
				s.logLine(partial)
				partial = ""
				continue
			}
			if !errors.Is(err, io.EOF) {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
}

func (s *Server) stopFollowing() {
	s.mu.Lock()
	stop := s.tail
	s.tail = nil
	s.mu.Unlock()
	if stop != nil {
		close(stop)
	}
	s.tailed.Wait()
}

// logLine turns a log line into an Event: postgres logs "<time> [pid]
// <application_name>|FATAL:  terminating connection due to idle-in-transaction timeout".
func (s *Server) logLine(line string) {
	var e Event
	switch {
	case strings.Contains(line, "terminating connection due to idle-in-transaction timeout"):
		e.InTransaction = true
	case strings.Contains(line, "terminating connection due to idle-session timeout"):
	default:
		return
	}
	head, _, _ := strings.Cut(line, "|")
	if i := strings.LastIndex(head, "] "); i >= 0 {
		e.Conn = head[i+2:]
	}
	s.mu.Lock()
	fn := s.onEvent
	s.mu.Unlock()
	if fn != nil {
		fn(e)
	}
}

package live

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/backends/zookeeper"
	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/liveform"
)

// Jar is where Debian's zookeeper package puts the server's classes.
const Jar = "/usr/share/java/zookeeper.jar"

// classpath is the server's classpath after its conf directory: the server
// jar (its manifest pulls in netty, jute, ...) and an slf4j binding, without
// which the server logs nothing at all (LIVE.md section 6).
var classpath = []string{Jar, "/usr/share/java/slf4j-log4j12.jar", "/usr/share/java/log4j-1.2.jar"}

// jvmFlags keep each JVM small: the default heap is a quarter of the RAM.
// The election's notification back-off is shortened (200 ms doubling to
// 60 s by default): servers that start at once on a busy machine find
// each other's election ports closed at first, and the default back-off
// alone kept a fresh ensemble without a leader for seconds.
var jvmFlags = []string{"-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-XX:-UsePerfData",
	"-Dzookeeper.fastleader.minNotificationInterval=50", "-Dzookeeper.fastleader.maxNotificationInterval=400"}

// Java finds the JVM and ZooKeeper's jar, or says which Debian package is
// missing.
func Java() (string, error) {
	java, err := proc.Binary("java", "default-jre-headless", "/usr/bin/java")
	if err != nil {
		return "", err
	}
	for _, j := range classpath {
		if _, err := os.Stat(j); err != nil {
			return "", &proc.MissingError{Binary: j, Package: "zookeeper"}
		}
	}
	return java, nil
}

// server is one ZooKeeper server (a JVM running QuorumPeerMain): its name,
// command line and process, its client address and data directory.
type server struct {
	*proc.Member
	clientAddr string
	dataDir    string
}

// Ensemble is a real ZooKeeper ensemble on loopback (zk1..zkN; one server
// runs standalone), started by locklab with its configuration, data and
// logs in its directory.
type Ensemble struct {
	opts    zookeeper.Options
	group   *proc.Members
	servers []*server
	peers   *peerLinks // nil for a standalone server
}

// Start starts an o.Servers ensemble under dir and waits, within setup (or
// until ctx ends), until every server serves (srvr says standalone, leader
// or follower). A server that dies on start (a port taken meanwhile) makes
// it start again on fresh ports, once.
func Start(ctx context.Context, o zookeeper.Options, dir string, setup time.Duration) (*Ensemble, error) {
	java, err := Java()
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(setup)
	for attempt := 1; ; attempt++ {
		e, err := start(ctx, java, o, filepath.Join(dir, fmt.Sprintf("attempt%d", attempt)), deadline)
		if err == nil || attempt == 2 || ctx.Err() != nil || !errors.Is(err, errDied) {
			return e, err
		}
	}
}

var errDied = errors.New("a server exited on start")

func start(ctx context.Context, java string, o zookeeper.Options, dir string, deadline time.Time) (*Ensemble, error) {
	g, err := proc.NewGroup(dir)
	if err != nil {
		return nil, err
	}
	e := &Ensemble{opts: o, group: proc.NewMembers("zookeeper", "server", g)}
	ok := false
	defer func() {
		if !ok {
			e.Close()
		}
	}()
	n := o.Servers
	ports, err := proc.FreePorts(3 * n)
	if err != nil {
		return nil, err
	}
	if n > 1 {
		e.peers = newPeerLinks()
		for i := range n {
			for j := range n {
				if i != j {
					err := e.peers.add(zookeeper.ServerName(i+1), zookeeper.ServerName(j+1),
						fmt.Sprintf("127.0.0.1:%d", ports[3*j+1]), fmt.Sprintf("127.0.0.1:%d", ports[3*j+2]))
					if err != nil {
						return nil, err
					}
				}
			}
		}
	}
	for i := range n {
		name := zookeeper.ServerName(i + 1)
		sdir := filepath.Join(dir, name)
		var quorum []string
		for j := range n {
			q, el := ports[3*j+1], ports[3*j+2]
			if j != i {
				q, el = e.peers.ports(name, zookeeper.ServerName(j+1))
			}
			quorum = append(quorum, fmt.Sprintf("server.%d=127.0.0.1:%d:%d", j+1, q, el))
		}
		if err := writeConfig(sdir, i+1, ports[3*i], o, quorum); err != nil {
			return nil, err
		}
		e.servers = append(e.servers, e.add(java, name, sdir, ports[3*i]))
	}
	if err := e.group.StartAll(); err != nil {
		return nil, err
	}
	for _, s := range e.servers {
		if err := s.waitServing(ctx, time.Until(deadline)); err != nil {
			if !s.Process().Alive() {
				return nil, fmt.Errorf("%w: %w", errDied, err)
			}
			return nil, err
		}
	}
	ok = true
	return e, nil
}

// add declares server name, configured in sdir (see writeConfig) to serve
// clients on clientPort.
func (e *Ensemble) add(java, name, sdir string, clientPort int) *server {
	return &server{Member: e.group.Add(serverSpec(java, name, sdir)),
		clientAddr: fmt.Sprintf("127.0.0.1:%d", clientPort), dataDir: filepath.Join(sdir, "data")}
}

// serverSpec is the command line of server name, configured in sdir.
func serverSpec(java, name, sdir string) proc.Spec {
	return proc.Spec{Name: name, Path: java, Dir: sdir, Args: append(slices.Clone(jvmFlags),
		"-cp", strings.Join(append([]string{filepath.Join(sdir, "conf")}, classpath...), ":"),
		"-Dzookeeper.log.dir="+sdir, "-Dzookeeper.root.logger=INFO,CONSOLE",
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", filepath.Join(sdir, "conf", "zoo.cfg"))}
}

// waitServing waits until the server serves: srvr reports its mode, and conf
// its own data directory — a server whose client port was taken (between
// FreePorts and its start) by another ensemble's server exits, and that
// server answers srvr on the port.
func (s *server) waitServing(ctx context.Context, timeout time.Duration) error {
	return proc.WaitReady(ctx, "zookeeper "+s.Name()+" serving", s.Process(), timeout, func() error {
		if _, err := Mode(s.clientAddr); err != nil {
			return err
		}
		return s.answersAsItself()
	})
}

// answersAsItself checks that the server answering on s's client address has
// s's data directory (conf prints it, with its version-2 subdirectory).
func (s *server) answersAsItself() error {
	b, err := FourLetter(s.clientAddr, "conf")
	if err != nil {
		return err
	}
	for _, line := range strings.Split(b, "\n") {
		if dir, ok := strings.CutPrefix(strings.TrimSpace(line), "dataDir="); ok {
			if dir != s.dataDir && !strings.HasPrefix(dir, s.dataDir+string(filepath.Separator)) {
				return fmt.Errorf("%s answered by another process: its dataDir is %s, not %s", s.clientAddr, dir, s.dataDir)
			}
			return nil
		}
	}
	return fmt.Errorf("conf: no dataDir in %q", strings.TrimSpace(b))
}

// writeConfig writes server id's conf/zoo.cfg, conf/log4j.properties and
// data/myid. Timing: tickTime is the tick option; syncLimit (how long a
// follower may lag before the leader drops it, and a follower waits for
// its leader) is the election timeout in ticks; sessions may last from 2
// ticks to well past the session-timeout option.
func writeConfig(dir string, id, clientPort int, o zookeeper.Options, quorum []string) error {
	for _, d := range []string{"conf", "data"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return fmt.Errorf("zookeeper config: %w", err)
		}
	}
	tick := max(o.Tick.Milliseconds(), 1)
	syncLimit := max(2, (o.ElectionTimeout.Milliseconds()+tick-1)/tick)
	initLimit := max(syncLimit, (5000+tick-1)/tick)
	cfg := []string{
		fmt.Sprintf("tickTime=%d", tick),
		fmt.Sprintf("initLimit=%d", initLimit),
		fmt.Sprintf("syncLimit=%d", syncLimit),
		"dataDir=" + filepath.Join(dir, "data"),
		fmt.Sprintf("clientPort=%d", clientPort),
		"clientPortAddress=127.0.0.1",
		"admin.enableServer=false",
		"4lw.commands.whitelist=srvr,stat,mntr,ruok,cons,conf",
		"maxClientCnxns=0",
		"preAllocSize=1024",
		fmt.Sprintf("minSessionTimeout=%d", 2*tick),
		fmt.Sprintf("maxSessionTimeout=%d", max(20*tick, 4*o.SessionTimeout.Milliseconds())),
	}
	if len(quorum) > 1 {
		cfg = append(cfg, quorum...)
	}
	log4j := "log4j.rootLogger=INFO, CONSOLE\nlog4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender\n" +
		"log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout\n" +
		"log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} [myid:%X{myid}] - %-5p [%t:%C{1}@%L] - %m%n\n"
	for name, text := range map[string]string{
		"conf/zoo.cfg":          strings.Join(cfg, "\n") + "\n",
		"conf/log4j.properties": log4j,
		"data/myid":             fmt.Sprintf("%d\n", id),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			return fmt.Errorf("zookeeper config: %w", err)
		}
	}
	return nil
}

var modeRE = regexp.MustCompile(`(?m)^Mode: (standalone|leader|follower|observer)`)

// Mode asks the server at addr for its mode with the four-letter word
// srvr (ruok answers imok before the server serves, LIVE.md section 6).
func Mode(addr string) (string, error) {
	b, err := Srvr(addr)
	if err != nil {
		return "", err
	}
	m := modeRE.FindStringSubmatch(b)
	if m == nil {
		return "", fmt.Errorf("srvr: %q", strings.TrimSpace(b))
	}
	return m[1], nil
}

var versionRE = regexp.MustCompile(`(?m)^Zookeeper version: ([^\s,]+)`)

// ServerVersion is the version srvr reports for the first server that
// answers ("" if none does).
func (e *Ensemble) ServerVersion() string {
	for _, s := range e.servers {
		if b, err := Srvr(s.clientAddr); err == nil {
			if m := versionRE.FindStringSubmatch(b); m != nil {
				// Debian's build leaves its git placeholder in: 3.8.0-${mvngit.commit.id}.
				v, _, _ := strings.Cut(m[1], "-$")
				return v
			}
		}
	}
	return ""
}

// Srvr is the four-letter word srvr's answer from the server at addr.
func Srvr(addr string) (string, error) { return FourLetter(addr, "srvr") }

// FourLetter is the answer to the four-letter word from the server at addr
// (one the configuration whitelists).
func FourLetter(addr, word string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(300 * time.Millisecond))
	if _, err := io.WriteString(c, word); err != nil {
		return "", err
	}
	b, err := io.ReadAll(bufio.NewReader(c))
	if err != nil && len(b) == 0 {
		return "", err
	}
	return string(b), nil
}

func serverName(s *server) string { return s.Name() }

func serverAddr(s *server) string { return s.clientAddr }

// Names are the servers' names, zk1..zkN.
func (e *Ensemble) Names() []string { return liveform.Each(e.servers, serverName) }

// Addrs are the servers' client addresses.
func (e *Ensemble) Addrs() []string { return liveform.Each(e.servers, serverAddr) }

// ServerAt names the server listening at addr.
func (e *Ensemble) ServerAt(addr string) (string, bool) {
	s, ok := liveform.Lookup(e.servers, serverAddr, addr)
	if !ok {
		return "", false
	}
	return s.Name(), true
}

// Leader is the server whose srvr says leader (or standalone); "" if none.
func (e *Ensemble) Leader() string {
	for _, s := range e.servers {
		if m, err := Mode(s.clientAddr); err == nil && (m == "leader" || m == "standalone") {
			return s.Name()
		}
	}
	return ""
}

// Pause stops a server's JVM (SIGSTOP).
func (e *Ensemble) Pause(name string) error { return e.group.Pause(name) }

// Resume continues a paused server (SIGCONT).
func (e *Ensemble) Resume(name string) error { return e.group.Resume(name) }

// Crash kills a server (SIGKILL); its data directory stays.
func (e *Ensemble) Crash(name string) error { return e.group.Crash(name) }

// Restart starts a crashed server again over its data directory.
func (e *Ensemble) Restart(name string) error { return e.group.Restart(name) }

// Cut hangs the connections server from opened to server to (both ways:
// see peerLinks.cut); false if from -> to is not a link between servers.
func (e *Ensemble) Cut(from, to string) bool { return e.peers != nil && e.peers.cut(from, to) }

// Heal undoes Cut.
func (e *Ensemble) Heal(from, to string) {
	if e.peers != nil {
		e.peers.heal(from, to)
	}
}

// Close stops every server and the proxies between them.
func (e *Ensemble) Close() {
	e.group.Close()
	if e.peers != nil {
		e.peers.close()
	}
}

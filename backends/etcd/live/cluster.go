package live

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/locklab/locklab/backends/etcd"
	"github.com/locklab/locklab/internal/proc"
	"github.com/locklab/locklab/liveform"
)

// Binary finds Debian's etcd server (package etcd-server).
func Binary() (string, error) { return proc.Binary("etcd", "etcd-server", "/usr/bin/etcd") }

// member is one etcd server process: its name, command line and process,
// and its addresses.
type member struct {
	*proc.Member
	clientAddr, peer string

	mu sync.Mutex
	id uint64 // raft member id, learnt from its status
}

// Cluster is a real etcd cluster on loopback: members etcd1..etcdN started by
// locklab, with data directories and logs in its directory, and an admin
// client (not gated by faults) for leader look-ups and the lease observer.
type Cluster struct {
	opts    etcd.Options
	group   *proc.Members
	members []*member
	admin   *clientv3.Client
	version string
	dir     string
}

// Start starts the members of an o.Members cluster under dir and waits (within
// setup, or until ctx ends) until every member is healthy and, with
// initial-leader, that member leads.
func Start(ctx context.Context, o etcd.Options, dir string, setup time.Duration) (*Cluster, error) {
	bin, err := Binary()
	if err != nil {
		return nil, err
	}
	g, err := proc.NewGroup(dir)
	if err != nil {
		return nil, err
	}
	c := &Cluster{opts: o, group: proc.NewMembers("etcd", "member", g), dir: dir}
	ok := false
	defer func() {
		if !ok {
			c.Close()
		}
	}()
	ports, err := proc.FreePorts(2 * o.Members)
	if err != nil {
		return nil, err
	}
	names := liveform.ServerNames(o.Members, etcd.MemberName)
	client := func(i int) string { return fmt.Sprintf("127.0.0.1:%d", ports[2*i]) }
	peer := func(i int) string { return fmt.Sprintf("127.0.0.1:%d", ports[2*i+1]) }
	var initial []string
	for i, name := range names {
		initial = append(initial, name+"=http://"+peer(i))
	}
	for i, name := range names {
		c.members = append(c.members, c.add(bin, name, client(i), peer(i), strings.Join(initial, ",")))
	}
	if err := c.group.StartAll(); err != nil {
		return nil, err
	}
	deadline := time.Now().Add(setup)
	for _, m := range c.members {
		if err := c.waitHealthy(ctx, m, time.Until(deadline)); err != nil {
			return nil, err
		}
	}
	c.admin, err = clientv3.New(clientv3.Config{Endpoints: c.Endpoints(), DialTimeout: time.Until(deadline), Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("etcd admin client: %w", err)
	}
	if o.InitialLeader != "" {
		if err := c.transfer(ctx, o.InitialLeader, deadline); err != nil {
			return nil, err
		}
	}
	if out, err := exec.Command(bin, "--version").Output(); err == nil {
		c.version = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	ok = true
	return c, nil
}

// add declares member name of the cluster initial (its --initial-cluster),
// the etcd at bin serving clients at clientAddr and its peers at peer.
func (c *Cluster) add(bin, name, clientAddr, peer, initial string) *member {
	spec := proc.Spec{Name: name, Path: bin, Args: memberArgs(c.opts, c.dir, name, clientAddr, peer, initial)}
	return &member{Member: c.group.Add(spec), clientAddr: clientAddr, peer: peer}
}

// memberArgs are the command line of member name of the cluster initial
// under dir.
func memberArgs(o etcd.Options, dir, name, clientAddr, peer, initial string) []string {
	args := []string{"--name", name, "--data-dir", filepath.Join(dir, name+".etcd"), "--logger", "zap",
		"--listen-client-urls", "http://" + clientAddr, "--advertise-client-urls", "http://" + clientAddr,
		"--listen-peer-urls", "http://" + peer, "--initial-advertise-peer-urls", "http://" + peer,
		"--initial-cluster", initial, "--initial-cluster-state", "new",
		"--initial-cluster-token", "locklab",
		"--heartbeat-interval", fmt.Sprint(o.Tick.Milliseconds()),
		"--election-timeout", fmt.Sprint(o.ElectionTimeout.Milliseconds())}
	if !o.LeaderChangeExtends {
		args = append(args, "--experimental-enable-lease-checkpoint")
	}
	return args
}

// waitHealthy polls the member's HTTP /health (etcdctl's gRPC check adds a
// second of back-off, LIVE.md section 5), then asks the member that answers
// who it is: a member whose client port was taken (between FreePorts and its
// start) by another cluster's etcd exits, and that etcd answers healthy on
// the port; it is ours only if its peer URL is ours.
func (c *Cluster) waitHealthy(ctx context.Context, m *member, timeout time.Duration) error {
	hc := http.Client{Timeout: 500 * time.Millisecond}
	return proc.WaitReady(ctx, "etcd "+m.Name()+" healthy", m.Process(), timeout, func() error {
		resp, err := hc.Get("http://" + m.clientAddr + "/health")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var h struct {
			Health string `json:"health"`
		}
		if err := json.Unmarshal(b, &h); err != nil || h.Health != "true" {
			return fmt.Errorf("/health: %s", strings.TrimSpace(string(b)))
		}
		return m.answersAsItself(&hc)
	})
}

// answersAsItself checks that the etcd answering on m's client address is m:
// the member the answer comes from (the v3 gateway's member list, whose
// header names it) has m's peer URL.
func (m *member) answersAsItself(hc *http.Client) error {
	resp, err := hc.Post("http://"+m.clientAddr+"/v3/cluster/member/list", "application/json", strings.NewReader("{}"))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var list struct {
		Header struct {
			MemberID string `json:"member_id"`
		} `json:"header"`
		Members []struct {
			ID       string   `json:"ID"`
			Name     string   `json:"name"`
			PeerURLs []string `json:"peerURLs"`
		} `json:"members"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return fmt.Errorf("member list: %w: %s", err, strings.TrimSpace(string(b)))
	}
	for _, x := range list.Members {
		if x.ID != list.Header.MemberID {
			continue
		}
		if !slices.Contains(x.PeerURLs, "http://"+m.peer) {
			return fmt.Errorf("%s answered by another process: member %s (%s) with peer URLs %v, not http://%s",
				m.clientAddr, x.Name, x.ID, x.PeerURLs, m.peer)
		}
		return nil
	}
	return fmt.Errorf("member list: the answering member %q is not listed: %s", list.Header.MemberID, strings.TrimSpace(string(b)))
}

// transfer makes name the leader (etcd's MoveLeader), once a leader exists.
func (c *Cluster) transfer(ctx context.Context, name string, deadline time.Time) error {
	return proc.WaitReady(ctx, "etcd leader "+name, nil, time.Until(deadline), func() error {
		leader := c.Leader()
		if leader == name {
			return nil
		}
		target := c.member(name)
		if leader == "" || target == nil || target.id == 0 {
			return fmt.Errorf("leader %q, %s's id unknown", leader, name)
		}
		// MoveLeader must reach the leader itself.
		cli, err := clientv3.New(clientv3.Config{Endpoints: []string{c.member(leader).clientAddr}, Logger: zap.NewNop()})
		if err != nil {
			return err
		}
		defer cli.Close()
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		_, err = cli.MoveLeader(cctx, target.id)
		return err
	})
}

// member is the member called name (nil when none is).
func (c *Cluster) member(name string) *member {
	m, _ := liveform.Lookup(c.members, memberName, name)
	return m
}

func memberName(m *member) string { return m.Name() }

func memberAddr(m *member) string { return m.clientAddr }

// Names are the members' names, etcd1..etcdN.
func (c *Cluster) Names() []string { return liveform.Each(c.members, memberName) }

// Endpoints are the members' client addresses.
func (c *Cluster) Endpoints() []string { return liveform.Each(c.members, memberAddr) }

// ServerAt names the member listening at addr (a client address, with or
// without a scheme).
func (c *Cluster) ServerAt(addr string) (string, bool) {
	addr = strings.TrimPrefix(strings.TrimPrefix(addr, "http://"), "passthrough:///")
	m, ok := liveform.Lookup(c.members, memberAddr, addr)
	if !ok {
		return "", false
	}
	return m.Name(), true
}

// Leader asks every member for its status and returns the one that says it
// leads ("" when none answers so).
func (c *Cluster) Leader() string {
	leader := ""
	for _, m := range c.members {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		st, err := c.admin.Status(ctx, m.clientAddr)
		cancel()
		if err != nil {
			continue
		}
		m.mu.Lock()
		m.id = st.Header.MemberId
		m.mu.Unlock()
		if st.Leader == st.Header.MemberId {
			leader = m.Name()
		}
	}
	return leader
}

// Resolve maps "leader" and "followers" to members at the time of the call.
func (c *Cluster) Resolve(role string) ([]string, bool) {
	switch role {
	case "leader", "followers":
		l := c.Leader()
		if role == "leader" {
			if l == "" {
				return nil, true
			}
			return []string{l}, true
		}
		return slices.DeleteFunc(c.Names(), func(n string) bool { return n == l }), true
	}
	return nil, false
}

// Pause stops a member (SIGSTOP).
func (c *Cluster) Pause(name string) error { return c.group.Pause(name) }

// Resume continues a paused member (SIGCONT).
func (c *Cluster) Resume(name string) error { return c.group.Resume(name) }

// Crash kills a member (SIGKILL); its data directory stays.
func (c *Cluster) Crash(name string) error { return c.group.Crash(name) }

// Restart starts a crashed member again over its data directory.
func (c *Cluster) Restart(name string) error { return c.group.Restart(name) }

// Admin is the cluster's own client (not gated by faults).
func (c *Cluster) Admin() *clientv3.Client { return c.admin }

// ServerVersion is `etcd --version`'s first line.
func (c *Cluster) ServerVersion() string { return c.version }

// Close stops every member and the admin client. Members are killed: a
// member stopped gracefully first tries to hand its leadership over, which
// takes seconds when every member stops at once. Their data directories
// are removed (each holds a 64 MB preallocated WAL, LIVE.md section 5);
// their logs stay.
func (c *Cluster) Close() {
	if c.admin != nil {
		c.admin.Close()
	}
	for _, m := range c.members {
		if p := m.Process(); p != nil {
			_ = p.Kill()
		}
	}
	c.group.Close()
	for _, m := range c.members {
		_ = os.RemoveAll(filepath.Join(c.dir, m.Name()+".etcd"))
	}
}

package databaselive

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"

	simdb "github.com/locklab/locklab/backends/database"
	"github.com/locklab/locklab/internal/tcpproxy"
	"github.com/locklab/locklab/liveform"
	"github.com/locklab/locklab/lockapi"
	"github.com/locklab/locklab/nemesis"
	"github.com/locklab/locklab/scenario"
)

// dbNode is the database's node name (the simulator's).
const dbNode = "db"

// The live form of database: a real PostgreSQL server, a proxy per client
// (what a cut blocks), and the simulated client's recipe on pgx (NewClient).
func init() {
	liveform.Register("database", liveform.Form{
		Note:     "PostgreSQL (Debian package postgresql) with pgx",
		Options:  simdb.Table,
		Describe: describeDatabase,
		Deploy:   liveform.RetryDeploy(deployDatabase),
		// PostgreSQL, run as its own user when locklab runs as root, must
		// pass through the run directory's parent and every directory above.
		UnreachableOut: func(_ scenario.Test, runDir string) string {
			if err := CheckReachable(filepath.Dir(filepath.Clean(runDir))); err != nil {
				return err.Error()
			}
			return ""
		},
	})
}

func describeDatabase(t scenario.Test) (liveform.Description, error) {
	o, err := simdb.Table.Parse(t.SystemOptions)
	if err != nil {
		return liveform.Description{}, err
	}
	if err := o.Validate(); err != nil {
		return liveform.Description{}, err
	}
	return liveform.Description{
		Servers: []string{dbNode},
		Resolve: func(string) ([]string, bool) { return nil, false },
		Refuse:  refuseDatabase,
	}, nil
}

// refuseDatabase says which faults PostgreSQL cannot undergo live.
func refuseDatabase(f nemesis.Fault) string {
	names := append(append(slices.Clone(f.Targets), f.From...), f.To...)
	for _, g := range f.Groups {
		names = append(names, g...)
	}
	onDB := slices.Contains(names, dbNode) || slices.Contains(names, "servers")
	switch {
	case f.Kind == nemesis.ClockJump && onDB:
		return "clock-jump of db: PostgreSQL runs without libfaketime here, and no database lock reads the server's " +
			"clock (unique-row expiries come from the clients' wall clocks): jump a client's clock instead"
	case f.Kind == nemesis.Delay && onDB:
		return "delay on a link of db: PostgreSQL's traffic goes through a TCP proxy per client, which can cut a " +
			"link but not delay its messages (a delay between a client and the storage works)"
	}
	return ""
}

// dbDeployment is PostgreSQL and what locklab put around it for one run.
type dbDeployment struct {
	srv     *Server
	opts    simdb.Options
	proxies map[string]*tcpproxy.Proxy // per client: its link to db
	stopped context.Context            // ends when the run stops

	mu      sync.Mutex
	cuts    map[string]int // per client: active cuts of its link
	clients []*Transport
	record  func(kind string, targets []string, detail string)
	holders map[string]string // advisory: connection -> lock held on it
}

func deployDatabase(d liveform.Deployment) (*liveform.Deployed, error) {
	o, err := simdb.Table.Parse(d.Test.SystemOptions)
	if err != nil {
		return nil, err
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	srv, err := Start(d.Ctx, filepath.Join(d.Dir, dbNode), d.Setup, len(d.Test.ClientNames()))
	if err != nil {
		return nil, err
	}
	// When the run stops, the requests in flight end (a client waiting for a
	// row lock whose holder stopped would otherwise wait its lock timeout).
	stopped, stop := context.WithCancel(context.Background())
	go func() {
		<-d.Net.Done()
		stop()
	}()
	dd := &dbDeployment{srv: srv, opts: o, proxies: map[string]*tcpproxy.Proxy{}, cuts: map[string]int{}, stopped: stopped}
	var once sync.Once
	closeAll := func() { once.Do(dd.close) }
	for _, c := range d.Test.ClientNames() {
		p, err := tcpproxy.New(c+"->"+dbNode, srv.Addr())
		if err != nil {
			closeAll()
			return nil, fmt.Errorf("database: proxy of %s: %w", c, err)
		}
		dd.proxies[c] = p
	}
	srv.OnEvent(dd.serverEvent)
	desc, _ := describeDatabase(d.Test)
	sys := &liveform.Deployed{
		Description: desc,
		NewLock:     dd.newLock,
		Tokens:      o.Mode != simdb.ModeOptimistic,
		Pause:       dd.onDB(srv.Pause),
		Resume:      dd.onDB(srv.Resume),
		Crash:       dd.onDB(srv.Crash),
		Restart:     dd.onDB(func() error { return srv.Restart(d.Ctx, d.Setup) }),
		Cut:         dd.cut,
		Heal:        dd.heal,
		Preset:      dd.preset,
		Events: func(record func(kind string, targets []string, detail string)) {
			dd.mu.Lock()
			dd.record = record
			dd.mu.Unlock()
		},
		Figures: func(time.Duration) map[string]any {
			return map[string]any{"postgresql": map[string]any{"mode": string(o.Mode), "data": string(o.Data()),
				"session": Params(o)}}
		},
		Versions: map[string]string{"postgresql": srv.Version(), "pgx": PgxVersion},
		Close:    closeAll,
	}
	if o.Data() == simdb.ResourceDB {
		sys.Storage = func(l lockapi.Lock) lockapi.Storage { return l.(*simdb.Client) }
	}
	return sys, nil
}

func (dd *dbDeployment) onDB(fn func() error) func(string) error {
	return func(name string) error {
		if name != dbNode {
			return fmt.Errorf("database: %s is not a server (db is)", name)
		}
		return fn()
	}
}

func (dd *dbDeployment) newLock(lc liveform.Client) lockapi.Lock {
	e := lc.Env
	c, t := NewClient(dd.stopped, e, lc.Fork, dd.srv, dd.proxies[e.Name()].Addr(), dd.opts)
	t.OnTakeover = func(detail string) { dd.event("row-taken-over", detail) }
	c.OnTxn(simdb.RecordTxns(lc.NewRecorder, lc.Stopped))
	t.OnHold = func(conn, key string, held bool) {
		dd.mu.Lock()
		defer dd.mu.Unlock()
		if dd.holders == nil {
			dd.holders = map[string]string{}
		}
		if held {
			dd.holders[conn] = key
		} else {
			delete(dd.holders, conn)
		}
	}
	dd.mu.Lock()
	dd.clients = append(dd.clients, t)
	dd.mu.Unlock()
	return c
}

func (dd *dbDeployment) event(kind, detail string) {
	dd.mu.Lock()
	record := dd.record
	dd.mu.Unlock()
	if record != nil {
		record(kind, []string{dbNode}, detail)
	}
}

// serverEvent records a connection the server ended as the simulated
// server does: a transaction aborted, or a session that held advisory
// locks ended.
func (dd *dbDeployment) serverEvent(e Event) {
	if e.InTransaction {
		dd.event("transaction-aborted", fmt.Sprintf("connection %s silent for %v: its transaction aborted "+
			"(idle_in_transaction_session_timeout; its row locks released, its writes discarded)", e.Conn, dd.opts.ConnTimeout))
		return
	}
	dd.mu.Lock()
	key, held := dd.holders[e.Conn]
	delete(dd.holders, e.Conn)
	dd.mu.Unlock()
	if held {
		dd.event("transaction-aborted", fmt.Sprintf("connection %s silent for %v: its session ended "+
			"(idle_session_timeout), advisory locks [%s] released", e.Conn, dd.opts.ConnTimeout, key))
	}
}

// preset writes the workload's initial values into the data rows.
func (dd *dbDeployment) preset(initial map[string]int64) error {
	if dd.opts.Data() != simdb.ResourceDB {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := dd.srv.Connect(ctx, dd.srv.Addr(), "locklab-preset", nil)
	if err != nil {
		return fmt.Errorf("database: preset the data rows: %w", err)
	}
	defer conn.Close(context.Background())
	for _, k := range slices.Sorted(maps.Keys(initial)) {
		if _, err := conn.Exec(ctx, "INSERT INTO data (key, value, version) VALUES ($1, $2, 0)", k, initial[k]); err != nil {
			return fmt.Errorf("database: preset %s: %w", k, err)
		}
	}
	return nil
}

// link is the client whose proxy carries from -> to ("" if none: a link
// PostgreSQL's traffic does not take stays faultnet's).
func (dd *dbDeployment) link(from, to string) string {
	switch {
	case to == dbNode && dd.proxies[from] != nil:
		return from
	case from == dbNode && dd.proxies[to] != nil:
		return to
	}
	return ""
}

// cut hangs the client's proxy (a cut either way hangs both: PostgreSQL's
// protocol is request and reply, so a cut in one direction stops every
// exchange as well).
func (dd *dbDeployment) cut(from, to string) (bool, error) {
	c := dd.link(from, to)
	if c == "" {
		return false, nil
	}
	dd.mu.Lock()
	dd.cuts[c]++
	first := dd.cuts[c] == 1
	dd.mu.Unlock()
	if first {
		dd.proxies[c].Block(tcpproxy.Hang)
	}
	return true, nil
}

func (dd *dbDeployment) heal(from, to string) error {
	c := dd.link(from, to)
	if c == "" {
		return nil
	}
	dd.mu.Lock()
	dd.cuts[c]--
	last := dd.cuts[c] == 0
	dd.mu.Unlock()
	if last {
		dd.proxies[c].Heal()
	}
	return nil
}

func (dd *dbDeployment) close() {
	dd.mu.Lock()
	clients := slices.Clone(dd.clients)
	dd.mu.Unlock()
	for _, p := range dd.proxies {
		p.Heal()
	}
	for _, c := range clients {
		c.Close()
	}
	for _, p := range dd.proxies {
		p.Close()
	}
	dd.srv.Close()
}

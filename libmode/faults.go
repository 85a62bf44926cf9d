package libmode

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/locklab/locklab/backends/redis/engine"
	"github.com/locklab/locklab/history"
	"github.com/locklab/locklab/nemesis"
)

// Fault is a fault library mode injects: PauseClient,
// PauseInCriticalSection, Partition, ClockJump, Crash, Delay.
type Fault interface {
	fmt.Stringer
	check(cfg *Config) error
	// install schedules the fault in w (w.mu held).
	install(w *world, index int)
}

// PauseClient pauses a client from At for For: its connections are frozen
// (nothing it sent or is sent gets through until the pause ends; then it
// all arrives) and so is its workload (the critical section does not move
// on). The library's own timers and goroutines keep running: in a bubble
// a pause is not a stop-the-world pause of the client's process.
type PauseClient struct {
	Client  string
	At, For time.Duration
}

func (p PauseClient) String() string {
	return fmt.Sprintf("pause %s at %v for %v", p.Client, p.At, p.For)
}

func (p PauseClient) check(cfg *Config) error { return checkPause(cfg, p.Client, p.For) }

func (p PauseClient) install(w *world, i int) {
	w.schedule(&event{at: p.At, order: fmt.Sprintf("~fault%03d", i), run: func() { w.pauseNow(p.Client, p.For, "") }})
}

// PauseInCriticalSection pauses the first client (Client, or any when
// empty) that reads the storage inside its critical section at or after
// After, right after its read, for For: Kleppmann's GC pause between the
// read and the write. The pause is what PauseClient's is.
type PauseInCriticalSection struct {
	Client     string
	After, For time.Duration
}

func (p PauseInCriticalSection) String() string {
	who := p.Client
	if who == "" {
		who = "the first holder"
	}
	return fmt.Sprintf("pause %s after its read (from %v) for %v", who, p.After, p.For)
}

func (p PauseInCriticalSection) check(cfg *Config) error {
	if p.Client == "" {
		return checkPause(cfg, "c1", p.For)
	}
	return checkPause(cfg, p.Client, p.For)
}

func (p PauseInCriticalSection) install(w *world, i int) {
	w.holderPauses = append(w.holderPauses, &holderPause{PauseInCriticalSection: p, index: i})
}

type holderPause struct {
	PauseInCriticalSection
	index  int // the fault's index in Config.Faults
	fired  bool
	client string // the client it paused, once fired
}

func checkPause(cfg *Config, client string, d time.Duration) error {
	if d <= 0 {
		return errors.New("a pause needs a positive duration")
	}
	if !slices.Contains(clientNames(cfg.Clients), client) {
		return fmt.Errorf("no client %q (the clients are %v)", client, clientNames(cfg.Clients))
	}
	return nil
}

// Partition cuts Clients from Instances (names; empty: every client,
// every instance) from At for For. A holding cut delivers what it held
// when it heals (TCP retransmits); a lossy one (Lossy) loses the message
// and the connection it was on stays silent for good (the client's read
// timeout finds out; a dial across it gets no answer); a rejecting one
// (Reject, a firewall that answers with a reset) resets the connection and
// refuses a dial at once.
type Partition struct {
	At, For   time.Duration
	Clients   []string
	Instances []string
	Lossy     bool
	Reject    bool
}

func (p Partition) String() string {
	return fmt.Sprintf("%s partition of %v from %v at %v for %v", p.kind(), p.Clients, p.Instances, p.At, p.For)
}

func (p Partition) kind() string {
	switch {
	case p.Reject:
		return "rejecting"
	case p.Lossy:
		return "lossy"
	}
	return "holding"
}

func (p Partition) check(cfg *Config) error {
	if p.Lossy && p.Reject {
		return errors.New("a partition is lossy or rejecting, not both")
	}
	if p.For <= 0 {
		return errors.New("a partition needs a positive duration")
	}
	for _, c := range p.Clients {
		if !slices.Contains(clientNames(cfg.Clients), c) {
			return fmt.Errorf("no client %q", c)
		}
	}
	for _, s := range p.Instances {
		if !slices.Contains(instanceNames(cfg.Instances), s) {
			return fmt.Errorf("no instance %q (the instances are %v)", s, instanceNames(cfg.Instances))
		}
	}
	return nil
}

func (p Partition) install(w *world, i int) {
	a := p.Clients
	if len(a) == 0 {
		a = clientNames(w.cfg.Clients)
	}
	b := p.Instances
	if len(b) == 0 {
		b = instanceNames(w.cfg.Instances)
	}
	c := &cut{a: a, b: b, lossy: p.Lossy, reject: p.Reject, until: p.At + p.For}
	targets := append(slices.Clone(a), b...)
	detail := p.kind()
	order := fmt.Sprintf("~fault%03d", i)
	w.schedule(&event{at: p.At, order: order, run: func() {
		w.cuts = append(w.cuts, c)
		w.rec.nemesis(history.Start, string(nemesis.Partition), targets, detail, w.elapsed())
	}})
	w.schedule(&event{at: p.At + p.For, order: order, seq: 1, run: func() {
		c.healed = true
		w.rec.nemesis(history.Stop, string(nemesis.Partition), targets, detail, w.elapsed())
	}})
}

// ClockJump moves an instance's wall clock by By at At (its TTLs follow
// its wall clock, as Redis's do) and, when For is not zero, back at At+For.
type ClockJump struct {
	Instance string
	At       time.Duration
	By, For  time.Duration
}

func (j ClockJump) String() string {
	return fmt.Sprintf("clock of %s jumps %+v at %v", j.Instance, j.By, j.At)
}

func (j ClockJump) check(cfg *Config) error {
	if !slices.Contains(instanceNames(cfg.Instances), j.Instance) {
		return fmt.Errorf("no instance %q (the instances are %v)", j.Instance, instanceNames(cfg.Instances))
	}
	if j.By == 0 {
		return errors.New("a clock jump needs a non-zero By")
	}
	return nil
}

func (j ClockJump) install(w *world, i int) {
	s := w.serverAt(j.Instance)
	detail := fmt.Sprintf("%+v", j.By)
	targets := []string{j.Instance}
	order := fmt.Sprintf("~fault%03d", i)
	end := j.At + j.For
	if j.For == 0 {
		end = w.cfg.Duration
	}
	w.schedule(&event{at: j.At, order: order, run: func() {
		s.offset += j.By
		w.rec.nemesis(history.Start, string(nemesis.ClockJump), targets, detail, w.elapsed())
	}})
	w.schedule(&event{at: end, order: order, seq: 1, run: func() {
		if j.For != 0 {
			s.offset -= j.By
		}
		w.rec.nemesis(history.Stop, string(nemesis.ClockJump), targets, detail, w.elapsed())
	}})
}

// Crash crashes an instance at At and restarts it after For. Its
// connections are reset (each client learns it a link's latency later)
// and dials are refused while it is down. Without Persist the restarted
// instance is empty (its locks and its script cache are gone, as with no
// AOF or RDB); with Persist it keeps everything (appendfsync always).
type Crash struct {
	Instance string
	At, For  time.Duration
	Persist  bool
}

func (c Crash) String() string {
	p := "without persistence"
	if c.Persist {
		p = "with persistence"
	}
	return fmt.Sprintf("crash %s at %v for %v %s", c.Instance, c.At, c.For, p)
}

func (c Crash) check(cfg *Config) error {
	if !slices.Contains(instanceNames(cfg.Instances), c.Instance) {
		return fmt.Errorf("no instance %q (the instances are %v)", c.Instance, instanceNames(cfg.Instances))
	}
	if c.For <= 0 {
		return errors.New("a crash needs a positive downtime")
	}
	return nil
}

func (c Crash) install(w *world, i int) {
	s := w.serverAt(c.Instance)
	detail := "without persistence: the restarted instance is empty"
	if c.Persist {
		detail = "with persistence: the restarted instance keeps its data"
	}
	targets := []string{c.Instance}
	order := fmt.Sprintf("~fault%03d", i)
	w.schedule(&event{at: c.At, order: order, run: func() {
		w.crash(s)
		w.rec.nemesis(history.Start, string(nemesis.Crash), targets, detail, w.elapsed())
	}})
	w.schedule(&event{at: c.At + c.For, order: order, seq: 1, run: func() {
		s.down = false
		if !c.Persist {
			s.db = engine.New()
		}
		w.rec.nemesis(history.Stop, string(nemesis.Crash), targets, detail, w.elapsed())
	}})
}

// Delay makes every message between Clients and Instances (names; empty:
// all) sent from At for For take By more (in order: a connection stays
// FIFO).
type Delay struct {
	At, For   time.Duration
	By        time.Duration
	Clients   []string
	Instances []string
}

func (d Delay) String() string {
	return fmt.Sprintf("delay by %v of %v to %v at %v for %v", d.By, d.Clients, d.Instances, d.At, d.For)
}

func (d Delay) check(cfg *Config) error {
	if d.By <= 0 || d.For <= 0 {
		return errors.New("a delay needs a positive By and For")
	}
	return Partition{For: d.For, Clients: d.Clients, Instances: d.Instances}.check(cfg)
}

func (d Delay) install(w *world, i int) {
	a, b := d.Clients, d.Instances
	if len(a) == 0 {
		a = clientNames(w.cfg.Clients)
	}
	if len(b) == 0 {
		b = instanceNames(w.cfg.Instances)
	}
	w.delays = append(w.delays, &delayWindow{a: a, b: b, from: d.At, until: d.At + d.For, by: d.By})
	targets := append(slices.Clone(a), b...)
	detail := fmt.Sprintf("+%v", d.By)
	order := fmt.Sprintf("~fault%03d", i)
	w.schedule(&event{at: d.At, order: order, run: func() {
		w.rec.nemesis(history.Start, string(nemesis.Delay), targets, detail, w.elapsed())
	}})
	w.schedule(&event{at: d.At + d.For, order: order, seq: 1, run: func() {
		w.rec.nemesis(history.Stop, string(nemesis.Delay), targets, detail, w.elapsed())
	}})
}

// pauseNow pauses client for d from now (w.mu held).
func (w *world) pauseNow(client string, d time.Duration, why string) {
	now := w.elapsed()
	p := &pause{until: now + d, resume: make(chan struct{})}
	w.paused[client] = p
	detail := "connections and critical section frozen; the library's own timers keep running"
	if why != "" {
		detail = why + "; " + detail
	}
	w.rec.nemesis(history.Start, string(nemesis.Pause), []string{client}, detail, now)
	w.schedule(&event{at: now + d, order: "~pause/" + client, run: func() {
		if w.paused[client] == p {
			delete(w.paused, client)
		}
		close(p.resume)
		w.rec.nemesis(history.Stop, string(nemesis.Pause), []string{client}, detail, w.elapsed())
	}})
}

// afterRead fires a PauseInCriticalSection on client, if one is due.
func (w *world) afterRead(client string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, p := range w.holderPauses {
		if p.fired || (p.Client != "" && p.Client != client) || w.elapsed() < p.After {
			continue
		}
		p.fired, p.client = true, client
		w.pauseNow(client, p.For, "after its read in the critical section")
		return
	}
}

func clientNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("c%d", i+1)
	}
	return out
}

func instanceNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("redis-%d", i+1)
	}
	return out
}

// faultList renders the faults for a report.
func faultList(fs []Fault) string {
	var b strings.Builder
	for i, f := range fs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(f.String())
	}
	return b.String()
}

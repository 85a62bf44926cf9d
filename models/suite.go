package models

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/locklab/locklab/history"
)

// Applicable is implemented by checks that only apply to some histories (a
// fencing check needs tokens, a lease check needs leases). A check that does
// not apply is left out of the default selection, with the reason; named
// explicitly, it runs and says unknown when it cannot decide.
type Applicable interface {
	// Applies reports whether the check has something to judge in events,
	// and why not.
	Applies(events []history.Event) (bool, string)
}

// pairedApplicable is Applicable for a check that tells from what pairing
// counted (history.Paired) without scanning the history again.
type pairedApplicable interface {
	appliesPaired(h *history.Paired) (bool, string)
}

// Skipped is a check left out of a run, with the reason.
type Skipped struct {
	Check  string `json:"check"`
	Reason string `json:"reason"`
}

// Config configures the whole suite of checks; each check reads the fields it
// needs. The zero Config is the default everywhere.
type Config struct {
	// Budget bounds the linearizability searches (critical-sections,
	// fencing-tokens, mutex, lease). Default: DefaultSteps per key, no time bound.
	Budget Budget
	// Initial is the value of the resource's keys before the history;
	// InitialKnown says the keys it does not name start at InitialDefault.
	// Default: unknown (any first value is accepted).
	Initial        map[string]int64
	InitialDefault int64
	InitialKnown   bool
	// Resource is the resource's shape. Default ResourceAuto.
	Resource Resource
	// StorageFenced says the storage fences writes with the lock's tokens (and
	// ReadsFenced, reads too). Default false.
	StorageFenced, ReadsFenced bool
	// Uncounted says the lock does not count nested grants (LockService.Uncounted:
	// one release frees it). Default false: counted.
	Uncounted bool
	// StallMax, RecoveryMax, MinSuccess and MinAttempts tune the liveness
	// check (see Availability for their defaults; nil or 0 takes them).
	StallMax, RecoveryMax time.Duration
	MinSuccess            *float64
	MinAttempts           int
	// InOrder says the lock service applies each owner's acquires and
	// releases in the order its client made them (LockService.InOrder).
	// Default false.
	InOrder bool
	// Grants is the servers' record of the run's grants, for the liveness
	// check (Availability.Grants) and the lock checks' explanations
	// (LockService.Grants); nil for a history checked on its own.
	Grants []ServerGrant
}

// ConfigKeys are the keys Config.Set understands.
var ConfigKeys = []string{"steps", "time", "initial", "resource", "storage", "fence-reads", "stall", "recovery", "min-success", "min-attempts", "in-order", "nesting"}

// Set sets one option from its textual form (-o key=value on the command line):
//
//	steps=N            step budget per key (0: the default, -1: unbounded)
//	time=DURATION      time budget per key (0: none)
//	initial=K:V        key K starts at V; initial=*:V for every key not named
//	resource=SHAPE     auto, counter, stock or list
//	storage=MODE       fenced or unfenced
//	fence-reads=BOOL   the fenced storage fences reads too
//	stall=DURATION     the longest tolerated stall
//	recovery=DURATION  the longest tolerated recovery after a fault
//	min-success=SHARE  the least share of acquires made while no fault was
//	                   active that must succeed (0..1; 0: not judged)
//	min-attempts=N     how many such acquires the share needs to be judged
//	in-order=BOOL      the lock service applies each owner's acquires and
//	                   releases in the order they were made
//	nesting=MODE       counted (a reentrant lock) or uncounted (one release
//	                   frees the lock: etcd's Mutex); see Uncounted
func (c *Config) Set(key, val string) error {
	var err error
	switch key {
	case "steps":
		c.Budget.Steps, err = strconv.ParseInt(val, 10, 64)
	case "time":
		c.Budget.Time, err = time.ParseDuration(val)
	case "initial":
		err = c.setInitial(val)
	case "resource":
		c.Resource, err = ParseResource(val)
	case "storage":
		if err = either(val, "fenced", "unfenced"); err == nil {
			c.StorageFenced = val == "fenced"
		}
	case "fence-reads":
		c.ReadsFenced, err = strconv.ParseBool(val)
	case "stall":
		c.StallMax, err = positive(val)
	case "recovery":
		c.RecoveryMax, err = positive(val)
	case "min-success":
		c.MinSuccess, err = ParseMinSuccess(val)
	case "min-attempts":
		c.MinAttempts, err = strconv.Atoi(val)
		if err == nil && c.MinAttempts < 1 {
			err = fmt.Errorf("must be at least 1")
		}
	case "in-order":
		c.InOrder, err = strconv.ParseBool(val)
	case "nesting":
		if err = either(val, "counted", "uncounted"); err == nil {
			c.Uncounted = val == "uncounted"
		}
	default:
		return fmt.Errorf("no check option %q (options: %s)", key, strings.Join(ConfigKeys, ", "))
	}
	if err != nil {
		return fmt.Errorf("check option %s=%q: %w", key, val, err)
	}
	return nil
}

// either refuses a value of a two-way option that is neither a nor b.
func either(val, a, b string) error {
	if val != a && val != b {
		return fmt.Errorf("want %s or %s", a, b)
	}
	return nil
}

func (c *Config) setInitial(val string) error {
	k, v, ok := strings.Cut(val, ":")
	if !ok {
		k, v, ok = strings.Cut(val, "=")
	}
	if !ok || k == "" {
		return fmt.Errorf("want KEY:VALUE (or *:VALUE for every key)")
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return err
	}
	if k == "*" {
		c.InitialDefault, c.InitialKnown = n, true
		return nil
	}
	if c.Initial == nil {
		c.Initial = map[string]int64{}
	}
	c.Initial[k] = n
	return nil
}

// ParseMinSuccess parses a least share of successful acquires: a number
// between 0 and 1, or a percentage ("50%").
func ParseMinSuccess(val string) (*float64, error) {
	num, pct := strings.CutSuffix(strings.TrimSpace(val), "%")
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return nil, fmt.Errorf("want a share between 0 and 1 or a percentage")
	}
	if pct {
		f /= 100
	}
	if f < 0 || f > 1 || f != f {
		return nil, fmt.Errorf("must be between 0 and 1 (0%%..100%%)")
	}
	return &f, nil
}

func positive(val string) (time.Duration, error) {
	d, err := time.ParseDuration(val)
	if err == nil && d <= 0 {
		err = fmt.Errorf("must be positive")
	}
	return d, err
}

// Suite returns every check, configured by c, in report order: the safety
// checks, then liveness.
func (c Config) Suite() []Check {
	sections := CriticalSections{Budget: c.Budget, InitialByKey: c.Initial, Resource: c.Resource,
		StorageFenced: c.StorageFenced, ReadsFenced: c.ReadsFenced}
	if c.InitialKnown {
		sections.Initial = history.Ptr(c.InitialDefault)
	}
	oncall := OnCall{InitialByKey: c.Initial}
	if c.InitialKnown {
		oncall.Initial = history.Ptr(c.InitialDefault)
	}
	return []Check{
		sections,
		MutualExclusion{},
		LockService{Leases: true, InOrder: c.InOrder, Uncounted: c.Uncounted, Budget: c.Budget, Grants: c.Grants},
		LockService{InOrder: c.InOrder, Uncounted: c.Uncounted, Budget: c.Budget, Grants: c.Grants},
		FencingTokens{Budget: c.Budget, StorageFenced: c.StorageFenced, ReadsFenced: c.ReadsFenced},
		oncall,
		Availability{StallMax: c.StallMax, RecoveryMax: c.RecoveryMax, MinSuccess: c.MinSuccess, MinAttempts: c.MinAttempts,
			Grants: c.Grants},
	}
}

// CheckNames lists the names of the checks, in report order.
func CheckNames() []string {
	var out []string
	for _, c := range (Config{}).Suite() {
		out = append(out, c.Name())
	}
	return out
}

// Select returns the checks to run on events: the named ones (all of them,
// whether they apply or not), or, when names is empty, every check that
// applies, with the others and why they were left out. Names written "+name"
// add a check to the default selection instead of replacing it (a scenario
// names the checks its expectations need that way).
func (c Config) Select(names []string, events []history.Event) ([]Check, []Skipped, error) {
	return c.selectBy(names, func(a Applicable) (bool, string) { return a.Applies(events) })
}

// SelectPaired is Select of h's events, paired: the checks that can tell
// whether they apply from what pairing counted do not scan the history.
func (c Config) SelectPaired(names []string, h *history.Paired) ([]Check, []Skipped, error) {
	return c.selectBy(names, func(a Applicable) (bool, string) {
		if p, ok := a.(pairedApplicable); ok {
			return p.appliesPaired(h)
		}
		return a.Applies(h.Recorded())
	})
}

// selectBy is Select with applies telling whether a check applies.
func (c Config) selectBy(names []string, applies func(Applicable) (bool, string)) ([]Check, []Skipped, error) {
	suite := c.Suite()
	var exact, extra []string
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, "+"); ok {
			extra = append(extra, rest)
		} else {
			exact = append(exact, n)
		}
	}
	for _, n := range append(slices.Clone(exact), extra...) {
		if !slices.ContainsFunc(suite, func(ch Check) bool { return ch.Name() == n }) {
			return nil, nil, fmt.Errorf("unknown check %q (known: %s)", n, strings.Join(CheckNames(), ", "))
		}
	}
	find := func(n string) Check {
		return suite[slices.IndexFunc(suite, func(ch Check) bool { return ch.Name() == n })]
	}
	var out []Check
	var skipped []Skipped
	if len(exact) > 0 {
		for _, n := range exact {
			out = append(out, find(n))
		}
		for _, n := range extra {
			if !slices.Contains(exact, n) {
				out = append(out, find(n))
			}
		}
		return out, nil, nil
	}
	for _, ch := range suite {
		if !slices.Contains(extra, ch.Name()) {
			if a, ok := ch.(Applicable); ok {
				if ok, why := applies(a); !ok {
					skipped = append(skipped, Skipped{Check: ch.Name(), Reason: why})
					continue
				}
			}
		}
		out = append(out, ch)
	}
	return out, skipped, nil
}

package scenario

import (
	"fmt"
	"strconv"
	"time"
)

// Liveness are the limits of the liveness check of a test (models.Availability
// documents them); a zero field takes the check's default.
type Liveness struct {
	// MinSuccess is the least share (0..1) of the acquire attempts made while
	// no fault was active that must succeed. Nil: models.DefaultMinSuccess;
	// 0: not judged.
	MinSuccess *float64 `json:"min_success,omitempty"`
	// MinAttempts is how many such attempts the share needs to be judged.
	// Default models.DefaultMinAttempts.
	MinAttempts int `json:"min_attempts,omitempty"`
	// StallMax is the longest tolerated stall (clients waiting, nobody
	// holding the lock, no fault). Default models.DefaultStallMax, or 1.5
	// times the longest lease if that is longer.
	StallMax time.Duration `json:"max_stall,omitempty"`
	// RecoveryMax is the longest tolerated recovery after a fault. Default
	// models.DefaultRecoveryMax.
	RecoveryMax time.Duration `json:"max_recovery,omitempty"`
}

// Validate reports a limit out of range, naming it.
func (l Liveness) Validate() error {
	switch {
	case l.MinSuccess != nil && !(*l.MinSuccess >= 0 && *l.MinSuccess <= 1):
		return fmt.Errorf("liveness min success: must be between 0 and 1, got %v", *l.MinSuccess)
	case l.MinAttempts < 0:
		return fmt.Errorf("liveness min attempts: must be at least 1, got %d", l.MinAttempts)
	case l.StallMax < 0:
		return fmt.Errorf("liveness max stall: must be positive, got %v", l.StallMax)
	case l.RecoveryMax < 0:
		return fmt.Errorf("liveness max recovery: must be positive, got %v", l.RecoveryMax)
	}
	return nil
}

// Args renders the limits that are set as `locklab run` flags.
func (l Liveness) Args() []string {
	var out []string
	if l.MinSuccess != nil {
		out = append(out, "--liveness-min-success", strconv.FormatFloat(*l.MinSuccess, 'g', -1, 64))
	}
	if l.MinAttempts != 0 {
		out = append(out, "--liveness-min-attempts", fmt.Sprint(l.MinAttempts))
	}
	if l.StallMax != 0 {
		out = append(out, "--liveness-max-stall", l.StallMax.String())
	}
	if l.RecoveryMax != 0 {
		out = append(out, "--liveness-max-recovery", l.RecoveryMax.String())
	}
	return out
}

package live

import "github.com/locklab/locklab/liveform"

// Systems lists the systems that can run live.
func Systems() []string { return liveform.Names() }

// Notes lists the systems that can run live, each with what runs.
func Notes() []string { return liveform.Notes() }

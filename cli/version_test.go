package cli

import (
	"runtime"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/locklab/locklab/judge"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestVersionText(t *testing.T) {
	vcs := func(kv ...string) []debug.BuildSetting {
		var out []debug.BuildSetting
		for i := 0; i < len(kv); i += 2 {
			out = append(out, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return out
	}
	platform := runtime.GOOS + "/" + runtime.GOARCH
	tests := []struct {
		name string
		info *debug.BuildInfo
		ok   bool
		want []string
	}{
		{"go install @version", &debug.BuildInfo{GoVersion: "go1.26.1",
			Main: debug.Module{Path: "github.com/locklab/locklab", Version: "v1.2.3"}}, true,
			[]string{"locklab v1.2.3", "module    github.com/locklab/locklab",
				"revision  not recorded (a module build: the version names the release)", "go        go1.26.1 " + platform}},
		{"go build in a modified checkout", &debug.BuildInfo{GoVersion: "go1.26.1",
			Main:     debug.Module{Path: "github.com/locklab/locklab", Version: "v0.0.0-20250601120000-0ed14bc5d3ab+dirty"},
			Settings: vcs("vcs", "git", "vcs.revision", "0ed14bc5d3ab7a6e", "vcs.time", "2025-06-01T12:00:00Z", "vcs.modified", "true")}, true,
			[]string{"locklab v0.0.0-20250601120000-0ed14bc5d3ab+dirty",
				"revision  0ed14bc5d3ab7a6e (committed 2025-06-01T12:00:00Z, modified: built with uncommitted changes)"}},
		{"go build in a clean checkout", &debug.BuildInfo{Main: debug.Module{Path: "github.com/locklab/locklab", Version: "(devel)"},
			Settings: vcs("vcs.revision", "0ed14bc5", "vcs.modified", "false")}, true,
			[]string{"locklab (devel)", "revision  0ed14bc5 (clean)", "go        " + runtime.Version()}},
		{"go run", &debug.BuildInfo{Main: debug.Module{Path: "github.com/locklab/locklab", Version: "(devel)"}}, true,
			[]string{"locklab (devel)", "revision  not recorded (go run and -buildvcs=false leave it out"}},
		{"no build information", nil, false,
			[]string{"locklab unknown", "module    github.com/locklab/locklab", "revision  not recorded"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := versionText(tc.info, tc.ok)
			for _, w := range tc.want {
				assert.Contains(t, got, w, "in:\n%s", got)
			}
			assert.Len(t, strings.Split(strings.TrimSpace(got), "\n"), 4)
		})
	}
}

func TestVersionTextReportsTheRevisionStampedByTheContainerBuild(t *testing.T) {
	defer func(r, c, m string) { stampedRevision, stampedTime, stampedModified = r, c, m }(stampedRevision, stampedTime, stampedModified)
	stampedRevision, stampedTime, stampedModified = "9886833a", "2026-11-27T15:00:00Z", "false"
	devel := &debug.BuildInfo{Main: debug.Module{Path: "github.com/locklab/locklab", Version: "(devel)"}}

	assert.Contains(t, versionText(devel, true), "revision  9886833a (committed 2026-11-27T15:00:00Z, clean)",
		"a build without .git reports the stamped revision")
	withVCS := &debug.BuildInfo{Main: devel.Main, Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "0ed14bc5"}}}
	assert.Contains(t, versionText(withVCS, true), "revision  0ed14bc5\n", "Go's own VCS stamp wins over the -X one")
}

func TestVersionCommandAndFlagAgree(t *testing.T) {
	code, cmdOut, stderr := capture(t, "version")
	require.Equal(t, judge.ExitValid, code, stderr)
	code, flagOut, stderr := capture(t, "--version")
	require.Equal(t, judge.ExitValid, code, stderr)
	assert.Equal(t, cmdOut, flagOut)
	assert.True(t, strings.HasPrefix(cmdOut, "locklab "), cmdOut)
	assert.Contains(t, cmdOut, "module    github.com/locklab/locklab")
	assert.Contains(t, cmdOut, "go        go1.")
	code, _, stderr = capture(t, "version", "extra")
	assert.Equal(t, judge.ExitUsage, code, stderr)
}

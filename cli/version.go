package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// modulePath is the module locklab is built from.
const modulePath = "github.com/locklab/locklab"

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print locklab's version, the commit it was built from and the Go version",
		Long: `version prints the module version locklab was built as, the version control revision
it was built from (and whether the working tree had changes), and the Go toolchain and platform.
'go install github.com/locklab/locklab/cmd/locklab@VERSION' records the module version;
'go install ./cmd/locklab' or 'go build' in a git checkout records the revision; 'go run'
records neither, and says so.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := fmt.Fprint(cmd.OutOrStdout(), versionText(debug.ReadBuildInfo()))
			return err
		},
	}
}

// The revision a build without a git checkout was made from, stamped with
// -ldflags "-X github.com/locklab/locklab/cli.stampedRevision=..." (the Dockerfile does: its build
// context has no .git for Go to read): the commit, its commit time and
// "true" when the tree had uncommitted changes. Empty in every other build,
// where Go's own VCS stamp (or its absence) is what version reports.
var (
	stampedRevision string
	stampedTime     string
	stampedModified string
)

// setVersionFlag makes `locklab --version` print what `locklab version` does.
func setVersionFlag(root *cobra.Command) {
	root.Version = versionText(debug.ReadBuildInfo())
	root.SetVersionTemplate("{{.Version}}")
}

// versionText describes the binary from its build information (ok is false
// when the binary carries none).
func versionText(info *debug.BuildInfo, ok bool) string {
	version, module, goVersion := "unknown", modulePath, runtime.Version()
	settings := map[string]string{}
	if ok && info != nil {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		if info.Main.Path != "" {
			module = info.Main.Path
		}
		if info.GoVersion != "" {
			goVersion = info.GoVersion
		}
		for _, s := range info.Settings {
			settings[s.Key] = s.Value
		}
	}
	if settings["vcs.revision"] == "" && stampedRevision != "" {
		settings["vcs.revision"], settings["vcs.time"], settings["vcs.modified"] = stampedRevision, stampedTime, stampedModified
	}
	var b strings.Builder
	fmt.Fprintf(&b, "locklab %s\n", version)
	fmt.Fprintf(&b, "module    %s\n", module)
	fmt.Fprintf(&b, "revision  %s\n", revision(settings, version))
	fmt.Fprintf(&b, "go        %s %s/%s\n", goVersion, runtime.GOOS, runtime.GOARCH)
	return b.String()
}

// revision describes the VCS revision of the build: the commit, its time and
// whether the working tree was modified, or why there is none.
func revision(settings map[string]string, version string) string {
	rev := settings["vcs.revision"]
	if rev == "" {
		if version != "(devel)" && version != "unknown" {
			return "not recorded (a module build: the version names the release)"
		}
		return "not recorded (go run and -buildvcs=false leave it out; go install ./cmd/locklab records it)"
	}
	var extra []string
	if t := settings["vcs.time"]; t != "" {
		extra = append(extra, "committed "+t)
	}
	switch settings["vcs.modified"] {
	case "true":
		extra = append(extra, "modified: built with uncommitted changes")
	case "false":
		extra = append(extra, "clean")
	}
	if len(extra) == 0 {
		return rev
	}
	return fmt.Sprintf("%s (%s)", rev, strings.Join(extra, ", "))
}

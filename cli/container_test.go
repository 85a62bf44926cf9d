package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// repoFile reads a file of the repository (this package is cli, one level down).
func repoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	require.NoError(t, err)
	return string(b)
}

// TestDockerfileBuildsAStaticBinaryAndTheLiveTarget checks the Dockerfile's
// shape without a container builder (.ci/image builds and runs it where one
// works): its stages, the static build, the Go of go.mod, the entry point,
// and the Debian packages of every server live mode starts.
func TestDockerfileBuildsAStaticBinaryAndTheLiveTarget(t *testing.T) {
	dockerfile := repoFile(t, "Dockerfile")
	var stages []string
	for _, m := range regexp.MustCompile(`(?m)^FROM \S+ AS (\S+)$`).FindAllStringSubmatch(dockerfile, -1) {
		stages = append(stages, m[1])
	}
	assert.Equal(t, []string{"build", "live", "static"}, stages, "the static image is the last stage: the default target")

	goMod := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindStringSubmatch(repoFile(t, "go.mod"))
	require.NotNil(t, goMod)
	assert.Contains(t, dockerfile, "ARG GO_IMAGE=docker.io/library/golang:"+goMod[1]+"-bookworm", "the Go of go.mod")
	assert.Contains(t, dockerfile, "CGO_ENABLED=0", "a static binary")
	assert.Contains(t, dockerfile, "-X github.com/locklab/locklab/cli.stampedRevision=${REVISION}", "version names the commit")
	assert.Equal(t, 2, strings.Count(dockerfile, `ENTRYPOINT ["/usr/local/bin/locklab"]`), "both images run locklab")
	assert.Equal(t, 2, strings.Count(dockerfile, "COPY --from=build /out/locklab /usr/local/bin/locklab"))

	live := dockerfile[strings.Index(dockerfile, " AS live"):strings.Index(dockerfile, " AS static")]
	for _, pkg := range []string{
		"redis-server", "redis-sentinel", // live/redis.go, live/redis_sentinel.go
		"etcd-server",                               // backends/etcd/live
		"libzookeeper-java", "default-jre-headless", // ZooKeeper's jars and a JVM (backends/zookeeper/live)
		"postgresql", // backends/database/live
		"faketime",   // libfaketime, which moves redis-server's clock
	} {
		assert.Regexp(t, `\s`+regexp.QuoteMeta(pkg)+`\s`, live, "the live target installs %s", pkg)
	}

	ci := repoFile(t, ".ci/image")
	for _, m := range regexp.MustCompile(`(?m)^ARG \w+_IMAGE=(\S+)$`).FindAllStringSubmatch(dockerfile, -1) {
		assert.Contains(t, ci, m[1], ".ci/image tries to pull the Dockerfile's base image %s", m[1])
	}
}

// TestClusterRecipesRunTheImage checks that the Kubernetes Jobs and the Slurm
// array run the locklab image rather than compiling locklab on every pod or
// task, and that their shard counts agree.
func TestClusterRecipesRunTheImage(t *testing.T) {
	const image = "your-registry.example/locklab:latest"
	tests := []struct {
		file string
		want []string
	}{
		{"docs/k8s/sweep-job.yaml", []string{"image: " + image, "completions: 8", `"--shard", "auto", "--shards", "8"`,
			"/sweeps/shard-$(JOB_COMPLETION_INDEX)", "fsGroup: 65532"}},
		{"docs/k8s/merge-job.yaml", []string{"image: " + image, `"merge", "--out", "/sweeps/merged"`, "/sweeps/shard-7\"]"}},
		{"docs/slurm/sweep-array.sh", []string{"apptainer pull locklab.sif docker://" + image, "#SBATCH --array=0-7",
			`apptainer run "${LOCKLAB_SIF:-locklab.sif}" sweep`, "--shard auto"}},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			text := repoFile(t, tc.file)
			for _, w := range tc.want {
				assert.Contains(t, text, w)
			}
			assert.NotContains(t, text, "go install", "no compile per pod or task")
			assert.NotContains(t, text, "golang", "no Go image")
		})
	}
}

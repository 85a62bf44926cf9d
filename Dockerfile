# locklab in a container (docs/container.md).
#
#   docker build -t locklab .                       # the default target: static
#   docker build --target live -t locklab:live .    # with the Debian servers of live mode
#   docker run --rm -v "$PWD/runs:/home/nonroot/runs" locklab repro kleppmann-gc-pause
#
# Targets:
#   build   compiles a static locklab (CGO_ENABLED=0) with the Go of go.mod
#   live    Debian with the real servers live mode starts (redis-server,
#           redis-sentinel, etcd, ZooKeeper's jar and a JRE, PostgreSQL,
#           libfaketime) and the binary; runs as root (locklab starts
#           postgres as the user postgres)
#   static  the binary alone on a distroless base (CA certificates, /tmp, a
#           non-root user 65532 whose home is the working directory): the
#           simulator, sweeps, merge, reports; the default target
#
# The base images are build arguments so that a site that mirrors them (or
# has no registry at all, as .ci/image shows) can name its own:
#   --build-arg GO_IMAGE=... --build-arg STATIC_IMAGE=... --build-arg DEBIAN_IMAGE=...
# REVISION, REVISION_TIME and REVISION_MODIFIED (git rev-parse HEAD, its
# commit time, "true" with uncommitted changes) are what `locklab version`
# reports, as the build context has no .git for Go to read.

ARG GO_IMAGE=docker.io/library/golang:1.26-bookworm
ARG STATIC_IMAGE=gcr.io/distroless/static-debian12:nonroot
ARG DEBIAN_IMAGE=docker.io/library/debian:bookworm-slim

FROM ${GO_IMAGE} AS build
ENV CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-buildvcs=false
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG REVISION=
ARG REVISION_TIME=
ARG REVISION_MODIFIED=
RUN go build -trimpath \
      -ldflags "-s -w -X github.com/locklab/locklab/cli.stampedRevision=${REVISION} -X github.com/locklab/locklab/cli.stampedTime=${REVISION_TIME} -X github.com/locklab/locklab/cli.stampedModified=${REVISION_MODIFIED}" \
      -o /out/locklab ./cmd/locklab \
 && /out/locklab version

FROM ${DEBIAN_IMAGE} AS live
# No service starts while the packages install (there is no init here), and
# PostgreSQL makes no cluster of its own: locklab runs initdb in each run.
RUN printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d \
 && mkdir -p /etc/postgresql-common/createcluster.d \
 && echo 'create_main_cluster = false' > /etc/postgresql-common/createcluster.d/locklab.conf \
 && apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      redis-server redis-sentinel etcd-server libzookeeper-java default-jre-headless postgresql faketime \
 && rm -rf /var/lib/apt/lists/* /usr/sbin/policy-rc.d
COPY --from=build /out/locklab /usr/local/bin/locklab
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/locklab"]
CMD ["--help"]

FROM ${STATIC_IMAGE} AS static
COPY --from=build /out/locklab /usr/local/bin/locklab
USER 65532:65532
WORKDIR /home/nonroot
ENTRYPOINT ["/usr/local/bin/locklab"]
CMD ["--help"]

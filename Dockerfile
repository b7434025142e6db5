# syntax=docker/dockerfile:1
#
# agentrun's container image: a static agentrun binary on a small Debian with what the
# agent's tools need (bash, git, CA certificates), run as a non-root user under tini, so
# that SIGTERM reaches agentrun (which then stops its sessions and writes their results)
# and orphaned tool processes are reaped.
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t agentrun .
#   docker run --rm -v "$PWD:/work" -w /work -e ANTHROPIC_API_KEY agentrun run jobs.yaml --out out
#
# It carries no toolchain: for jobs whose checks need one (the quick start runs go test),
# start FROM the toolchain's image and COPY --from this one /usr/local/bin/agentrun,
# /usr/local/bin/agentrun-worker and /usr/bin/tini-static (the README's Docker section). For a Kubernetes Job see
# examples/kubernetes/.

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION}-alpine AS build
ARG TARGETOS
ARG TARGETARCH
ARG VERSION=dev
WORKDIR /src
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY . .
# Static binaries: no cgo, no paths of this machine in them, the version stamped in;
# agentrun and its sessions' worker in one build, as agentrun-worker must be.
RUN --mount=type=cache,target=/go/pkg/mod \
    --mount=type=cache,target=/root/.cache/go-build \
    CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH \
    go build -trimpath -ldflags "-s -w -X main.buildVersion=${VERSION}" -o /out/ ./cmd/agentrun ./cmd/agentrun-worker

FROM debian:trixie-slim
ARG VERSION=dev
LABEL org.opencontainers.image.title="agentrun" \
      org.opencontainers.image.description="Headless LLM coding-agent runner" \
      org.opencontainers.image.version="${VERSION}"
# The agent's Bash tool and the jobs' checks run bash; git for worktree workspaces and
# for the agents' own git commands; CA certificates for the model providers' HTTPS.
# safe.directory: workspaces mounted from the host belong to another uid.
RUN apt-get update \
 && apt-get install -y --no-install-recommends bash ca-certificates git tini \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 agentrun \
 && useradd --uid 10001 --gid 10001 --create-home --shell /bin/bash agentrun \
 && git config --system --add safe.directory '*'
COPY --from=build /out/agentrun /out/agentrun-worker /usr/local/bin/
USER 10001:10001
WORKDIR /home/agentrun
# tini is PID 1: it forwards SIGTERM and SIGINT to agentrun and reaps zombies.
ENTRYPOINT ["/usr/bin/tini", "--", "/usr/local/bin/agentrun"]
CMD ["--help"]

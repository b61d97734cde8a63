#!/usr/bin/env bash
# Builds the Prometheus every run scrapes with, from its Go module (Prometheus 3.x is published
# to the Go module proxy as github.com/prometheus/prometheus v0.3XX.Y for 3.XX.Y).
#
#   scripts/build-prometheus.sh        # prints the binary's path on stdout, logs on stderr
#
# Why not Debian's: its 2.42 applies a new Prometheus's targets only after two 5 s tickers, so
# every run waited ~6 s for its first scrape before the agent could start (measured, 2.42: 5.3-6.0 s
# to the first `up`). 3.x throttles discovery with a backoff that starts at 100 ms, and its
# scrape reload interval (--scrape.discovery-reload-interval) has no 5 s floor: 0.4-1.2 s.
#
# Cached outside the repository, keyed by version, like scripts/build-k8s.sh:
#   ${DBABENCH_CACHE:-/var/cache/dbabench}/prometheus/<version>/bin/prometheus
# Cold: a few minutes on 2 cores (modules ~0.3 GB to download); warm: milliseconds.
set -euo pipefail

PROMETHEUS_VERSION=3.16.0
# Only static targets are configured; the cloud and Kubernetes discovery plugins stay out.
TAGS=remove_all_sd

module_version=v0.$(( ${PROMETHEUS_VERSION%%.*} * 100 + $(cut -d. -f2 <<<"$PROMETHEUS_VERSION") )).${PROMETHEUS_VERSION##*.}
cache_root=${DBABENCH_CACHE:-/var/cache/dbabench}/prometheus
key=$PROMETHEUS_VERSION-$TAGS
binary=$cache_root/$key/bin/prometheus

if [[ -x $binary ]]; then
  echo "$binary"
  exit 0
fi
# One build at a time (make test's two workers, or two shells): whoever waited finds it built.
mkdir -p "$cache_root"
exec 9>"$cache_root/.build.lock"
flock 9
if [[ -x $binary ]]; then
  echo "$binary"
  exit 0
fi

command -v go >/dev/null || { echo "build-prometheus: needs Go (>= 1.26.7) to build Prometheus $PROMETHEUS_VERSION from the Go module proxy" >&2; exit 1; }
export GOMODCACHE=$cache_root/gomodcache GOCACHE=$cache_root/gocache
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false"

# Staged next to the final place so the rename is atomic: an interrupted build never leaves a
# binary the check above would take as complete.
stage=$(mktemp -d "$cache_root/.build-$key.XXXXXX")
trap 'rm -rf "$stage"' EXIT
t0=$SECONDS
# Without these the binary reports an empty version (`go install` stamps none).
ldflags="-s -w -X github.com/prometheus/common/version.Version=$PROMETHEUS_VERSION"
ldflags+=" -X github.com/prometheus/common/version.Branch=release"
GOBIN=$stage/bin go install -trimpath -tags "$TAGS" -ldflags "$ldflags" \
  "github.com/prometheus/prometheus/cmd/prometheus@$module_version"
"$stage/bin/prometheus" --version >/dev/null
chmod 755 "$stage"
if ! mv -T "$stage" "$cache_root/$key" 2>/dev/null && [[ ! -x $binary ]]; then
  rm -rf "${cache_root:?}/$key"
  mv -T "$stage" "$cache_root/$key"
fi
echo "build-prometheus: built Prometheus $PROMETHEUS_VERSION ($module_version, tags $TAGS) in $((SECONDS - t0)) s; cache $(du -sh "$cache_root" | cut -f1)" >&2
echo "$binary"

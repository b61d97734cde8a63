#!/usr/bin/env bash
# Builds a real Kubernetes control plane for the cluster tests, from Go modules only:
# kube-apiserver, kube-controller-manager, kube-scheduler, kubectl and etcd through the
# wrapper module in hack/k8s, kwok and helm from their own released modules.
#
#   scripts/build-k8s.sh        # prints the bin directory on stdout, logs on stderr
#
# Binaries land outside the repository, keyed by every version that goes into them, so
# that a warm machine (a developer's, or CI on the same machine) skips the build:
#   ${DBABENCH_CACHE:-/var/cache/dbabench}/k8s/<k8s>-etcd<v>-kwok<v>-helm<v>/bin/
# next to kwok-stages/, the kwok Stage files the kwok controller is started with.
# GOMODCACHE and GOCACHE live under the same root for the same reason.
# Cold: about 20 minutes on 2 cores, and 5.6 GB of cache (GOCACHE 4.1 GB, GOMODCACHE 1.1 GB,
# binaries 0.46 GB). Warm: a few milliseconds.
set -euo pipefail

KWOK_VERSION=v0.8.0   # its default Kubernetes is 1.36.1: keep hack/k8s on the same minor
HELM_VERSION=v3.22.0

repo=$(cd "$(dirname "$0")/.." && pwd)
wrapper=$repo/hack/k8s
cache_root=${DBABENCH_CACHE:-/var/cache/dbabench}/k8s

# Read from go.mod rather than asking `go list`, which loads the whole module graph: the warm
# path below has to stay well under a second.
modver() { awk -v m="$1" '$1 == m { print $2; exit } $1 == "require" && $2 == m { print $3; exit }' "$wrapper/go.mod"; }
k8s=$(modver k8s.io/kubernetes)
etcd=$(modver go.etcd.io/etcd/server/v3)
[[ -n $k8s && -n $etcd ]] || { echo "build-k8s: cannot read versions from $wrapper/go.mod" >&2; exit 1; }

key="$k8s-etcd${etcd#v}-kwok${KWOK_VERSION#v}-helm${HELM_VERSION#v}"
bin=$cache_root/$key/bin
binaries=(kube-apiserver kube-controller-manager kube-scheduler kubectl etcd kwok helm)
# The stages kwokctl itself gives its kwok controller: node init, heartbeat with a Lease,
# pod ready/complete/delete. Paths inside the kwok module.
kwok_stages=(node/fast/node-initialize.yaml node/heartbeat-with-lease/node-heartbeat-with-lease.yaml
             pod/fast/pod-ready.yaml pod/fast/pod-complete.yaml pod/fast/pod-delete.yaml)

all_present() {
  local b s
  for b in "${binaries[@]}"; do [[ -x $1/bin/$b ]] || return 1; done
  for s in "${kwok_stages[@]}"; do [[ -f $1/kwok-stages/${s##*/} ]] || return 1; done
}
if all_present "$cache_root/$key"; then
  echo "$bin"
  exit 0
fi
# One build at a time (make test's two workers both ask): whoever waited finds it built.
mkdir -p "$cache_root"
exec 9>"$cache_root/.build.lock"
flock 9
if all_present "$cache_root/$key"; then
  echo "$bin"
  exit 0
fi

command -v go >/dev/null || { echo "build-k8s: needs Go (>= the go directive in $wrapper/go.mod)" >&2; exit 1; }
export GOMODCACHE=$cache_root/gomodcache GOCACHE=$cache_root/gocache
# No VCS stamping: it would make the etcd binary depend on this repository's commit (and fail
# where git cannot read the checkout); with -trimpath and a fixed build date the binaries are
# then byte-for-byte the same on every machine.
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS="-mod=mod -buildvcs=false"
mkdir -p "$cache_root"

# Build next to the final place so the rename is atomic: a concurrent or interrupted build
# never leaves a half-filled bin/ that the check above would take as complete.
stage=$(mktemp -d "$cache_root/.build-$key.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir "$stage/bin" "$stage/kwok-stages"

t0=$SECONDS
lap() { echo "build-k8s: $1 in $((SECONDS - t_lap)) s" >&2; t_lap=$SECONDS; }
t_lap=$SECONDS

# The release date as build date keeps the binaries reproducible; without gitVersion the
# binaries call themselves v0.0.0-master and clients' version skew checks misfire.
released=$(go mod download -json "k8s.io/kubernetes@$k8s" | sed -n 's/^\t"Info": "\(.*\)",$/\1/p')
build_date=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$released")
minor=${k8s#v1.}; minor=${minor%%.*}
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$k8s -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
  ldflags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=$build_date"
done
lap "resolving $k8s"

# One `go build` for all five so their shared packages are compiled once.
(cd "$wrapper" && go build -trimpath -ldflags "$ldflags" -o "$stage/bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
  k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl ./cmd/etcd)
lap "kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, etcd $etcd"

# kwok and helm build against their own go.mod (go install pkg@version ignores ours), so
# their dependencies are the ones their releases were tested with, not ours merged in.
GOBIN=$stage/bin go install -trimpath \
  -ldflags "-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$KWOK_VERSION" \
  "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
# Copied out of GOMODCACHE so that cleaning the module cache cannot break a built cache entry.
kwok_dir=$(cd "$stage" && go mod download -json "sigs.k8s.io/kwok@$KWOK_VERSION" |
  sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
for s in "${kwok_stages[@]}"; do cp "$kwok_dir/kustomize/stage/$s" "$stage/kwok-stages/"; done
chmod 644 "$stage"/kwok-stages/*
lap "kwok $KWOK_VERSION"
GOBIN=$stage/bin go install -trimpath \
  -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean" \
  "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
lap "helm $HELM_VERSION"

all_present "$stage" || { echo "build-k8s: a binary or stage is missing from $stage" >&2; exit 1; }
chmod 755 "$stage"
# rename(2) refuses a non-empty target: either a build that ran alongside got there first
# (keep it), or an incomplete leftover is in the way (replace it).
if ! mv -T "$stage" "$cache_root/$key" 2>/dev/null && ! all_present "$cache_root/$key"; then
  rm -rf "$cache_root/$key"
  mv -T "$stage" "$cache_root/$key"
fi
echo "build-k8s: built $key in $((SECONDS - t0)) s; cache $(du -sh "$cache_root" | cut -f1)" >&2
echo "$bin"

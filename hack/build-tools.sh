#!/usr/bin/env bash
# Builds the tools convoy's tests and demo need, from the Go module proxy
# (or takes Debian's packages of the registry, Prometheus and Chromium),
# into a cache outside the repository (one directory per tool and version, so a
# changed pin builds anew and an unchanged one is never rebuilt):
#
#   $TOOLS/k8s-$K8S_VERSION/bin/{kube-apiserver,kube-controller-manager,kube-scheduler,etcd}
#   $TOOLS/kwok-$KWOK_VERSION/bin/kwok
#   $TOOLS/helm-$HELM_VERSION/bin/helm
#   $TOOLS/helm3-$HELM3_VERSION/bin/helm   (Helm 3, client-side apply, for interop tests)
#   $TOOLS/registry-debian/bin/registry   (the OCI registry of the tests: Debian's
#       docker-registry package, unpacked, where apt-get can download it;
#       else $TOOLS/registry-$REGISTRY_VERSION/bin/registry, built)
#   $TOOLS/helmfile-$HELMFILE_VERSION/bin/helmfile   (the oracle of `convoy import helmfile`)
#   $TOOLS/cosign-$COSIGN_VERSION/bin/cosign   (the oracle of `convoy push --sign-key`)
#   $TOOLS/prometheus-$PROMETHEUS_VERSION/bin/prometheus   (the metric gate's tests; only
#       where no package manager gives one: with apt-get, Debian's `prometheus`
#       package is installed instead, /usr/bin/prometheus)
#   $TOOLS/controller-gen-$CONTROLLER_GEN_VERSION/bin/controller-gen   (make generate: the API
#       types' deepcopy functions and CRDs)
#
# Usage: hack/build-tools.sh [--locked FILE] [k8s] [kwok] [helm] [registry] [prometheus] [helm3] [helmfile] [cosign] [chromium] [postgresql] [jq] [controller-gen]
# (default: all). Prints nothing but progress on stderr.
#
# The tools named are built side by side. Safe to run concurrently: each tool
# is built in a temporary directory and renamed into place, under an
# exclusive flock(1) of $TOOLS/.build-NAME.lock held for that tool's build
# only. All the locks of a run are taken before the first build, in one fixed
# order, and then --locked FILE is created: a caller
# that starts this script in the background (hack/test.sh) waits for FILE, and
# from then on a test that finds a tool missing waits for that tool's lock
# (devcluster.Locate*) instead of failing while it is being built.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools.env
source "$here/tools.env"
TOOLS=${CONVOY_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/convoy/tools}
mkdir -p "$TOOLS"

log() { printf 'build-tools: %s\n' "$*" >&2; }

# The builds are bound by CPU, and three settings cut it (measured, with
# what was tried and left, in docs/devcluster.md): GOGC=400 (a caller's GOGC
# is kept), one back-end thread per compile (-c=1), and, for the oracles only,
# no inlining (-l: the same program; the control plane and kwok, which run
# throughout the tests, keep full optimisation).
export GOGC=${GOGC:-400}
gcflags=all=-c=1
oracle_gcflags="all=-c=1 -l"

# finish TMP DEST: marks a finished build and renames it into place, so a
# half-built tool is never mistaken for a finished one.
finish() {
  local tmp=$1 dest=$2
  touch "$tmp/.done"
  rm -rf "$dest.old"
  if [ -e "$dest" ]; then mv "$dest" "$dest.old"; fi
  mv "$tmp" "$dest"
  rm -rf "$dest.old"
}

build_k8s() {
  local dest="$TOOLS/k8s-$K8S_VERSION"
  [ -f "$dest/.done" ] && return 0
  log "building kube-apiserver, kube-controller-manager, kube-scheduler, etcd $K8S_VERSION (several minutes, once per machine)"
  local tmp minor
  tmp=$(mktemp -d "$TOOLS/.k8s.XXXXXX")
  minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
  local pkg=k8s.io/component-base/version
  local ldflags="-s -w -X $pkg.gitVersion=$K8S_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
  (cd "$here/tools" && CGO_ENABLED=0 go build -trimpath -gcflags="$gcflags" -ldflags "$ldflags" -o "$tmp/bin/" \
      k8s.io/kubernetes/cmd/kube-apiserver \
      k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler \
      ./etcd)
  finish "$tmp" "$dest"
  log "k8s $K8S_VERSION ready in $dest"
}

# go_install NAME VERSION PACKAGE WHAT [GCFLAGS]: a tool that `go install` builds
# (with $gcflags unless GCFLAGS are given).
go_install() {
  local name=$1 version=$2 pkg=$3 what=$4 flags=${5:-$gcflags}
  local dest="$TOOLS/$name-$version"
  [ -f "$dest/.done" ] && return 0
  log "building $name $version ($what)"
  local tmp
  tmp=$(mktemp -d "$TOOLS/.$name.XXXXXX")
  GOBIN="$tmp/bin" CGO_ENABLED=0 go install -trimpath -gcflags="$flags" -ldflags "-s -w" "$pkg@$version"
  finish "$tmp" "$dest"
  log "$name $version ready in $dest"
}

# kwok, the fake kubelet, is built in the control plane's module
# (hack/tools/go.mod pins it), against the control plane's Kubernetes
# libraries, so the packages both import are compiled once: it waits for a
# control-plane build under way (its lock), then finds them compiled
# (docs/devcluster.md).
build_kwok() {
  local dest="$TOOLS/kwok-$KWOK_VERSION"
  [ -f "$dest/.done" ] && return 0
  grep -q "^[[:space:]]*sigs.k8s.io/kwok $KWOK_VERSION\$" "$here/tools/go.mod" ||
    { log "kwok: hack/tools.env pins $KWOK_VERSION, hack/tools/go.mod another (go get sigs.k8s.io/kwok@$KWOK_VERSION there)"; exit 1; }
  if command -v flock >/dev/null; then flock -s "$TOOLS/.build-k8s.lock" true; fi
  log "building kwok $KWOK_VERSION (the fake kubelet)"
  local tmp
  tmp=$(mktemp -d "$TOOLS/.kwok.XXXXXX")
  (cd "$here/tools" && CGO_ENABLED=0 go build -trimpath -gcflags="$gcflags" -ldflags "-s -w" -o "$tmp/bin/kwok" sigs.k8s.io/kwok/cmd/kwok)
  finish "$tmp" "$dest"
  log "kwok $KWOK_VERSION ready in $dest"
}
build_helm() { go_install helm "$HELM_VERSION" helm.sh/helm/v4/cmd/helm "the oracle for render parity and storage interop" "$oracle_gcflags"; }
build_helm3() { go_install helm3 "$HELM3_VERSION" helm.sh/helm/v3/cmd/helm "Helm 3, whose client-side-applied releases convoy upgrades" "$oracle_gcflags"; }
# apt_update fetches the package lists, as root (or with sudo -n).
apt_update() {
  local sudo=
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  [ -z "$sudo" ] || sudo -n true 2>/dev/null || return 1
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 -q update >&2
}
# The OCI registry of the tests, which need any distribution 2.8+ or 3.x
# registry (OCI manifests and indexes with any config and layer types, basic
# auth, TLS, notifications; signatures are tags, not the referrers API): a
# docker-registry already on PATH, else Debian's package unpacked into the
# cache (seconds, where the source build takes minutes), else the source
# build. The package is unpacked, not installed: installing it would add a
# system user and start a registry service on :5000.
registry_fits() {
  "$1" --version 2>/dev/null | grep -qE ' v?(2\.([89]|[1-9][0-9])|3)\.'
}
build_registry() {
  [ -f "$TOOLS/registry-$REGISTRY_VERSION/.done" ] && return 0
  [ -f "$TOOLS/registry-debian/.done" ] && return 0
  registry_fits docker-registry && return 0
  if command -v apt-get >/dev/null && command -v dpkg-deb >/dev/null; then
    log "unpacking Debian's docker-registry package (the OCI registry of the tests)"
    local tmp
    tmp=$(mktemp -d "$TOOLS/.registry-debian.XXXXXX")
    # A fresh machine has no package lists yet: update (as root) only when
    # the download cannot find the package.
    if (cd "$tmp" && { apt-get -q download docker-registry >/dev/null 2>&1 || { apt_update && apt-get -q download docker-registry >&2; }; }) &&
      dpkg-deb -x "$tmp"/docker-registry_*.deb "$tmp/deb" && mkdir "$tmp/bin" &&
      mv "$tmp/deb/usr/bin/docker-registry" "$tmp/bin/registry" && rm -rf "$tmp/deb" "$tmp"/*.deb &&
      registry_fits "$tmp/bin/registry"; then
      finish "$tmp" "$TOOLS/registry-debian"
      log "registry ready in $TOOLS/registry-debian ($("$TOOLS/registry-debian/bin/registry" --version))"
      return 0
    fi
    rm -rf "$tmp"
    log "Debian's docker-registry package could not be unpacked: building the registry from source"
  fi
  go_install registry "$REGISTRY_VERSION" github.com/distribution/distribution/v3/cmd/registry "OCI chart sources in tests"
}
# controller-gen is built from its own go.mod, exactly as released (not in
# hack/tools, whose Kubernetes libraries are the control plane's), with full
# optimisation: `make generate` runs it, and CI every time.
build_controller-gen() { go_install controller-gen "$CONTROLLER_GEN_VERSION" sigs.k8s.io/controller-tools/cmd/controller-gen "make generate: deepcopy and CRDs"; }
build_cosign() { go_install cosign "$COSIGN_VERSION" github.com/sigstore/cosign/v3/cmd/cosign "the oracle of convoy push --sign-key; several minutes" "$oracle_gcflags"; }
# Prometheus for the metric gate's tests, which need any 2.x or 3.x server
# (the instant-query API). A package manager's build takes seconds where the
# source build takes a quarter of an hour: a prometheus already on PATH, else
# Debian's package where apt-get can install it, else the source build.
# Prometheus 3.x is published as module versions v0.3xx.y (3.16.0 is v0.316.0).
system_prometheus() {
  local v
  v=$(prometheus --version 2>/dev/null | sed -n '1s/^prometheus, version \([0-9]*\)\..*/\1/p')
  [ "$v" = 2 ] || [ "$v" = 3 ]
}
build_prometheus() {
  [ -f "$TOOLS/prometheus-$PROMETHEUS_VERSION/.done" ] && return 0
  system_prometheus && return 0
  local sudo=
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  if command -v apt-get >/dev/null && { [ -z "$sudo" ] || sudo -n true 2>/dev/null; }; then
    log "installing Debian's prometheus package (the metric gate's tests)"
    local apt=($sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 -y -q --no-install-recommends)
    # A fresh machine has no package lists yet: update only when the install
    # cannot find the package.
    if "${apt[@]}" install prometheus >&2 || { "${apt[@]}" update >&2 && "${apt[@]}" install prometheus >&2; }; then
      system_prometheus && { log "prometheus ready: $(command -v prometheus)"; return 0; }
    fi
    log "Debian's prometheus package could not be installed: building it from source"
  fi
  go_install prometheus "$PROMETHEUS_VERSION" github.com/prometheus/prometheus/cmd/prometheus "the metric gate's tests; a quarter of an hour"
}

# apt_install PKG WHY: installs Debian's package PKG (never built), as
# root or with passwordless sudo; fails where neither is possible.
apt_install() {
  local sudo=
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  command -v apt-get >/dev/null || return 1
  [ -z "$sudo" ] || sudo -n true 2>/dev/null || return 1
  log "installing Debian's $1 package ($2)"
  local apt=($sudo env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=300 -y -q --no-install-recommends)
  "${apt[@]}" install "$1" >&2 || { "${apt[@]}" update >&2 && "${apt[@]}" install "$1" >&2; }
}

# Chromium for convoy ui's browser tests: Debian's package (or a chromium
# already on PATH).
build_chromium() {
  command -v chromium >/dev/null && return 0
  apt_install chromium "convoy ui's browser tests" && command -v chromium >/dev/null &&
    { log "chromium ready: $(command -v chromium)"; return 0; }
  log "chromium: no chromium on PATH and Debian's package could not be installed (convoy ui's browser tests need it)"
  return 1
}

# PostgreSQL for the SQL storage's tests (Helm's HELM_DRIVER=sql): Debian's
# package (its server binaries in /usr/lib/postgresql/VERSION/bin), or
# initdb and postgres already on PATH.
system_postgresql() {
  command -v initdb >/dev/null && command -v postgres >/dev/null && return 0
  ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1
}
build_postgresql() {
  system_postgresql && return 0
  apt_install postgresql "the SQL storage's tests" && system_postgresql &&
    { log "postgresql ready: $(ls -d /usr/lib/postgresql/*/bin | tail -1)"; return 0; }
  log "postgresql: no initdb/postgres on PATH or in /usr/lib/postgresql and Debian's package could not be installed (the SQL storage's tests need it)"
  return 1
}

# jq for the GitLab CI example's test (docs/ci/gitlab-ci.yml turns SARIF
# into a Code Quality report with jq): Debian's package, or jq on PATH.
build_jq() {
  command -v jq >/dev/null && return 0
  apt_install jq "the GitLab CI example's test" && command -v jq >/dev/null &&
    { log "jq ready: $(command -v jq)"; return 0; }
  log "jq: no jq on PATH and Debian's package could not be installed (the GitLab CI example's test needs it)"
  return 1
}

# helmfile's go.mod has replace directives, which `go install pkg@version`
# refuses; so it is built inside a writable copy of the module source the
# proxy serves, where its replace directives apply.
build_helmfile() {
  local dest="$TOOLS/helmfile-$HELMFILE_VERSION"
  [ -f "$dest/.done" ] && return 0
  log "building helmfile $HELMFILE_VERSION (the oracle of convoy import helmfile; several minutes)"
  local tmp dir
  tmp=$(mktemp -d "$TOOLS/.helmfile.XXXXXX")
  dir=$(cd "$tmp" && go mod download -json "github.com/helmfile/helmfile@$HELMFILE_VERSION" |
    sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
  [ -n "$dir" ] || { log "helmfile $HELMFILE_VERSION: the module proxy gave no source directory"; exit 1; }
  cp -R "$dir" "$tmp/src"
  chmod -R u+w "$tmp/src"
  (cd "$tmp/src" && CGO_ENABLED=0 go build -trimpath -gcflags="$oracle_gcflags" \
      -ldflags "-s -w -X go.szostok.io/version.version=$HELMFILE_VERSION" -o "$tmp/bin/helmfile" .)
  rm -rf "$tmp/src"
  finish "$tmp" "$dest"
  log "helmfile $HELMFILE_VERSION ready in $dest"
}

# Quick ones first, so that tests waiting on them wait least.
all=(k8s kwok helm registry prometheus helm3 helmfile cosign chromium postgresql jq controller-gen)
signal=
if [ "${1:-}" = --locked ]; then signal=${2:?--locked needs a file}; shift 2; fi
wanted=("$@")
[ ${#wanted[@]} -eq 0 ] && wanted=("${all[@]}")
for a in "${wanted[@]}"; do
  case " ${all[*]} " in *" $a "*) ;; *) echo "build-tools: unknown tool $a (want ${all[*]})" >&2; exit 2 ;; esac
done
targets=()
for t in "${all[@]}"; do  # the fixed order in which locks are taken
  for a in "${wanted[@]}"; do [ "$a" = "$t" ] && { targets+=("$t"); break; }; done
done

# One open file description per tool, locked exclusively; closing it (after
# that tool's build) releases the lock for anyone waiting on it. Without
# flock(1) (not on every system) there is no waiting: concurrent runs still
# never see a half-built tool.
declare -A lockfd
for t in "${targets[@]}"; do
  command -v flock >/dev/null || break
  exec {fd}>>"$TOOLS/.build-$t.lock"
  flock -x "$fd"
  lockfd[$t]=$fd
done
[ -z "$signal" ] || : >"$signal"

# The builds run side by side: on two cores one build's downloads and
# single-threaded links leave room for another's compiles. Each runs in a
# subshell holding its own tool's lock only (the parent closes its copies),
# so a lock is released as soon as that tool is built; and the build itself
# runs with that descriptor closed, so that nothing it starts (a package's
# daemon) holds the lock past the build.
build() {
  local t=$1 fd=$2 start=$SECONDS
  if [ -n "$fd" ]; then "build_$t" {fd}>&-; else "build_$t"; fi
  if [ $((SECONDS - start)) -gt 1 ]; then log "$t took $((SECONDS - start)) s"; fi
}
pids=()
for t in "${targets[@]}"; do
  (
    for u in "${!lockfd[@]}"; do
      if [ "$u" != "$t" ]; then fd=${lockfd[$u]}; exec {fd}>&-; fi
    done
    build "$t" "${lockfd[$t]:-}"
  ) &
  pids+=($!)
done
for u in "${!lockfd[@]}"; do fd=${lockfd[$u]}; exec {fd}>&-; done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=1; done
exit "$failed"

#!/usr/bin/env bash
# Builds the tools convoy's tests and demo need, from the Go module proxy only,
# into a cache outside the repository (one directory per tool and version, so a
# changed pin builds anew and an unchanged one is never rebuilt):
#
#   $TOOLS/k8s-$K8S_VERSION/bin/{kube-apiserver,kube-controller-manager,kube-scheduler,etcd}
#   $TOOLS/kwok-$KWOK_VERSION/bin/kwok
#   $TOOLS/helm-$HELM_VERSION/bin/helm
#   $TOOLS/helm3-$HELM3_VERSION/bin/helm   (Helm 3, client-side apply, for interop tests)
#   $TOOLS/registry-$REGISTRY_VERSION/bin/registry   (the OCI registry of the chart-source tests)
#   $TOOLS/helmfile-$HELMFILE_VERSION/bin/helmfile   (the oracle of `convoy import helmfile`)
#   $TOOLS/prometheus-$PROMETHEUS_VERSION/bin/prometheus   (the metric gate's tests)
#
# Usage: hack/build-tools.sh [k8s] [kwok] [helm] [helm3] [registry] [helmfile] [prometheus]   (default: all)
# Prints nothing but progress on stderr; safe to run concurrently (each tool is
# built in a temporary directory and renamed into place).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=tools.env
source "$here/tools.env"
TOOLS=${CONVOY_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/convoy/tools}
mkdir -p "$TOOLS"

log() { printf 'build-tools: %s\n' "$*" >&2; }

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
  (cd "$here/tools" && CGO_ENABLED=0 go build -trimpath -ldflags "$ldflags" -o "$tmp/bin/" \
      k8s.io/kubernetes/cmd/kube-apiserver \
      k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler \
      ./etcd)
  finish "$tmp" "$dest"
  log "k8s $K8S_VERSION ready in $dest"
}

# go_install NAME VERSION PACKAGE WHAT: a tool that `go install` builds.
go_install() {
  local name=$1 version=$2 pkg=$3 what=$4
  local dest="$TOOLS/$name-$version"
  [ -f "$dest/.done" ] && return 0
  log "building $name $version ($what)"
  local tmp
  tmp=$(mktemp -d "$TOOLS/.$name.XXXXXX")
  GOBIN="$tmp/bin" CGO_ENABLED=0 go install -trimpath -ldflags "-s -w" "$pkg@$version"
  finish "$tmp" "$dest"
  log "$name $version ready in $dest"
}

build_kwok() { go_install kwok "$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok "the fake kubelet"; }
build_helm() { go_install helm "$HELM_VERSION" helm.sh/helm/v4/cmd/helm "the oracle for render parity and storage interop"; }
build_helm3() { go_install helm3 "$HELM3_VERSION" helm.sh/helm/v3/cmd/helm "Helm 3, whose client-side-applied releases convoy upgrades"; }
build_registry() { go_install registry "$REGISTRY_VERSION" github.com/distribution/distribution/v3/cmd/registry "OCI chart sources in tests"; }
# Prometheus 3.x is published as module versions v0.3xx.y (3.16.0 is v0.316.0).
build_prometheus() { go_install prometheus "$PROMETHEUS_VERSION" github.com/prometheus/prometheus/cmd/prometheus "the metric gate's tests; several minutes"; }

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
  (cd "$tmp/src" && CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X go.szostok.io/version.version=$HELMFILE_VERSION" -o "$tmp/bin/helmfile" .)
  rm -rf "$tmp/src"
  finish "$tmp" "$dest"
  log "helmfile $HELMFILE_VERSION ready in $dest"
}

targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(k8s kwok helm helm3 registry helmfile prometheus)
for t in "${targets[@]}"; do
  case $t in
    k8s|kwok|helm|helm3|registry|helmfile|prometheus) "build_$t" ;;
    *) echo "build-tools: unknown tool $t (want k8s, kwok, helm, helm3, registry, helmfile, prometheus)" >&2; exit 2 ;;
  esac
done

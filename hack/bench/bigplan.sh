#!/usr/bin/env bash
# Plan size benchmark (issue 39.1): a Stack of real public charts —
# podinfo, bitnami redis, bitnami nginx and traefik — planned by
# `convoy controller`, and the size of what it stores: the saved plan's
# bytes, how many Secrets hold it, and the largest. It also prints the
# size of the same plan saved by the CLI (`convoy plan --out`, which
# embeds the stack's files, as the controller's plans did before they
# named the artifact by digest). Not run by the tests; needs no network
# but the charts' git repositories, which it never copies into the tree:
#
#   PODINFO_GIT  (default /work/.mirror/stefanprodan+podinfo/repo)
#   TRAEFIK_GIT  (default /work/.mirror/traefik+traefik-helm-chart/repo)
#   BITNAMI_GIT  (default /work/.mirror/bitnami+charts/repo)
#
# bitnami's charts depend on bitnami/common from an OCI registry: the
# script puts the repository's common into each chart's charts/ and drops
# the dependency from Chart.yaml, so that nothing is pulled.
#
# Usage: hack/bench/bigplan.sh. Needs the devcluster tools and the
# registry (source the tools' env). BENCH_KUBECONFIG, when set, is a
# running devcluster to use instead of starting one.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
podinfo_git=${PODINFO_GIT:-/work/.mirror/stefanprodan+podinfo/repo}
traefik_git=${TRAEFIK_GIT:-/work/.mirror/traefik+traefik-helm-chart/repo}
bitnami_git=${BITNAMI_GIT:-/work/.mirror/bitnami+charts/repo}
: "${CONVOY_REGISTRY:?set CONVOY_REGISTRY to the registry binary (make tools)}"
work=$(mktemp -d)
ns=bench-bigplan-$RANDOM
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -f "$work/dc/kubeconfig" ] && "$work/devcluster" down --state "$work/dc" >/dev/null 2>&1 || true
  [ -n "${BENCH_KUBECONFIG:-}" ] && kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
(cd "$root" && CGO_ENABLED=0 go build -o "$work/convoy" ./cmd/convoy && go build -o "$work/devcluster" ./hack/devcluster)
if [ -n "${BENCH_KUBECONFIG:-}" ]; then
  export KUBECONFIG=$BENCH_KUBECONFIG
else
  "$work/devcluster" up --state "$work/dc" >/dev/null
  export KUBECONFIG=$work/dc/kubeconfig
fi

# The charts, from the repositories' HEAD.
stack=$work/stack
mkdir -p "$stack/charts"
export_chart() { # GIT_DIR PATH NAME
  mkdir -p "$work/x"
  git --git-dir "$1" archive HEAD "$2" | tar -x -C "$work/x"
  mv "$work/x/$2" "$stack/charts/$3"
  rm -rf "$work/x"
}
export_chart "$podinfo_git" charts/podinfo podinfo
export_chart "$traefik_git" traefik traefik
for c in redis nginx; do
  export_chart "$bitnami_git" "bitnami/$c" "$c"
  mkdir -p "$stack/charts/$c/charts"
  git --git-dir "$bitnami_git" archive HEAD bitnami/common | tar -x -C "$work" && mv "$work/bitnami/common" "$stack/charts/$c/charts/common" && rm -rf "$work/bitnami"
  rm -f "$stack/charts/$c/Chart.lock"
  awk '/^dependencies:/{skip=1; next} skip && /^[^ -]/{skip=0} !skip' "$stack/charts/$c/Chart.yaml" > "$work/Chart.yaml" && mv "$work/Chart.yaml" "$stack/charts/$c/Chart.yaml"
done
cat > "$stack/stack.hcl" <<HCL
stack "web" {
  default_namespace = "$ns"
}
release "podinfo" { chart = "./charts/podinfo" }
release "redis"   { chart = "./charts/redis" }
release "nginx"   { chart = "./charts/nginx" }
release "traefik" { chart = "./charts/traefik" }
HCL

port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/registry.yml" <<YML
version: 0.1
log: { level: error, accesslog: { disabled: true } }
storage: { filesystem: { rootdirectory: $work/registry } }
http: { addr: 127.0.0.1:$port, secret: bench }
YML
"$CONVOY_REGISTRY" serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
pids+=($!)
until curl -sf "http://127.0.0.1:$port/v2/" >/dev/null; do sleep 0.1; done

"$work/convoy" controller install >/dev/null
kubectl create namespace "$ns" >/dev/null
"$work/convoy" plan -C "$stack" --out "$work/cli.cvp" >/dev/null 2>&1
echo "CLI plan file (stack files embedded): $(stat -c %s "$work/cli.cvp") bytes"

"$work/convoy" push "$stack" "oci://127.0.0.1:$port/stacks/web:v1" >/dev/null 2>&1
"$work/convoy" controller --namespace "$ns" --cache-dir "$work/cache" --metrics-address 0 --health-address 0 >"$work/controller.log" 2>&1 &
pids+=($!)
kubectl apply -f - >/dev/null <<YAML
apiVersion: convoy.dev/v1alpha1
kind: Stack
metadata: { name: web, namespace: $ns }
spec: { source: "oci://127.0.0.1:$port/stacks/web:v1", approval: manual, interval: 10m }
YAML
for _ in $(seq 600); do
  reason=$(kubectl get stack web -n "$ns" -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}')
  case $reason in ApprovalRequired | UpToDate | PlanFailed | Invalid | PlanTooLarge) break ;; esac
  sleep 0.5
done
echo "Stack web: Ready reason $reason"
if [ "$reason" != ApprovalRequired ]; then
  kubectl get stack web -n "$ns" -o jsonpath='{.status.conditions[?(@.type=="Ready")].message}'; echo
  exit 1
fi
"$work/convoy" show --stack web -n "$ns" | head -1
kubectl get secrets -n "$ns" -l convoy.dev/stack-object=web -o json |
  python3 -c 'import json,sys,base64
items=json.load(sys.stdin)["items"]
sizes=[sum(len(k)+len(base64.b64decode(v)) for k,v in s.get("data",{}).items()) for s in items]
print("controller: %d Secrets, %d bytes, the largest %d bytes" % (len(items), sum(sizes), max(sizes)))'

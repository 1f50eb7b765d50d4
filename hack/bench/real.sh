#!/usr/bin/env bash
# Real-chart plan benchmark (issue 56): a stack of eight real public
# charts, as a new user would write it, applied once to a devcluster, then
# planned: the median of 5 no-change plans, of 5 `--refresh=full` plans and
# of 5 plans with one value changed, with the `--stats` line of each kind
# and the load (uptime) before each. Goals (issue 56): no-change <= 1.0 s
# median on two cores and <= 0.2x its own full refresh; one value changed
# <= 2.0 s; the no-change plan reads no record whole and makes no dry run.
#
# It fetches nothing: the caller gives a directory of charts (never copied
# into the tree), laid out as
#
#   CHARTS/podinfo                 stefanprodan/podinfo charts/podinfo
#   CHARTS/postgresql              bitnami/charts bitnami/postgresql
#   CHARTS/redis                   bitnami/charts bitnami/redis
#   CHARTS/keycloak                bitnami/charts bitnami/keycloak
#   CHARTS/traefik                 traefik/traefik-helm-chart traefik
#   CHARTS/ingress-nginx           kubernetes/ingress-nginx charts/ingress-nginx
#   CHARTS/kube-prometheus-stack   prometheus-community/helm-charts
#                                  charts/kube-prometheus-stack
#
# with their dependencies vendored in each chart's charts/ directory:
# bitnami/common in postgresql, redis and keycloak (keycloak also gets
# postgresql, disabled by its values); kube-state-metrics,
# prometheus-node-exporter and prometheus-windows-exporter (from
# prometheus-community/helm-charts charts/) and grafana (from
# grafana-community/helm-charts charts/grafana) in kube-prometheus-stack.
# With the search tool's `fetch` (a bare git directory per repository):
#
#   g() { git --git-dir=/work/.mirror/$1/repo archive HEAD "${@:2}" | tar -x -C "$tmp"; }
#   g stefanprodan+podinfo charts/podinfo; g bitnami+charts bitnami/common ...
#
# then move each chart to CHARTS/<name> and copy the dependencies into its
# charts/ (docs/performance.md, "Real charts").
#
# The stack: postgresql and redis in namespace data; keycloak in auth,
# reading postgresql's Secret through its outputs
# (release.postgresql.resources); podinfo twice (count = 2) in web;
# traefik with crds = "create_replace" in traefik; ingress-nginx (its
# admission webhook's hook Jobs) in ingress-nginx; kube-prometheus-stack
# (its crds/ and operator) in monitoring. The one-value change sets
# podinfo's replicaCount (var.replicas). Releases are applied with
# wait = false (hooks still run): what is measured is the plans.
#
# Environment:
#   RUNS=5             plans of each kind
#   CONVOY_BEFORE=bin  another convoy: every plan is also run with it, in
#                      alternating order, on the same applied stack
#   BENCH_KUBECONFIG   a running devcluster to use instead of starting one
#                      (the stack is destroyed at the end; its CRDs stay)
#   CONVOY=bin         the convoy to measure instead of this tree's build
#   KEEP=1             leave the cluster, the stack and the binary (for
#                      profiling: plan --cpuprofile); the script says where
#
# Usage: hack/bench/real.sh CHARTS. Needs the devcluster tools (make tools).
set -euo pipefail

charts=$(cd "${1:?usage: hack/bench/real.sh CHARTS}" && pwd)
for c in podinfo postgresql redis keycloak traefik ingress-nginx kube-prometheus-stack; do
  [ -f "$charts/$c/Chart.yaml" ] || { echo "$charts/$c/Chart.yaml: missing (see the header of $0)" >&2; exit 2; }
done
root=$(cd "$(dirname "$0")/../.." && pwd)
runs=${RUNS:-5}
before=${CONVOY_BEFORE:-}
work=$(mktemp -d)
cleanup() {
  if [ -n "${KEEP:-}" ]; then
    echo "kept: $work (stack: $work/stack, KUBECONFIG=${KUBECONFIG:-})"
    return
  fi
  [ -n "${BENCH_KUBECONFIG:-}" ] && [ -f "$work/stack/stack.hcl" ] &&
    "$bin" destroy -C "$work/stack" --auto-approve --no-progress >/dev/null 2>&1
  [ -f "$work/dc/kubeconfig" ] && "$work/devcluster" down --state "$work/dc" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
bin=${CONVOY:-$work/convoy}
if [ -z "${CONVOY:-}" ]; then
  (cd "$root" && CGO_ENABLED=0 go build -o "$work/convoy" ./cmd/convoy)
fi
[ -n "${BENCH_KUBECONFIG:-}" ] || (cd "$root" && go build -o "$work/devcluster" ./hack/devcluster)
if [ -n "${BENCH_KUBECONFIG:-}" ]; then
  export KUBECONFIG=$BENCH_KUBECONFIG
else
  "$work/devcluster" up --state "$work/dc" >/dev/null
  export KUBECONFIG=$work/dc/kubeconfig
fi

stack=$work/stack
mkdir -p "$stack"
cat > "$stack/stack.hcl" <<HCL
stack "real" {
  default_namespace = "web"
}
variable "replicas" {
  type    = number
  default = 1
}
release "postgresql" {
  chart            = "$charts/postgresql"
  namespace        = "data"
  create_namespace = true
  wait             = false
  values = [{
    auth    = { username = "keycloak", database = "keycloak" }
    primary = { persistence = { enabled = false } }
  }]
}
release "redis" {
  chart            = "$charts/redis"
  namespace        = "data"
  create_namespace = true
  wait             = false
  values = [{
    architecture = "standalone"
    master       = { persistence = { enabled = false } }
  }]
}
release "keycloak" {
  chart            = "$charts/keycloak"
  namespace        = "auth"
  create_namespace = true
  wait             = false
  values = [{
    postgresql = { enabled = false }
    externalDatabase = {
      host     = "postgresql.data.svc"
      user     = "keycloak"
      database = "keycloak"
      password = base64decode(release.postgresql.resources["v1/Secret/postgresql"].data.password)
    }
  }]
}
release "podinfo" {
  count            = 2
  name             = "podinfo-\${count.index}"
  chart            = "$charts/podinfo"
  create_namespace = true
  wait             = false
  values           = [{ replicaCount = count.index == 0 ? var.replicas : 1 }]
}
release "traefik" {
  chart            = "$charts/traefik"
  namespace        = "traefik"
  create_namespace = true
  wait             = false
  crds             = "create_replace"
}
release "ingress-nginx" {
  chart            = "$charts/ingress-nginx"
  namespace        = "ingress-nginx"
  create_namespace = true
  wait             = false
}
release "kube-prometheus-stack" {
  chart            = "$charts/kube-prometheus-stack"
  name             = "kps"
  namespace        = "monitoring"
  create_namespace = true
  wait             = false
  values = [{
    nodeExporter = { enabled = true }
    grafana      = { enabled = true }
  }]
}
HCL

load() { cut -d' ' -f1-3 /proc/loadavg; }
echo "charts: $charts; load $(load)"
start=$(date +%s.%N)
"$bin" apply -C "$stack" --auto-approve --no-progress --stats >"$work/apply.out" 2>"$work/apply.err" || {
  cat "$work/apply.out" "$work/apply.err" >&2; exit 1; }
printf 'apply: %.1f s\n' "$(echo "$(date +%s.%N) - $start" | bc -l)"
grep -h '^stats:' "$work/apply.out" "$work/apply.err" | head -n 1 | sed 's/^stats:/ /' || true
sleep 5

# plans LABEL BIN ARGS...: RUNS plans; their wall seconds, the median, and
# the --stats line of the last. A plan with changes exits 2.
median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
declare -A medians
plans() {
  local label=$1 bin=$2 times=() s e
  shift 2
  local l; l=$(load)
  for _ in $(seq "$runs"); do
    s=$(date +%s.%N)
    "$bin" plan -C "$stack" --stats "$@" >"$work/out" 2>"$work/err" || [ $? -eq 2 ] || { cat "$work/err" >&2; exit 1; }
    e=$(date +%s.%N)
    times+=("$(printf '%.2f' "$(echo "$e - $s" | bc -l)")")
  done
  medians[$label]=$(median "${times[@]}")
  printf '%s: %s s, median %s s (load %s)\n' "$label" "${times[*]}" "${medians[$label]}" "$l"
  grep -h '^stats:' "$work/out" "$work/err" | head -n 1 | sed 's/^stats:/ /' || echo
}
# Each kind of plan, with CONVOY_BEFORE run by both binaries back to back.
kind() { # LABEL ARGS...
  local label=$1
  shift
  if [ -n "$before" ]; then
    plans "$label [before]" "$before" "$@"
    plans "$label [after]" "$bin" "$@"
  else
    plans "$label" "$bin" "$@"
  fi
}
kind "no change"
kind "refresh=full" --refresh=full
kind "one value changed" --var replicas=2
for s in "" " [before]" " [after]"; do
  [ -n "${medians["no change$s"]:-}" ] || continue
  printf 'no change / full refresh%s: %.2f\n' "$s" "$(echo "${medians["no change$s"]} / ${medians["refresh=full$s"]}" | bc -l)"
done

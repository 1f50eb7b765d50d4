#!/usr/bin/env bash
# Controller benchmark (issue 13) on a devcluster of its own: STACKS Stack
# objects (default 200) of RELEASES releases each (default 5; a ConfigMap
# and a Deployment of 0 replicas per release: the devcluster has room for
# ~300 pods), pushed to a local registry,
# split between two shards, each reconciled by one `convoy controller`
# process (--concurrency 8). It reports:
#
#   1. the time from starting the controllers to every Stack Ready (cold:
#      empty caches, nothing installed);
#   2. each controller's CPU time and peak RSS over that run, and the
#      Stacks' requests to the cluster by verb, per Stack, and the cluster
#      connections made (each reads discovery); the CPU time of the
#      devcluster's processes (API server, etcd, controller manager,
#      scheduler, kwok) meanwhile;
#   3. the reconcile latency of one changed Stack (a var changed in its
#      spec: until its new plan is applied and it is Ready again), with the
#      whole fleet idle at a 10m interval;
#   4. no-change reconciles: every Stack's interval set to 20s, one round
#      of plans let pass (the first plan after an apply lists directly),
#      then the requests of the next round (at least STACKS no-change
#      reconciles), by verb, per no-change reconcile, from both
#      controllers' convoy_controller_kube_requests_total; their stack
#      evaluations (convoy_controller_stack_evaluations_total) and the
#      controllers' CPU time meanwhile, per no-change reconcile.
#
# With BENCH_IDENTITY=1 the Stacks act as a service account (issue 38):
# the controllers run with --default-service-account deployer, and
# bench/deployer is bound to cluster-admin (the Stacks create their
# namespaces), so that only the cost of impersonating it is measured.
# With BENCH_IDENTITY=namespaced it is bound instead, in each Stack's
# namespace (created beforehand), to a ClusterRole of every verb on the
# core and apps kinds: a tenant's identity, which may not list or watch
# cluster-wide (its informers watch per namespace).
#
# Usage: hack/bench/controller.sh [STACKS] [RELEASES]. Needs the devcluster
# tools and the registry (make tools; source the tools' env). CONVOY_SRC
# names another checkout to build convoy from (before/after pairs with
# this script).
set -euo pipefail

root=${CONVOY_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
stacks=${1:-200}
releases=${2:-5}
: "${CONVOY_REGISTRY:?set CONVOY_REGISTRY to the registry binary (make tools)}"
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [ -f "$work/dc/kubeconfig" ] && "$work/devcluster" down --state "$work/dc" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
(cd "$root" && CGO_ENABLED=0 go build -o "$work/convoy" ./cmd/convoy && go build -o "$work/devcluster" ./hack/devcluster)
"$work/devcluster" up --state "$work/dc" >/dev/null
export KUBECONFIG=$work/dc/kubeconfig

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

# The chart and the stacks.
mkdir -p "$work/src/charts/app/templates"
cat > "$work/src/charts/app/Chart.yaml" <<'Y'
apiVersion: v2
name: app
version: 0.1.0
Y
cat > "$work/src/charts/app/templates/app.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: { name: {{ .Release.Name }}-config }
data: { message: {{ .Values.message | quote }} }
---
apiVersion: apps/v1
kind: Deployment
metadata: { name: {{ .Release.Name }} }
spec:
  replicas: 0
  selector: { matchLabels: { app: {{ .Release.Name }} } }
  template:
    metadata: { labels: { app: {{ .Release.Name }} } }
    spec: { containers: [ { name: app, image: "nginx:1.27" } ] }
Y
echo "pushing $stacks stacks of $releases releases ..."
pushes=()
start=$(date +%s.%N)
for n in $(seq 1 "$stacks"); do
  i=$(printf %04d "$n")
  d=$work/src/stacks/s$i
  mkdir -p "$d"
  cat > "$d/stack.hcl" <<HCL
stack "bench-$i" {
  default_namespace = "bench-$i"
}
variable "message" {
  default = "v1"
}
release "app" {
  count            = $releases
  name             = format("app-%d", count.index)
  chart            = "../../charts/app"
  create_namespace = true
  values           = [{ message = var.message }]
}
HCL
  "$work/convoy" push "$d" "oci://127.0.0.1:$port/stacks/s$i:v1" >/dev/null 2>>"$work/push.err" &
  pushes+=($!)
  # Pushes in parallel, four at a time (waiting for them, not the registry).
  if [ ${#pushes[@]} -eq 4 ]; then wait "${pushes[@]}"; pushes=(); fi
done
[ ${#pushes[@]} -eq 0 ] || wait "${pushes[@]}"
awk -v s="$start" -v e="$(date +%s.%N)" -v n="$stacks" 'BEGIN { printf "pushed %d stacks in %.1f s\n", n, e - s }'

"$work/convoy" controller install --min-interval 1s >/dev/null
kubectl create namespace bench >/dev/null
identity=()
case "${BENCH_IDENTITY:-}" in
1)
  kubectl create serviceaccount deployer -n bench >/dev/null
  kubectl create clusterrolebinding bench-deployer --clusterrole cluster-admin --serviceaccount bench:deployer >/dev/null
  identity=(--default-service-account deployer)
  ;;
namespaced)
  kubectl create serviceaccount deployer -n bench >/dev/null
  kubectl apply -f - >/dev/null <<'Y'
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: { name: bench-deployer }
rules: [{ apiGroups: ["", apps], resources: ["*"], verbs: ["*"] }]
Y
  # Its own namespace (the Stacks' and their records of no release), and
  # each Stack's releases' namespace.
  kubectl create rolebinding deployer -n bench --clusterrole bench-deployer --serviceaccount bench:deployer >/dev/null
  for n in $(seq 1 "$stacks"); do
    i=$(printf %04d "$n")
    kubectl create namespace "bench-$i" >/dev/null
    kubectl create rolebinding deployer -n "bench-$i" --clusterrole bench-deployer --serviceaccount bench:deployer >/dev/null
  done
  identity=(--default-service-account deployer)
  ;;
esac
for n in $(seq 1 "$stacks"); do
  i=$(printf %04d "$n")
  shard=$([ $((10#$i % 2)) -eq 0 ] && echo a || echo b)
  cat <<Y
---
apiVersion: convoy.dev/v1alpha1
kind: Stack
metadata: { name: s$i, namespace: bench, labels: { convoy.dev/shard: $shard } }
spec: { source: "oci://127.0.0.1:$port/stacks/s$i:v1", interval: 10m }
Y
done > "$work/stacks.yaml"
kubectl apply -f "$work/stacks.yaml" >/dev/null

ready() {
  kubectl get stacks -n bench -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c '^True$' || true
}
# cpu PID: user+system seconds; rss PID: peak RSS in MiB.
cpu() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / t }' "/proc/$1/stat"; }
rss() { awk '/VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$1/status"; }

# metric NAME [LABELS]: the sum over both controllers of one series.
metric() {
  local total=0 v key=$1
  [ -n "$2" ] && key="$1{$2}"
  for p in "${mport[@]}"; do
    v=$(curl -sf "http://127.0.0.1:$p/metrics" | awk -v k="$key" '$1 == k { print $2 }')
    total=$(awk -v a="$total" -v b="${v:-0}" 'BEGIN { printf "%.0f", a + b }')
  done
  echo "$total"
}
# clustercpu: "component=seconds" of user+system CPU for each of the
# devcluster's processes (the children of its supervisor, found by its
# state directory).
clustercpu() {
  local out="" p sup
  sup=$(pgrep -f "devcluster run --state $work/dc" | head -n 1)
  for p in $(pgrep -P "$sup" || true); do
    [ -r "/proc/$p/stat" ] || continue
    out+="$(cat "/proc/$p/comm")=$(cpu "$p") "
  done
  echo "$out"
}
cluster0=$(clustercpu)
echo "starting two controllers (shards a and b) ..."
start=$(date +%s.%N)
ctl=()
mport=()
for shard in a b; do
  p=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  mport+=("$p")
  "$work/convoy" controller --min-interval 1s --shard "$shard" --concurrency 8 --metrics-address "127.0.0.1:$p" --health-address 0 \
    --cache-dir "$work/cache-$shard" "${identity[@]}" >"$work/controller-$shard.log" 2>&1 &
  pids+=($!); ctl+=($!)
done
# Polled on the controllers' metrics (a Stack's reconcile is counted
# "applied" once its status says Ready), then confirmed on the Stacks:
# listing 1,000 Stacks every second was a tenth of the API server's work.
late() { [ "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print (e - s > 1800) }')" = 1 ]; }
until [ "$(metric convoy_controller_reconciles_total 'result="applied"')" -ge "$stacks" ]; do
  if late; then break; fi
  sleep 0.5
done
while [ "$(ready)" -lt "$stacks" ]; do
  if late; then
    echo "not all Ready after 30 min: $(ready)/$stacks"; kubectl get stacks -n bench | grep -v True | head; exit 1
  fi
  sleep 2
done
awk -v s="$start" -v e="$(date +%s.%N)" -v n="$stacks" -v r="$releases" \
  'BEGIN { printf "all %d Stacks (%d releases) Ready from cold in %.1f s\n", n, n * r, e - s }'
for k in 0 1; do
  echo "controller shard $([ $k -eq 0 ] && echo a || echo b): CPU $(cpu "${ctl[$k]}") s, peak RSS $(rss "${ctl[$k]}") MiB"
done
# What the cluster's own processes spent meanwhile.
line=""
for kv in $(clustercpu); do
  k=${kv%%=*} v=${kv#*=}
  b=$(tr ' ' '\n' <<<"$cluster0" | awk -F= -v k="$k" '$1 == k { print $2; exit }')
  line+=$(awk -v k="$k" -v a="${b:-0}" -v v="$v" 'BEGIN { printf "%s %.1f s, ", k, v - a }')
done
echo "cluster CPU meanwhile: ${line%, }"
# The Stacks' requests to the cluster until then, by verb, per Stack.
verbs="get list watch patch discovery post put delete"
line=""
for v in $verbs; do
  d=$(metric convoy_controller_kube_requests_total "verb=\"$v\"")
  [ "$d" -ne 0 ] && line+=$(awk -v v="$v" -v d="$d" -v n="$stacks" 'BEGIN { printf "%s %d (%.1f per Stack), ", v, d, d / n }')
done
echo "requests from cold: ${line%, }; cluster connections $(metric convoy_controller_cluster_connections_total '')"

echo "changing one Stack ..."
before=$(kubectl get stack s0001 -n bench -o jsonpath='{.status.lastAppliedPlan}')
start=$(date +%s.%N)
kubectl patch stack s0001 -n bench --type merge -p '{"spec":{"vars":{"message":"v2"}}}' >/dev/null
until [ "$(kubectl get stack s0001 -n bench -o jsonpath='{.status.lastAppliedPlan}')" != "$before" ] &&
      [ "$(kubectl get stack s0001 -n bench -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" = True ]; do
  sleep 0.05
done
awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "reconcile latency of one changed Stack: %.2f s (patch to Ready, via kubectl polling)\n", e - s }'
echo "revision of s0001's releases: $(kubectl get stack s0001 -n bench -o jsonpath='{range .status.releases[*]}{.name}:{.revision} {end}')"

echo "no-change reconciles: every Stack's interval set to 20s ..."
sed 's/interval: 10m/interval: 20s/' "$work/stacks.yaml" | kubectl apply -f - >/dev/null
# One round lets the plans that follow the applies pass (they list).
base=$(metric convoy_controller_reconciles_total 'result="uptodate"')
until [ "$(metric convoy_controller_reconciles_total 'result="uptodate"')" -ge $((base + stacks)) ]; do sleep 1; done
declare -A r0
for v in $verbs; do r0[$v]=$(metric convoy_controller_kube_requests_total "verb=\"$v\""); done
u0=$(metric convoy_controller_reconciles_total 'result="uptodate"')
e0=$(metric convoy_controller_stack_evaluations_total '')
c0=$(awk -v a="$(cpu "${ctl[0]}")" -v b="$(cpu "${ctl[1]}")" 'BEGIN { print a + b }')
start=$(date +%s.%N)
until [ "$(metric convoy_controller_reconciles_total 'result="uptodate"')" -ge $((u0 + stacks)) ]; do sleep 1; done
u1=$(metric convoy_controller_reconciles_total 'result="uptodate"')
e1=$(metric convoy_controller_stack_evaluations_total '')
c1=$(awk -v a="$(cpu "${ctl[0]}")" -v b="$(cpu "${ctl[1]}")" 'BEGIN { print a + b }')
line=""
for v in $verbs; do
  d=$(( $(metric convoy_controller_kube_requests_total "verb=\"$v\"") - ${r0[$v]} ))
  [ "$d" -ne 0 ] && line+=$(awk -v v="$v" -v d="$d" -v n="$((u1 - u0))" 'BEGIN { printf "%s %d (%.2f per reconcile), ", v, d, d / n }')
done
awk -v s="$start" -v e="$(date +%s.%N)" -v n="$((u1 - u0))" 'BEGIN { printf "%d no-change reconciles in %.1f s\n", n, e - s }'
echo "their requests: ${line%, }"
awk -v d="$((e1 - e0))" -v c0="$c0" -v c1="$c1" -v n="$((u1 - u0))" \
  'BEGIN { printf "their stack evaluations: %d (%.2f per reconcile); the controllers'"'"' CPU meanwhile: %.1f s (%.0f ms per reconcile)\n", d, d / n, c1 - c0, 1000 * (c1 - c0) / n }'

#!/usr/bin/env bash
# Fleet benchmark (issue 52): REGS cluster registrations (default 50) on
# CLUSTERS real control planes (default 3: the hub and two devclusters
# more; CLUSTERS=1 puts every registration on the hub, for a loaded
# machine). kwok-backed control planes are too heavy at 50 on two cores,
# so registration i points at API server i mod CLUSTERS: several names per
# API server, each element's release in a namespace of its own. One
# StackSet generates REGS x PER Stacks (PER list entries in a matrix with
# the clusters, default 1; PER=4 gives 200 Stacks on 50 registrations),
# each an environment of one stack (a release of one ConfigMap), rolled
# out in two steps (canary: the registrations labelled ring=canary, 5 of
# them; rest) with zero bake, by one `convoy controller` process
# (--concurrency 8). The registry notifies the controller's push receiver
# (--webhook-listen), so a push reaches the rollout at once, not at the
# template's interval (10m, which also keeps the Stacks from replanning
# during the run). For a first version (every Stack installs) and a second
# (every Stack upgrades) it reports:
#
#   1. the time from the push to the StackSet Ready with every step
#      verified on the pushed digest, and status.rollout Done on it;
#   2. the controller's CPU time over each, and its peak RSS.
#
# Usage: [CLUSTERS=1|3] hack/bench/fleet.sh [REGS] [PER]. Needs the
# devcluster tools and the registry (source the tools' env).
# BENCH_KUBECONFIG, when set, is a running devcluster to use as the hub
# instead of starting one. Say the load (uptime) with the figures.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
regs=${1:-50}
per=${2:-1}
clusters=${CLUSTERS:-3}
ns=bench-fleet-$RANDOM
# shellcheck source=hack/bench/lib.sh
. "$root/hack/bench/lib.sh"
cleanup() {
  bench_kill
  for d in dc1 dc2 dc3; do
    [ -f "$work/$d/kubeconfig" ] && "$work/devcluster" down --state "$work/$d" >/dev/null 2>&1 || true
  done
  [ -n "${BENCH_KUBECONFIG:-}" ] && kubectl --kubeconfig "$BENCH_KUBECONFIG" delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
bench_build
others=()
[ "$clusters" = 3 ] && others=(dc2 dc3)
for d in "${others[@]}"; do "$work/devcluster" up --state "$work/$d" >/dev/null & done
if [ -n "${BENCH_KUBECONFIG:-}" ]; then
  hub=$BENCH_KUBECONFIG
else
  "$work/devcluster" up --state "$work/dc1" >/dev/null
  hub=$work/dc1/kubeconfig
fi
wait
export KUBECONFIG=$hub
apis=("$hub")
for d in "${others[@]}"; do apis+=("$work/$d/kubeconfig"); done

# The push receiver: the registry notifies it of every push.
wport=$(free_port)
BENCH_TOKEN=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
BENCH_WEBHOOK=http://127.0.0.1:$wport/registry
bench_registry

# Element names: rNN (one per registration), or rNN-eM with PER > 1.
elements=()
for i in $(seq 1 "$regs"); do
  r=$(printf r%02d "$i")
  if [ "$per" = 1 ]; then elements+=("$r"); else for m in $(seq 1 "$per"); do elements+=("$r-e$m"); done; fi
done
src=$work/src
bench_chart
write_stack() {
  {
    echo 'stack "fleet" {}'
    echo 'cluster "target" {}'
    for e in "${elements[@]}"; do printf 'environment "%s" {}\n' "$e"; done
    cat <<HCL
release "app" {
  chart            = "./charts/app"
  cluster          = cluster.target
  namespace        = "$ns-\${environment.name}"
  create_namespace = true
  values           = [{ version = "$1" }]
}
HCL
  } > "$src/stack.hcl"
}

"$work/convoy" controller install --min-interval 1s >/dev/null
kubectl create namespace "$ns" >/dev/null
kubectl -n "$ns" create secret generic convoy-webhook --from-literal=token="$BENCH_TOKEN" >/dev/null
for i in $(seq 1 "$regs"); do
  ring=main
  [ "$i" -le 5 ] && ring=canary
  "$work/convoy" cluster add "$(printf r%02d "$i")" --kubeconfig "${apis[$(( (i - 1) % ${#apis[@]} ))]}" -l "ring=$ring" -n "$ns" --hub-kubeconfig "$hub" >/dev/null
done
gens="[ { clusters: {} } ]"
if [ "$per" != 1 ]; then
  list=$(for m in $(seq 1 "$per"); do printf '{ name: e%d },' "$m"; done)
  gens="[ { matrix: { generators: [ { clusters: {} }, { list: [ ${list%,} ] } ] } } ]"
fi
cat > "$work/stackset.yaml" <<Y
apiVersion: convoy.dev/v1alpha1
kind: StackSet
metadata: { name: fleet, namespace: $ns }
spec:
  generators: $gens
  template:
    spec:
      source: oci://127.0.0.1:$port/stacks/fleet:live
      environment: "{{element}}"
      interval: 10m
  strategy:
    rolling:
      steps:
        - { name: canary, selector: { matchLabels: { ring: canary } } }
        - { name: rest }
Y

"$work/convoy" controller --min-interval 1s --namespace "$ns" --concurrency 8 --metrics-address 0 --health-address 0 \
  --webhook-listen "127.0.0.1:$wport" --webhook-token-secret "$ns/convoy-webhook" \
  --cache-dir "$work/cache" >"$work/controller.log" 2>&1 &
pids+=($!); ctl=$!
kubectl apply -f "$work/stackset.yaml" >/dev/null
n=${#elements[@]}
until [ "$(kubectl get stacks -n "$ns" --no-headers 2>/dev/null | wc -l)" -ge "$n" ]; do sleep 0.5; done

for version in 1.0.0 1.1.0; do
  write_stack "$version"
  digest=$("$work/convoy" push "$src" "oci://127.0.0.1:$port/stacks/fleet:live" | grep -o 'sha256:[0-9a-f]*' | head -1)
  c0=$(cpu "$ctl")
  start=$(date +%s.%N)
  until [ "$(kubectl get stackset fleet -n "$ns" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.steps[*].verified} {.status.rollout.phase} {.status.rollout.digest}')" = "True $digest $digest Done $digest" ]; do
    if [ "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print (e - s > 1500) }')" = 1 ]; then
      echo "not Ready after 25 min"; kubectl get stackset fleet -n "$ns" -o jsonpath='{.status.summary}{"\n"}{.status.rollout}'; echo; tail -20 "$work/controller.log"; exit 1
    fi
    sleep 0.5
  done
  c1=$(cpu "$ctl")
  awk -v s="$start" -v e="$(date +%s.%N)" -v n="$n" -v r="$regs" -v k="${#apis[@]}" -v v="$version" -v a="$c0" -v b="$c1" \
    'BEGIN { printf "%s: push to the StackSet Ready, both steps verified (%d Stacks on %d registrations, %d API servers): %.1f s; controller CPU %.1f s\n", v, n, r, k, e - s, b - a }'
done
echo "controller: CPU $(cpu "$ctl") s in all, peak RSS $(rss "$ctl") MiB; load: $(uptime)"

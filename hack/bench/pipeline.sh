#!/usr/bin/env bash
# Pipeline benchmark (issue 27): STACKS Stack objects (default 50) without
# a source, one environment of one stack each (a release of one
# ConfigMap), in STAGES stages (default 5) of a Pipeline with zero bake and
# no gates, following semver on a local registry; one `convoy controller`
# process (--concurrency 8). It reports, for a first version (every Stack
# installs) and a second one (every Stack upgrades):
#
#   1. the time from the push to the last stage Verified on the pushed
#      digest (the Pipeline's interval is 2s: up to 2s of it is the poll);
#   2. the controller's CPU time over each, and its peak RSS.
#
# Usage: hack/bench/pipeline.sh [STACKS] [STAGES]. Needs the devcluster
# tools and the registry (source the tools' env). BENCH_KUBECONFIG, when
# set, is a running devcluster to use instead of starting one.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
stacks=${1:-50}
stages=${2:-5}
ns=bench-pipeline-$RANDOM
# shellcheck source=hack/bench/lib.sh
. "$root/hack/bench/lib.sh"
cleanup() {
  bench_kill
  [ -f "$work/dc/kubeconfig" ] && "$work/devcluster" down --state "$work/dc" >/dev/null 2>&1 || true
  [ -n "${BENCH_KUBECONFIG:-}" ] && kubectl delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
bench_build
if [ -n "${BENCH_KUBECONFIG:-}" ]; then
  export KUBECONFIG=$BENCH_KUBECONFIG
else
  "$work/devcluster" up --state "$work/dc" >/dev/null
  export KUBECONFIG=$work/dc/kubeconfig
fi

bench_registry

# One stack, one environment per Stack.
src=$work/src
bench_chart
write_stack() {
  {
    echo 'stack "bench" {}'
    for n in $(seq 1 "$stacks"); do printf 'environment "e%03d" {}\n' "$n"; done
    cat <<HCL
release "app" {
  chart            = "./charts/app"
  namespace        = "$ns-\${environment.name}"
  create_namespace = true
  values           = [{ version = "$1" }]
}
HCL
  } > "$src/stack.hcl"
}

"$work/convoy" controller install --min-interval 1s >/dev/null
kubectl create namespace "$ns" >/dev/null
per=$(( (stacks + stages - 1) / stages ))
{
  for n in $(seq 1 "$stacks"); do
    i=$(printf %03d "$n")
    printf -- '---\napiVersion: convoy.dev/v1alpha1\nkind: Stack\nmetadata: { name: s%s, namespace: %s }\nspec: { environment: e%s, interval: 10m }\n' "$i" "$ns" "$i"
  done
  printf -- '---\napiVersion: convoy.dev/v1alpha1\nkind: Pipeline\nmetadata: { name: bench, namespace: %s }\nspec:\n  source: oci://127.0.0.1:%s/stacks/bench\n  follow: { semver: ">=1.0.0" }\n  interval: 2s\n  stages:\n' "$ns" "$port"
  for s in $(seq 1 "$stages"); do
    names=()
    for n in $(seq $(( (s - 1) * per + 1 )) $(( s * per ))); do
      [ "$n" -le "$stacks" ] && names+=("s$(printf %03d "$n")")
    done
    printf '    - { name: stage-%d, stacks: [%s] }\n' "$s" "$(IFS=,; echo "${names[*]}")"
  done
} > "$work/objects.yaml"
kubectl apply -f "$work/objects.yaml" >/dev/null

"$work/convoy" controller --min-interval 1s --namespace "$ns" --concurrency 8 --metrics-address 0 --health-address 0 \
  --cache-dir "$work/cache" >"$work/controller.log" 2>&1 &
pids+=($!); ctl=$!
last="stage-$stages"
# Wait for the controller to see the Pipeline (no tag yet).
until kubectl get pipeline bench -n "$ns" -o jsonpath='{.status.conditions[?(@.type=="Ready")].reason}' | grep -q NoMatchingTag; do sleep 0.2; done

for version in 1.0.0 1.1.0; do
  write_stack "$version"
  digest=$("$work/convoy" push "$src" "oci://127.0.0.1:$port/stacks/bench:$version" | grep -o 'sha256:[0-9a-f]*' | head -1)
  c0=$(cpu "$ctl")
  start=$(date +%s.%N)
  until [ "$(kubectl get pipeline bench -n "$ns" -o jsonpath="{.status.stages[?(@.name==\"$last\")].phase} {.status.stages[?(@.name==\"$last\")].digest}")" = "Verified $digest" ]; do
    if [ "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print (e - s > 900) }')" = 1 ]; then
      echo "not verified after 15 min"; kubectl get pipeline bench -n "$ns" -o jsonpath='{.status.summary}'; echo; exit 1
    fi
    sleep 0.2
  done
  c1=$(cpu "$ctl")
  awk -v s="$start" -v e="$(date +%s.%N)" -v n="$stacks" -v g="$stages" -v v="$version" -v a="$c0" -v b="$c1" \
    'BEGIN { printf "%s: push to the last of %d stages Verified (%d Stacks, zero bake): %.1f s; controller CPU %.1f s\n", v, g, n, e - s, b - a }'
done
echo "controller: CPU $(cpu "$ctl") s in all, peak RSS $(rss "$ctl") MiB"

#!/usr/bin/env bash
# Attribution benchmark (issue 41): what naming the inputs of each changed
# field costs a plan. On a devcluster of its own (or the one KUBECONFIG
# names, with KEEP_CLUSTER=1):
#
#   A stack of N releases (default 200) of hack/bench/charts/web
#   (Deployment, Service, HPA, PDB, ConfigMap) in $NS namespaces (default
#   10), applied; then planned with a tenth of them changed (two values
#   each: replicaCount and ui.message), RUNS times (default 3) each with
#   --attribute=true and --attribute=false, alternating. Goal: <= 1.3x.
#
#   Then one release of the same chart whose values change 200 leaves
#   (extraEnv entries and podAnnotations): planned with and without
#   attribution. Goal: <= 1.2x, or it says it skipped (more changed inputs
#   than planner.maxAttributedInputs).
#
# Each line: label, wall seconds of each run, the median; --stats of the
# last run (attribution-renders=N).
#
# Usage: hack/bench/provenance.sh [N]. Needs the devcluster tools (make tools).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-200}
ns_count=${NS:-10}
runs=${RUNS:-3}
work=$(mktemp -d)
(cd "$root" && CGO_ENABLED=0 go build -o "$work/convoy" ./cmd/convoy && go build -o "$work/devcluster" ./hack/devcluster)
if [ "${KEEP_CLUSTER:-0}" = 1 ] && [ -n "${KUBECONFIG:-}" ]; then
  trap 'rm -rf "$work"' EXIT
else
  "$work/devcluster" up --state "$work/dc" >/dev/null
  trap '"$work/devcluster" down --state "$work/dc" >/dev/null; rm -rf "$work"' EXIT
  export KUBECONFIG=$work/dc/kubeconfig
fi
web=$root/hack/bench/charts/web
name=prov$$

mkdir -p "$work/fleet" "$work/one"
cat > "$work/fleet/stack.hcl" <<HCL
stack "$name" {
  default_namespace = "$name-0"
}
variable "changed" {
  type    = number
  default = 0
}
release "web" {
  count            = $n
  name             = format("web-%04d", count.index)
  namespace        = "$name-\${count.index % $ns_count}"
  create_namespace = true
  wait             = false # the devcluster's 3 fake nodes hold 750 pods
  chart            = "$web"
  values = [{
    replicaCount = count.index < var.changed ? 2 : 1
    ui           = { message = count.index < var.changed ? "changed" : "" }
  }]
}
HCL

# one release whose values change 200 leaves with var.big.
cat > "$work/one/stack.hcl" <<HCL
stack "${name}-one" {
  default_namespace = "$name-one"
}
variable "big" {
  type    = bool
  default = false
}
release "one" {
  chart            = "$web"
  create_namespace = true
  wait             = false
  values = [{
    podAnnotations = { for i in range(100) : format("example.com/a%03d", i) => var.big ? "after" : "before" }
    extraEnv       = [for i in range(100) : { name = format("E%03d", i), value = var.big ? "after" : "before" }]
  }]
}
HCL

"$work/convoy" apply -C "$work/fleet" --auto-approve --no-progress -p 20 >/dev/null 2>&1
"$work/convoy" apply -C "$work/one" --auto-approve --no-progress >/dev/null 2>&1
sleep "${SETTLE:-10}"

# compare LABEL DIR ARGS...: RUNS plans with and without attribution,
# alternating; wall seconds of each, the medians and their ratio.
compare() {
  local label=$1 dir=$2
  shift 2
  local on=() off=()
  for _ in $(seq "$runs"); do
    for mode in true false; do
      local t0 t1
      t0=$(date +%s.%N)
      "$work/convoy" plan -C "$dir" "$@" --attribute=$mode --stats >"$work/out.$mode" 2>"$work/err.$mode" || [ $? -eq 2 ] || { cat "$work/err.$mode" >&2; exit 1; }
      t1=$(date +%s.%N)
      if [ "$mode" = true ]; then on+=("$(echo "$t1 - $t0" | bc)"); else off+=("$(echo "$t1 - $t0" | bc)"); fi
    done
  done
  local mon moff
  mon=$(printf '%s\n' "${on[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
  moff=$(printf '%s\n' "${off[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
  printf '%s: attribution on %s s (median %s), off %s s (median %s), ratio %.2f\n' "$label" "${on[*]}" "$mon" "${off[*]}" "$moff" "$(echo "$mon / $moff" | bc -l)"
  grep -o 'renders=[0-9]*\|attribution-renders=[0-9]*' "$work/err.true" | tr '\n' ' '
  echo "  lines with provenance: $(grep -c '←' "$work/out.true" || true)"
  grep -m1 'attribution:' "$work/out.true" || true
}

compare "N=$n, 10% changed" "$work/fleet" --var changed=$(( n / 10 )) --detailed-exitcode
compare "1 release, 200 values leaves changed" "$work/one" --var big=true --detailed-exitcode

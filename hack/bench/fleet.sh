#!/usr/bin/env bash
# Fleet benchmark (issue 52): REGS cluster registrations (default 50) on
# three real control planes (devclusters: the hub and two more; kwok-backed
# control planes are too heavy at 50 on two cores, so registration i points
# at API server i mod 3: several names per API server), and one StackSet
# generating REGS x PER Stacks (PER list entries in a matrix with the
# clusters, default 1; PER=4 gives 200 Stacks on 50 registrations), each an
# environment of one stack (a release of one ConfigMap in its own
# namespace), rolled out in two steps (canary: the registrations labelled
# ring=canary, 5 of them; rest) with zero bake, by one `convoy controller`
# process (--concurrency 8). For a first version (every Stack installs) and
# a second (every Stack upgrades) it reports:
#
#   1. the time from the push to the StackSet Ready with every step verified
#      on the pushed digest (the rollout's Pipeline polls the tag every 2s);
#   2. the controller's CPU time over each, and its peak RSS.
#
# Usage: hack/bench/fleet.sh [REGS] [PER]. Needs the devcluster tools and
# the registry (source the tools' env). BENCH_KUBECONFIG, when set, is a
# running devcluster to use as the hub instead of starting one.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
regs=${1:-50}
per=${2:-1}
: "${CONVOY_REGISTRY:?set CONVOY_REGISTRY to the registry binary (make tools)}"
work=$(mktemp -d)
pids=()
ns=bench-fleet-$RANDOM
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  for d in dc1 dc2 dc3; do
    [ -f "$work/$d/kubeconfig" ] && "$work/devcluster" down --state "$work/$d" >/dev/null 2>&1 || true
  done
  [ -n "${BENCH_KUBECONFIG:-}" ] && kubectl --kubeconfig "$BENCH_KUBECONFIG" delete namespace "$ns" --wait=false >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
(cd "$root" && CGO_ENABLED=0 go build -o "$work/convoy" ./cmd/convoy && go build -o "$work/devcluster" ./hack/devcluster)
if [ -n "${BENCH_KUBECONFIG:-}" ]; then
  hub=$BENCH_KUBECONFIG
  "$work/devcluster" up --state "$work/dc2" >/dev/null &
  a=$!
  "$work/devcluster" up --state "$work/dc3" >/dev/null
  wait $a
else
  for d in dc1 dc2 dc3; do "$work/devcluster" up --state "$work/$d" >/dev/null; done
  hub=$work/dc1/kubeconfig
fi
export KUBECONFIG=$hub
apis=("$hub" "$work/dc2/kubeconfig" "$work/dc3/kubeconfig")

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

# Element names: rNN (one per registration), or rNN-eM with PER > 1.
elements=()
for i in $(seq 1 "$regs"); do
  r=$(printf r%02d "$i")
  if [ "$per" = 1 ]; then elements+=("$r"); else for m in $(seq 1 "$per"); do elements+=("$r-e$m"); done; fi
done
src=$work/src
mkdir -p "$src/charts/app/templates"
printf 'apiVersion: v2\nname: app\nversion: 0.1.0\n' > "$src/charts/app/Chart.yaml"
cat > "$src/charts/app/templates/app.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: { name: {{ .Release.Name }}-config }
data: { version: {{ .Values.version | quote }} }
Y
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
for i in $(seq 1 "$regs"); do
  ring=main
  [ "$i" -le 5 ] && ring=canary
  "$work/convoy" cluster add "$(printf r%02d "$i")" --kubeconfig "${apis[$(( (i - 1) % 3 ))]}" -l "ring=$ring" -n "$ns" --hub-kubeconfig "$hub" >/dev/null
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

cpu() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / t }' "/proc/$1/stat"; }
rss() { awk '/VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$1/status"; }

"$work/convoy" controller --min-interval 1s --namespace "$ns" --concurrency 8 --metrics-address 0 --health-address 0 \
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
  until [ "$(kubectl get stackset fleet -n "$ns" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status} {.status.steps[*].verified}')" = "True $digest $digest" ]; do
    if [ "$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { print (e - s > 1500) }')" = 1 ]; then
      echo "not Ready after 25 min"; kubectl get stackset fleet -n "$ns" -o jsonpath='{.status.summary}'; echo; exit 1
    fi
    sleep 0.5
  done
  c1=$(cpu "$ctl")
  awk -v s="$start" -v e="$(date +%s.%N)" -v n="$n" -v r="$regs" -v v="$version" -v a="$c0" -v b="$c1" \
    'BEGIN { printf "%s: push to the StackSet Ready, both steps verified (%d Stacks on %d registrations, 3 API servers): %.1f s; controller CPU %.1f s\n", v, n, r, e - s, b - a }'
done
echo "controller: CPU $(cpu "$ctl") s in all, peak RSS $(rss "$ctl") MiB"

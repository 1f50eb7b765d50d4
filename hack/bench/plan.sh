#!/usr/bin/env bash
# Plan and apply benchmark on a devcluster of its own (issues 6 and 14; two
# cores). For each N (default 100, 400 and 1000):
#
#   A stack of N releases in 10 namespaces, of three real-world-shaped charts
#   in turn: helm create's scaffold (Deployment, Service, ServiceAccount, test
#   hook), a podinfo-shaped web service (Deployment, Service, HPA, PDB,
#   ConfigMap with a checksum annotation) and a bitnami-shaped database on a
#   common library chart (StatefulSet, two Services, Secret, ConfigMap,
#   NetworkPolicy, ServiceAccount). A tenth of the releases read another
#   release's outputs (revision, status, resources). It is applied, then
#   planned: with no change (three runs), with one release changed, with the
#   first release of each chart changed (3 releases, and the reader of the
#   changed web one), with a
#   tenth changed; then the same with --refresh=full. Each line gives wall
#   time and peak RSS; --stats lines give requests, bytes, renders, dry
#   runs and cache hits of the run before.
#   Goals (issue 14): 1,000 releases, no change <= 5 s and <= 400 MiB; one
#   changed <= 5 s; full refresh no slower than before.
#
#   First (while the fake nodes have room for their pods), `convoy apply`
#   of 20 independent releases that each wait on a Deployment whose pods
#   take 3 s to become ready, against the apply of one (goal: <= 2x the
#   wall time): the waits must overlap.
#
# Usage: hack/bench/plan.sh [N...]. Needs the devcluster tools (make tools).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(100 400 1000)
charts=$root/hack/bench/charts
scaffold=$root/internal/chart/testdata/charts/scaffold
work=$(mktemp -d)
(cd "$root" && go build -o "$work/convoy" ./cmd/convoy && go build -o "$work/devcluster" ./hack/devcluster)
"$work/devcluster" up --state "$work/dc" >/dev/null
trap '"$work/devcluster" down --state "$work/dc" >/dev/null; rm -rf "$work"' EXIT
export KUBECONFIG=$work/dc/kubeconfig

# mkfleet DIR NAME N: N releases of the three charts in 10 namespaces; the
# first var.changed of each shape change a value; N/10 readers read the
# outputs of a web release.
mkfleet() {
  local n=$3 readers=$(( $3 / 10 ))
  local rest=$(( n - readers ))
  local web=$(( rest / 3 )) db=$(( rest / 3 ))
  local scaf=$(( rest - web - db ))
  mkdir -p "$1"
  cat > "$1/stack.hcl" <<HCL
stack "$2" {
  default_namespace = "$2-0"
}
variable "changed" {
  type    = number
  default = 0
}
variable "one" {
  type    = bool
  default = false
}
release "scaffold" {
  count            = $scaf
  name             = format("api-%04d", count.index)
  namespace        = "$2-\${count.index % 10}"
  create_namespace = true
  wait             = false
  chart            = "$scaffold"
  values = [{
    replicaCount = count.index < var.changed || (var.one && count.index == 0) ? 2 : 1
  }]
}
release "web" {
  count            = $web
  name             = format("web-%04d", count.index)
  namespace        = "$2-\${count.index % 10}"
  create_namespace = true
  wait             = false
  chart            = "$charts/web"
  values = [{
    ui = { message = count.index < var.changed ? "changed" : "" }
  }]
}
release "db" {
  count            = $db
  name             = format("db-%04d", count.index)
  namespace        = "$2-\${count.index % 10}"
  create_namespace = true
  wait             = false
  chart            = "$charts/db"
  values = [{
    primary = { extendedConfiguration = count.index < var.changed ? "max_connections = 200" : "max_connections = 100" }
  }]
}
release "reader" {
  count            = $readers
  name             = format("reader-%04d", count.index)
  namespace        = "$2-\${count.index % 10}"
  create_namespace = true
  wait             = false
  chart            = "$scaffold"
  values = [{
    podAnnotations = {
      "upstream/revision" = tostring(release.web[count.index].revision)
      "upstream/status"   = release.web[count.index].status
      "upstream/objects"  = tostring(length(release.web[count.index].resources))
    }
  }]
}
HCL
}

# mkwait DIR NAME COUNT: COUNT independent releases whose pods become ready
# after 3 s, each waited for.
mkwait() {
  mkdir -p "$1"
  cat > "$1/stack.hcl" <<HCL
stack "$2" {
  default_namespace = "$2"
}
release "app" {
  count            = $3
  name             = format("app-%03d", count.index)
  namespace        = "$2-\${count.index % 10}"
  create_namespace = true
  chart            = "$scaffold"
  values           = [{ podAnnotations = { "devcluster.convoy.dev/ready-after" = "3s" } }]
  wait             = true
}
HCL
}

# measure LABEL CMD...: prints wall seconds and peak RSS of CMD, and the
# --stats line if CMD printed one.
measure() {
  local label=$1; shift
  local rc=0
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/out" 2>"$work/err" || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; then
    echo "$label: failed (exit $rc):"; cat "$work/err"; exit 1
  fi
  set -- $(tail -n 1 "$work/time")
  printf '%-40s %6.2f s  %6d MiB' "$label" "$1" "$(( $2 / 1024 ))"
  grep -h '^stats:' "$work/out" "$work/err" | head -n 1 | sed 's/^stats:/ /' || echo
  echo "$1" > "$work/last"
}

echo "== apply, each release waits on a Deployment (goal: 20 <= 2x one)"
mkwait "$work/one" one 1
mkwait "$work/twenty" twenty 20
measure "apply, 1 release" "$work/convoy" apply -C "$work/one" --auto-approve --no-progress
one=$(cat "$work/last")
measure "apply, 20 independent releases" "$work/convoy" apply -C "$work/twenty" --auto-approve --no-progress
twenty=$(cat "$work/last")
awk -v a="$twenty" -v b="$one" 'BEGIN { printf "ratio 20/1: %.2fx\n", a / b }'

for n in "${sizes[@]}"; do
  dir=$work/fleet$n
  mkfleet "$dir" "b$n" "$n"
  measure "N=$n: apply (setup, -p 20)" "$work/convoy" apply -C "$dir" --auto-approve --no-progress -p 20
  # Let the controllers and the fake kubelet finish what the apply started
  # (ReplicaSets, pods, their status), as they have by the time people plan.
  sleep 30
  for i in 1 2 3; do
    measure "N=$n: plan, no change ($i)" "$work/convoy" plan -C "$dir" --detailed-exitcode --stats
  done
  code=0; "$work/convoy" plan -C "$dir" --detailed-exitcode >/dev/null 2>&1 || code=$?
  [ "$code" -eq 0 ] || { echo "N=$n: the no-change plan found changes (exit $code)"; exit 1; }
  measure "N=$n: plan, 1 changed" "$work/convoy" plan -C "$dir" --var one=true --detailed-exitcode --stats
  measure "N=$n: plan, 3 changed (1 per chart)" "$work/convoy" plan -C "$dir" --var changed=1 --detailed-exitcode --stats
  measure "N=$n: plan, 10% changed" "$work/convoy" plan -C "$dir" --var changed=$(( n / 30 )) --detailed-exitcode --stats
  for i in 1 2; do
    measure "N=$n: full refresh, no change ($i)" "$work/convoy" plan -C "$dir" --detailed-exitcode --refresh=full --stats
  done
  measure "N=$n: full refresh, 1 changed" "$work/convoy" plan -C "$dir" --var one=true --detailed-exitcode --refresh=full --stats
  measure "N=$n: full refresh, 3 changed" "$work/convoy" plan -C "$dir" --var changed=1 --detailed-exitcode --refresh=full --stats
  measure "N=$n: full refresh, 10% changed" "$work/convoy" plan -C "$dir" --var changed=$(( n / 30 )) --detailed-exitcode --refresh=full --stats
done


#!/usr/bin/env bash
# Plan and apply benchmark on a devcluster of its own (issue 6's goals, on
# two cores):
#
#   1. `convoy plan` of a 100-release stack (helm create's scaffold chart:
#      Deployment, Service, ServiceAccount, test hook; 10 namespaces), 20 of
#      whose releases read another release's outputs (revision, status,
#      resources), with no changes (goal: <= 1.5 s, exit 0: no revision
#      would be written) and with 10 releases changed: wall time and peak
#      RSS (goals: <= 5 s, <= 300 MiB).
#   2. `convoy apply` of 20 independent releases that each wait on a
#      Deployment whose pods take 3 s to become ready (the devcluster's
#      ready-after annotation), against the apply of one (goal: <= 2x the
#      wall time): the waits must overlap.
#
# Usage: hack/bench/plan.sh [RELEASES]   (default 100). Needs the devcluster
# tools (make tools).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-100}
chart=$root/internal/chart/testdata/charts/scaffold
work=$(mktemp -d)
(cd "$root" && go build -o "$work/convoy" ./cmd/convoy && go build -o "$work/devcluster" ./hack/devcluster)
"$work/devcluster" up --state "$work/dc" >/dev/null
trap '"$work/devcluster" down --state "$work/dc" >/dev/null; rm -rf "$work"' EXIT
export KUBECONFIG=$work/dc/kubeconfig

# mkstack DIR NAME COUNT WAIT [READY_AFTER] [READERS]: COUNT releases of the
# scaffold chart, in 10 namespaces; the first var.changed of them get 2
# replicas instead of 1; pods become ready after READY_AFTER (default at
# once). READERS of them (default 0) read the outputs of another release.
mkstack() {
  local readers=${6:-0}
  mkdir -p "$1"
  cat > "$1/stack.hcl" <<HCL
stack "$2" {
  default_namespace = "$2"
}
variable "changed" {
  type    = number
  default = 0
}
release "app" {
  count            = $3 - $readers
  name             = format("app-%03d", count.index)
  namespace        = "$2-\${count.index % 10}"
  create_namespace = true
  chart            = "$chart"
  values = [{
    replicaCount   = count.index < var.changed ? 2 : 1
    podAnnotations = { "devcluster.convoy.dev/ready-after" = "${5:-0s}" }
  }]
  wait             = $4
}
release "reader" {
  count            = $readers
  name             = format("reader-%03d", count.index)
  namespace        = "$2-\${count.index % 10}"
  create_namespace = true
  chart            = "$chart"
  values = [{
    podAnnotations = {
      "upstream/revision" = tostring(release.app[count.index].revision)
      "upstream/status"   = release.app[count.index].status
      "upstream/objects"  = tostring(length(release.app[count.index].resources))
    }
  }]
  wait             = $4
}
HCL
}

# measure LABEL CMD...: prints wall seconds and peak RSS of CMD.
measure() {
  local label=$1; shift
  local out rc=0
  out=$( { /usr/bin/time -f '%e %M' "$@" >/dev/null 2>"$work/err"; } 2>&1 ) || rc=$?
  # /usr/bin/time writes its line last on stderr; detailed-exitcode 2 is fine.
  out=$(tail -n 1 "$work/err")
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; then
    echo "$label: failed (exit $rc):"; cat "$work/err"; exit 1
  fi
  set -- $out
  printf '%-44s %6.2f s  %6d MiB\n' "$label" "$1" "$(( $2 / 1024 ))"
  echo "$1" > "$work/last"
}

mkstack "$work/big" bench "$n" false 0s $(( n / 5 ))
echo "setting up: applying $n releases ($(( n / 5 )) read another's outputs) ..."
"$work/convoy" apply -C "$work/big" --auto-approve --no-progress -p 10 >/dev/null 2>"$work/setup.err" || { cat "$work/setup.err"; exit 1; }

echo "== plan, $n releases (goals: no changes <= 1.5 s and exit 0; <= 5 s, <= 300 MiB)"
for i in 1 2 3; do
  measure "plan, no changes (run $i)" "$work/convoy" plan -C "$work/big" --detailed-exitcode
done
code=0; "$work/convoy" plan -C "$work/big" --detailed-exitcode >/dev/null 2>&1 || code=$?
echo "plan, no changes: exit $code (0: nothing would be written)"
measure "plan, 10 releases changed" "$work/convoy" plan -C "$work/big" --var changed=10 --detailed-exitcode

echo "== apply, each release waits on a Deployment (goal: 20 <= 2x one)"
mkstack "$work/one" one 1 true 3s
mkstack "$work/twenty" twenty 20 true 3s
measure "apply, 1 release" "$work/convoy" apply -C "$work/one" --auto-approve --no-progress
one=$(cat "$work/last")
measure "apply, 20 independent releases (-p 20)" "$work/convoy" apply -C "$work/twenty" --auto-approve --no-progress -p 20
twenty=$(cat "$work/last")
awk -v a="$twenty" -v b="$one" 'BEGIN { printf "ratio 20/1: %.2fx\n", a / b }'

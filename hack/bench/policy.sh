#!/usr/bin/env bash
# What policies cost a plan (issue 22; two cores): on a devcluster of its
# own, the fleet of hack/bench/plan.sh with N releases (default 1000) is
# applied, then the plan with a tenth changed is timed without policies
# and with the twenty object-level policies of hack/bench/policies (given
# with --policy, so the stack and its plan are otherwise the same),
# alternately, RUNS times each (default 3); then the same with
# --refresh=full, where every object of every release is evaluated.
# Goal: at most 10% more wall time.
#
# Usage: hack/bench/policy.sh [N] [RUNS]. Needs the devcluster tools.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-1000}
runs=${2:-3}
charts=$root/hack/bench/charts
scaffold=$root/internal/chart/testdata/charts/scaffold
policies=$root/hack/bench/policies
work=$(mktemp -d)
(cd "$root" && CGO_ENABLED=0 go build -o "$work/convoy" ./cmd/convoy && go build -o "$work/devcluster" ./hack/devcluster)
"$work/devcluster" up --state "$work/dc" >/dev/null
trap '"$work/devcluster" down --state "$work/dc" >/dev/null; rm -rf "$work"' EXIT
export KUBECONFIG=$work/dc/kubeconfig

# The fleet generator of plan.sh, not repeated here.
eval "$(sed -n '/^mkfleet() {/,/^# mkwait/{/^# mkwait/!p;}' "$root/hack/bench/plan.sh")"

measure() {
  local label=$1; shift
  local rc=0
  /usr/bin/time -f '%e %M' -o "$work/time" "$@" >"$work/out" 2>"$work/err" || rc=$?
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 2 ]; then
    echo "$label: failed (exit $rc):"; cat "$work/out" "$work/err"; exit 1
  fi
  set -- $(tail -n 1 "$work/time")
  printf '%-52s %6.2f s  %6d MiB' "$label" "$1" "$(( $2 / 1024 ))"
  grep -h '^stats:' "$work/out" "$work/err" | head -n 1 | sed 's/^stats:/ /' || echo
}

dir=$work/fleet$n
mkfleet "$dir" "p$n" "$n"
measure "N=$n: apply (setup, -p 20)" "$work/convoy" apply -C "$dir" --auto-approve --no-progress -p 20
sleep 30
changed=$(( n / 30 ))
for refresh in incremental full; do
  for i in $(seq "$runs"); do
    measure "N=$n: $refresh, 10% changed, no policies ($i)" "$work/convoy" plan -C "$dir" --var changed=$changed --detailed-exitcode --refresh=$refresh --stats
    measure "N=$n: $refresh, 10% changed, 20 policies ($i)" "$work/convoy" plan -C "$dir" --var changed=$changed --detailed-exitcode --refresh=$refresh --stats --policy "$policies"
  done
done
"$work/convoy" plan -C "$dir" --var changed=$changed --refresh=full --policy "$policies" | grep -E '^Policies:' || true

#!/usr/bin/env bash
# First-apply benchmark on a devcluster of its own (issue 26, item 4; two
# cores). `convoy apply -p 50` of N small releases (default 2000) of helm
# create's scaffold chart (Deployment, Service, ServiceAccount, test hook),
# wait = false, in 20 namespaces, into an empty cluster; prints wall time,
# releases/s, peak RSS, convoy's CPU time (user + system) and the --stats
# line.
#
# CHART=tiny applies hack/bench/charts/tiny instead (one ConfigMap, which no
# controller of the cluster reacts to): what convoy and the API server cost
# per release without the controllers' share (issue 26's goal: 2,000 at
# >= 80 releases/s).
#
# With CONVOY_BEFORE=/path/to/an/older/convoy the same apply is run with that
# binary first and with this tree's right after (each into namespaces of its
# own), so that the pair is measured on the same machine at the same load:
# the machine is shared, so read the pair, not the absolute figures.
#
# Extra arguments after N go to every convoy apply (e.g. --kube-qps 200).
# Usage: hack/bench/apply.sh [N [convoy apply flags...]]. Needs the
# devcluster tools (make tools).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
n=${1:-2000}
shift || true
case ${CHART:-scaffold} in
  scaffold) chart=$root/internal/chart/testdata/charts/scaffold ;;
  tiny) chart=$root/hack/bench/charts/tiny ;;
  *) echo "CHART must be scaffold or tiny" >&2; exit 2 ;;
esac
work=$(mktemp -d)
(cd "$root" && CGO_ENABLED=0 go build -o "$work/convoy" ./cmd/convoy && go build -o "$work/devcluster" ./hack/devcluster)
"$work/devcluster" up --state "$work/dc" >/dev/null
trap '"$work/devcluster" down --state "$work/dc" >/dev/null; rm -rf "$work"' EXIT
export KUBECONFIG=$work/dc/kubeconfig

# mkfleet DIR NAME N: N independent releases in 20 namespaces, no waits, in
# release blocks of at most 1,000 (count's limit).
mkfleet() {
  mkdir -p "$1"
  cat > "$1/stack.hcl" <<HCL
stack "$2" {
  default_namespace = "$2-0"
}
HCL
  local b=0 left=$3 c
  while [ "$left" -gt 0 ]; do
    c=$(( left < 1000 ? left : 1000 ))
    cat >> "$1/stack.hcl" <<HCL
release "app$b" {
  count            = $c
  name             = format("app$b-%04d", count.index)
  namespace        = "$2-\${count.index % 20}"
  create_namespace = true
  wait             = false
  chart            = "$chart"
}
HCL
    left=$(( left - c )); b=$(( b + 1 ))
  done
}

# measure LABEL BINARY [FLAGS...]: first apply of a fresh fleet with BINARY.
measure() {
  local label=$1 bin=$2 dir=$work/$1
  shift 2
  local args=("$@")
  mkfleet "$dir" "$label" "$n"
  local stats=()
  "$bin" apply --help 2>/dev/null | grep -q -- '--stats' && stats=(--stats)
  local rc=0
  /usr/bin/time -f '%e %M %U %S' -o "$work/time" "$bin" apply -C "$dir" --auto-approve --no-progress -p 50 "${stats[@]}" "${args[@]}" \
    >"$work/out" 2>"$work/err" || rc=$?
  if [ "$rc" -ne 0 ]; then
    echo "$label: failed (exit $rc):"; tail -n 20 "$work/err"; exit 1
  fi
  set -- $(tail -n 1 "$work/time")
  awk -v l="$label" -v n="$n" -v s="$1" -v m="$2" -v u="$3" -v sy="$4" \
    'BEGIN { printf "%-8s N=%d apply -p 50: %7.2f s  %6.1f releases/s  %5d MiB  cpu %.1f s", l, n, s, n / s, m / 1024, u + sy }'
  grep -h '^stats:' "$work/out" "$work/err" | head -n 1 | sed 's/^stats:/ /' || echo
}

extra=("$@")
if [ -z "${CONVOY_BEFORE:-}" ]; then
  measure after "$work/convoy" "${extra[@]}"
elif [ -n "${SWAP:-}" ]; then
  measure after "$work/convoy" "${extra[@]}"
  measure before "$CONVOY_BEFORE" "${extra[@]}"
else
  measure before "$CONVOY_BEFORE" "${extra[@]}"
  measure after "$work/convoy" "${extra[@]}"
fi

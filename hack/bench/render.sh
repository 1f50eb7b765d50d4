#!/usr/bin/env bash
# Whole-process render benchmark: convoy render vs helm template, same
# machine, same run.
#
#   1. one release of one chart: `convoy render --release` vs `helm template`
#      (goal: convoy <= 1.0x helm's wall time)
#   2. a 50-release stack: one `convoy render` vs 50 sequential
#      `helm template` runs (goal: >= 10x faster)
#
# Usage: hack/bench/render.sh [CHART_DIR] [RUNS]
# CHART_DIR defaults to the chart engine's umbrella corpus chart (subcharts,
# aliases, a .tgz dependency, schema). Needs helm v4.3.1 ($CONVOY_HELM or
# hack/build-tools.sh helm).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
chart=$(cd "${1:-$root/internal/chart/testdata/charts/umbrella}" && pwd)
runs=${2:-10}
helm=${CONVOY_HELM:-${XDG_CACHE_HOME:-$HOME/.cache}/convoy/tools/helm-v4.3.1/bin/helm}
[ -x "$helm" ] || { echo "helm oracle not found at $helm: run hack/build-tools.sh helm" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HELM_CACHE_HOME=$work/helm-cache HELM_CONFIG_HOME=$work/helm-config HELM_DATA_HOME=$work/helm-data

(cd "$root" && CGO_ENABLED=0 go build -o "$work/convoy" ./cmd/convoy)
convoy=$work/convoy

mkstack() { # DIR COUNT
  mkdir -p "$1"
  cat > "$1/stack.hcl" <<HCL
stack "bench" {
  default_namespace = "bench"
}

release "app" {
  for_each = toset([for i in range($2) : format("r%02d", i)])
  name     = "app-\${each.key}"
  chart    = "$chart"
  values   = [{ appName = each.key }]
}
HCL
}
mkstack "$work/one" 1
mkstack "$work/fifty" 50

now() { date +%s%N; }
# avg_ms RUNS CMD...: mean wall time of CMD in milliseconds.
avg_ms() {
  local n=$1; shift
  "$@" >/dev/null 2>&1 || { echo "command failed: $*" >&2; "$@" >/dev/null; exit 1; }
  local start end
  start=$(now)
  for _ in $(seq "$n"); do "$@" >/dev/null; done
  end=$(now)
  echo $(( (end - start) / n / 1000000 ))
}

helm_fifty() {
  for i in $(seq 0 49); do
    key=$(printf 'r%02d' "$i")
    "$helm" template "app-$key" "$chart" --namespace bench --set "appName=$key" >/dev/null
  done
}

# The two single-release commands must print the same bytes.
diff <("$convoy" render -C "$work/one" --release app-r00) \
     <("$helm" template app-r00 "$chart" --namespace bench --set appName=r00) >/dev/null \
  || { echo "convoy render and helm template differ for the single release" >&2; exit 1; }

c1=$(avg_ms "$runs" "$convoy" render -C "$work/one" --release app-r00)
h1=$(avg_ms "$runs" "$helm" template app-r00 "$chart" --namespace bench --set appName=r00)
c50=$(avg_ms "$runs" "$convoy" render -C "$work/fifty")
h50=$(avg_ms 2 helm_fifty)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) b = 1; printf "%.2f", a / b }'; }
echo "chart: $chart"
echo "single release: convoy ${c1}ms, helm ${h1}ms -> convoy/helm = $(ratio "$c1" "$h1")x (goal <= 1.0x)"
echo "50 releases:    convoy ${c50}ms, helm ${h50}ms (50 sequential runs) -> helm/convoy = $(ratio "$h50" "$c50")x faster (goal >= 10x)"

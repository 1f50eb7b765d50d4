#!/usr/bin/env bash
# Plan and apply benchmark on a devcluster of its own (issues 6, 14 and 26;
# two cores). For each N (default 100, 400 and 1000):
#
#   A stack of N releases in $NS namespaces (default 20), of three
#   real-world-shaped charts in turn: helm create's scaffold (Deployment,
#   Service, ServiceAccount, test hook), a podinfo-shaped web service
#   (Deployment, Service, HPA, PDB, ConfigMap with a checksum annotation)
#   and a bitnami-shaped database on a common library chart (StatefulSet,
#   two Services, Secret, ConfigMap, NetworkPolicy, ServiceAccount). A tenth
#   of the releases read another release's outputs (revision, status,
#   resources). It is applied, then planned: with no change (three runs),
#   with one release changed, with the first release of each chart changed
#   (3 releases, and the reader of the changed web one), with a tenth
#   changed; then the same with --refresh=full. Each line gives wall time
#   and peak RSS; --stats lines give requests, bytes, renders, dry runs,
#   record lists and reads, and cache hits of the run before.
#   Goals (issue 26): no change, 1,000 releases <= 0.7 s and <= 150 MiB,
#   10,000 <= 5 s and <= 800 MiB; one changed in 10,000 <= 5.5 s.
#
#   The floor: what the lists a no-change plan makes cost when nothing but
#   fetching them is done (one curl with the kubeconfig's token, 20 at a
#   time): the records as metadata (PartialObjectMetadataList, JSON and
#   protobuf), then the live objects' metadata, one list per kind and
#   namespace; wall time and bytes. It is measured before each no-change
#   plan (it moves between runs as much as the plan does), and the medians
#   give the ratio of issue 56 (goal: no change <= 1.3x the floor, JSON;
#   the full refresh <= 8x, its floor measured before each of three).
#   Last, the records in full, for comparison.
#
#   First (while the fake nodes have room for their pods), `convoy apply`
#   of 20 independent releases that each wait on a Deployment whose pods
#   take 3 s to become ready, against the apply of one (goal: <= 2x the
#   wall time): the waits must overlap.
#
#   APPLY_FLOOR=1: last, for each N, the floor line of the setup apply
#   (hack/bench/applyfloor): the same releases' objects, as `convoy render`
#   prints them, applied into namespaces of their own (floor-…) by one
#   server-side apply each, -p $APPLY_P releases at once, nothing else
#   done; its releases/s and what the API server served meanwhile, and the
#   apply's rate as a share of it. The fake nodes are full by then (their
#   250 pods each hold the apply's): the floor's pods stay pending, so the
#   floor, if anything, is faster than a fresh cluster's.
#
#   CHART=tiny: the fleet is instead N releases of hack/bench/charts/tiny
#   (one ConfigMap), no readers; var.changed and var.one change its values
#   as above. Goal (issue 26): a no-change plan of 2,000 tiny releases
#   <= 1.5 s, growing at most 3x from 200 to 2,000 (`CHART=tiny
#   hack/bench/plan.sh 200 2000`; FULL=0 skips what the goal does not
#   need). The floor then lists only ConfigMaps.
#
# Environment:
#   CHART=scaffold    the fleet's charts: scaffold (the mix above) or tiny
#   NS=20             namespaces of the fleet
#   CONVOY_BEFORE=bin an older convoy: every plan is also run with it, back
#                     to back with this tree's, in alternating order (the
#                     machine is shared: read the pairs)
#   FULL=0            skip the --refresh=full plans and the waiting applies
#                     (for large N)
#   SETTLE=30         seconds to let the controllers settle after the apply
#   APPLY_P=20        the setup apply's -p
#   APPLY_FLOOR=1     measure the setup apply's floor line (above)
#   QUICK=1           plan only with no change and with one release changed
#   KEEP=1            leave the cluster, the stacks and the binary (for
#                     profiling: plan --cpuprofile); the script says where
#   STORAGE=secret    where the releases' records live: secret (Helm's
#                     default), configmap, or sql: a PostgreSQL server of the
#                     script's own (Debian's package, initdb into the work
#                     directory, as the tests start it), the stacks'
#                     storage { driver = "sql" } reading
#                     HELM_DRIVER_SQL_CONNECTION_STRING; the --stats lines
#                     then count sql-queries
#
# Usage: hack/bench/plan.sh [N...]. Needs the devcluster tools (make tools).
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
sizes=("$@")
[ ${#sizes[@]} -eq 0 ] && sizes=(100 400 1000)
charts=$root/hack/bench/charts
scaffold=$root/internal/chart/testdata/charts/scaffold
work=$(mktemp -d)
(cd "$root" && CGO_ENABLED=0 go build -o "$work/convoy" ./cmd/convoy && go build -o "$work/devcluster" ./hack/devcluster &&
  go build -o "$work/applyfloor" ./hack/bench/applyfloor)
"$work/devcluster" up --state "$work/dc" >/dev/null
if [ -n "${KEEP:-}" ]; then
  trap 'echo "kept: $work (KUBECONFIG=$work/dc/kubeconfig; stacks in $work/fleet*)"' EXIT
else
  trap '"$work/devcluster" down --state "$work/dc" >/dev/null; rm -rf "$work"' EXIT
fi
export KUBECONFIG=$work/dc/kubeconfig
ns_count=${NS:-20}
full=${FULL:-1}
settle=${SETTLE:-30}
before=${CONVOY_BEFORE:-}
apply_p=${APPLY_P:-20}
quick=${QUICK:-0}
chart=${CHART:-scaffold}
case $chart in
  scaffold | tiny) ;;
  *) echo "CHART must be scaffold or tiny" >&2; exit 2 ;;
esac
storage=${STORAGE:-secret}
case $storage in
  secret | configmap | sql) ;;
  *) echo "STORAGE must be secret, configmap or sql" >&2; exit 2 ;;
esac

# start_postgres: PostgreSQL from Debian's package on a free port of
# 127.0.0.1, its data in the work directory (as devtest.Postgres starts
# it: as root, it runs as the postgres user), stopped when the script
# ends; exports HELM_DRIVER_SQL_CONNECTION_STRING.
start_postgres() {
  local bin=${CONVOY_POSTGRESQL_BIN_DIR:-} dir port pw
  if [ -z "$bin" ]; then
    bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n | tail -n 1)
  fi
  [ -x "$bin/initdb" ] || { echo "PostgreSQL not installed: run make tools (hack/build-tools.sh postgresql)" >&2; exit 1; }
  local as=()
  # Not in $work: the postgres user may not enter it.
  dir=$(mktemp -d /tmp/convoy-bench-pg.XXXXXX)
  pw=pw-$(od -An -N8 -tx1 /dev/urandom | tr -d ' \n')
  printf '%s\n' "$pw" > "$dir/pw"
  if [ "$(id -u)" = 0 ]; then chown -R postgres: "$dir"; as=(runuser -u postgres --); fi
  "${as[@]}" "$bin/initdb" -D "$dir/data" -U convoy --pwfile "$dir/pw" -A scram-sha-256 -E UTF8 --no-sync >/dev/null
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "${as[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/postgres.log" -w -s \
    -o "-h 127.0.0.1 -p $port -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" start
  pg_dir=$dir
  pg_stop=("${as[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -s stop)
  export HELM_DRIVER_SQL_CONNECTION_STRING="postgres://convoy:$pw@127.0.0.1:$port/postgres?sslmode=disable"
}
pg_stop=()
if [ "$storage" = sql ]; then
  start_postgres
  if [ -z "${KEEP:-}" ]; then
    trap '"${pg_stop[@]}"; rm -rf "$pg_dir"; "$work/devcluster" down --state "$work/dc" >/dev/null; rm -rf "$work"' EXIT
  else
    trap 'echo "kept: $work (KUBECONFIG=$work/dc/kubeconfig; stacks in $work/fleet*; PostgreSQL: $HELM_DRIVER_SQL_CONNECTION_STRING, stop: ${pg_stop[*]}; rm -rf $pg_dir)"' EXIT
  fi
fi

# header FILE NAME: the stack block and the two variables every fleet's
# releases read (var.changed, var.one).
header() {
  cat > "$1" <<HCL
stack "$2" {
  default_namespace = "$2-0"
  storage {
    driver = "$storage"
  }
}
variable "changed" {
  type    = number
  default = 0
}
variable "one" {
  type    = bool
  default = false
}
HCL
}

# mkfleet DIR NAME N: N releases of the three charts in $NS namespaces; the
# first var.changed of each shape change a value; N/10 readers read the
# outputs of a web release. A release block counts at most 1,000
# instances: larger shapes are split into blocks of 1,000 (scaffold,
# scaffold_1, …), reader block j reading web block j.
mkfleet() {
  local n=$3 readers=$(( $3 / 10 ))
  local rest=$(( n - readers ))
  local web=$(( rest / 3 )) db=$(( rest / 3 ))
  local scaf=$(( rest - web - db )) file=$1/stack.hcl
  mkdir -p "$1"
  header "$file" "$2"
  # block SHAPE TOTAL BODY: blocks of at most 1,000 instances; BODY may use
  # @OFF@ (the block's first index) and @J@ (its suffix).
  block() {
    local shape=$1 total=$2 body=$3 j=0 off=0 count suffix
    while [ "$off" -lt "$total" ]; do
      count=$(( total - off )); [ "$count" -gt 1000 ] && count=1000
      suffix=; [ "$j" -gt 0 ] && suffix=_$j
      printf 'release "%s%s" {\n  count = %d\n%s\n}\n' "$shape" "$suffix" "$count" \
        "$(printf '%s' "$body" | sed -e "s/@OFF@/$off/g" -e "s/@J@/$suffix/g")" >> "$file"
      off=$(( off + count )); j=$(( j + 1 ))
    done
  }
  block scaffold "$scaf" "  name             = format(\"api-%04d\", count.index + @OFF@)
  namespace        = \"$2-\${(count.index + @OFF@) % $ns_count}\"
  create_namespace = true
  wait             = false
  chart            = \"$scaffold\"
  values = [{
    replicaCount = count.index + @OFF@ < var.changed || (var.one && count.index + @OFF@ == 0) ? 2 : 1
  }]"
  block web "$web" "  name             = format(\"web-%04d\", count.index + @OFF@)
  namespace        = \"$2-\${(count.index + @OFF@) % $ns_count}\"
  create_namespace = true
  wait             = false
  chart            = \"$charts/web\"
  values = [{
    ui = { message = count.index + @OFF@ < var.changed ? \"changed\" : \"\" }
  }]"
  block db "$db" "  name             = format(\"db-%04d\", count.index + @OFF@)
  namespace        = \"$2-\${(count.index + @OFF@) % $ns_count}\"
  create_namespace = true
  wait             = false
  chart            = \"$charts/db\"
  values = [{
    primary = { extendedConfiguration = count.index + @OFF@ < var.changed ? \"max_connections = 200\" : \"max_connections = 100\" }
  }]"
  block reader "$readers" "  name             = format(\"reader-%04d\", count.index + @OFF@)
  namespace        = \"$2-\${(count.index + @OFF@) % $ns_count}\"
  create_namespace = true
  wait             = false
  chart            = \"$scaffold\"
  values = [{
    podAnnotations = {
      \"upstream/revision\" = tostring(release.web@J@[count.index].revision)
      \"upstream/status\"   = release.web@J@[count.index].status
      \"upstream/objects\"  = tostring(length(release.web@J@[count.index].resources))
    }
  }]"
}

# mktiny DIR NAME N: N releases of the tiny chart in $NS namespaces, in
# blocks of at most 1,000 (block, as in mkfleet); the first var.changed (and
# with var.one the first) change a value.
mktiny() {
  local n=$3 file=$1/stack.hcl
  mkdir -p "$1"
  header "$file" "$2"
  local j=0 off=0 count suffix
  while [ "$off" -lt "$n" ]; do
    count=$(( n - off )); [ "$count" -gt 1000 ] && count=1000
    suffix=; [ "$j" -gt 0 ] && suffix=_$j
    cat >> "$file" <<HCL
release "tiny$suffix" {
  count            = $count
  name             = format("tiny-%04d", count.index + $off)
  namespace        = "$2-\${(count.index + $off) % $ns_count}"
  create_namespace = true
  wait             = false
  chart            = "$charts/tiny"
  values = [{
    size = count.index + $off < var.changed || (var.one && count.index + $off == 0) ? 2 : 1
  }]
}
HCL
    off=$(( off + count )); j=$(( j + 1 ))
  done
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
  namespace        = "$2-\${count.index % $ns_count}"
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

# apiserver_requests: the API server's count of requests served so far
# (apiserver_request_total, every client: convoy, the controller manager,
# the scheduler, kwok).
apiserver_requests() {
  local server token
  server=$(awk '$1 == "server:" { print $2; exit }' "$KUBECONFIG")
  token=$(awk '$1 == "token:" { print $2; exit }' "$KUBECONFIG")
  curl -sk -H "Authorization: Bearer $token" "$server/metrics" |
    awk '$1 ~ /^apiserver_request_total[{]/ { s += $2 } END { printf "%d\n", s }'
}

# apply_share N BEFORE: what the API server served during the last
# measured apply (of N releases) against convoy's own requests (its
# --stats line): the rest is the cluster's controllers reacting to it,
# which bounds a first apply on a small machine whatever convoy does.
apply_share() {
  local all ours secs
  all=$(( $(apiserver_requests) - $2 ))
  ours=$(grep -ho 'requests=[0-9]*' "$work/out" "$work/err" | head -n 1 | cut -d= -f2)
  secs=$(cat "$work/last")
  awk -v n="$1" -v a="$all" -v o="${ours:-0}" -v s="$secs" 'BEGIN {
    printf "N=%d: apply: %.1f releases/s; the API server served %d requests (%.0f/s), convoy %d (%.1f per release), the cluster %d (%.1f per release)\n",
      n, n / s, a, a / s, o, o / n, a - o, (a - o) / n }'
}

# plans LABEL ARGS...: the plan with this tree's convoy and, with
# CONVOY_BEFORE, with the older one, back to back, the order alternating.
turn=0
plans() {
  local label=$1; shift
  if [ -z "$before" ]; then
    measure "$label" "$work/convoy" plan "$@" --stats
    return
  fi
  turn=$(( turn + 1 ))
  if [ $(( turn % 2 )) -eq 1 ]; then
    measure "$label [before]" "$before" plan "$@" --stats
    measure "$label [after]" "$work/convoy" plan "$@" --stats
  else
    measure "$label [after]" "$work/convoy" plan "$@" --stats
    measure "$label [before]" "$before" plan "$@" --stats
  fi
}

# floor_urls NAME: the lists of a no-change plan of the fleet NAME, for
# floor: the records' ($work/urls-records) and the live objects', one
# list per kind and namespace ($work/urls-objects).
floor_urls() {
  local name=$1
  : > "$work/urls-records" ; : > "$work/urls-objects"
  for i in $(seq 0 $(( ns_count - 1 ))); do
    local ns=$name-$i
    echo "/api/v1/namespaces/$ns/secrets?labelSelector=owner%3Dhelm&fieldSelector=type%3Dhelm.sh%2Frelease.v1" >> "$work/urls-records"
    local kinds=(api/v1/secrets?fieldSelector=type%21%3Dhelm.sh%2Frelease.v1 api/v1/configmaps api/v1/services api/v1/serviceaccounts
             apis/apps/v1/deployments apis/apps/v1/statefulsets apis/autoscaling/v2/horizontalpodautoscalers
             apis/policy/v1/poddisruptionbudgets apis/networking.k8s.io/v1/networkpolicies)
    [ "$chart" = tiny ] && kinds=(api/v1/configmaps)
    for r in "${kinds[@]}"; do
      local path=${r%%\?*} query=
      [ "$path" != "$r" ] && query="?${r#*\?}"
      echo "/${path%/*}/namespaces/$ns/${path##*/}$query" >> "$work/urls-objects"
    done
  done
}

# fetch LABEL ACCEPT FILE: every URL of FILE, one request each (no pages:
# a floor), by one curl process, 20 at a time on reused connections. The
# wall time goes to $work/fetched.
fetch() {
  local label=$1 accept=$2 file=$3 start end bytes server token
  # The devcluster's kubeconfig: one cluster, one user with a token.
  server=$(awk '$1 == "server:" { print $2; exit }' "$KUBECONFIG")
  token=$(awk '$1 == "token:" { print $2; exit }' "$KUBECONFIG")
  awk '$1 == "certificate-authority-data:" { print $2; exit }' "$KUBECONFIG" | base64 -d > "$work/ca.crt"
  sed "s|.*|url = \"$server&\"\noutput = \"/dev/null\"|" "$file" > "$work/curl.cfg"
  start=$(date +%s.%N)
  bytes=$(curl -sS --no-progress-meter -Z --parallel-max 20 --cacert "$work/ca.crt" -H "Authorization: Bearer $token" \
    -H "Accept: $accept" -K "$work/curl.cfg" -w '%{size_download}\n' | awk '{ s += $1 } END { print s }')
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { printf "%.3f\n", b - a }' > "$work/fetched"
  awk -v l="$label" -v a="$start" -v b="$end" -v n="$bytes" -v k="$(wc -l < "$file")" \
    'BEGIN { printf "%-40s %6.2f s  %d lists, %.2f MB\n", l, b - a, k, n / 1e6 }'
}

meta='application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1'
metapb='application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1'

# floor N: what the lists of a no-change plan cost when nothing but
# fetching them is done (floor_urls): the records' metadata then the
# objects' metadata, as JSON then as protobuf. Their sums go to
# $work/floors-json and $work/floors-pb, one line per call: the floor is
# measured before each no-change plan, as the machine is then.
floor() {
  local records objects
  fetch "N=$1: floor, records' metadata (JSON)" "$meta" "$work/urls-records"; records=$(cat "$work/fetched")
  fetch "N=$1: floor, objects' metadata (JSON)" "$meta" "$work/urls-objects"; objects=$(cat "$work/fetched")
  awk -v a="$records" -v b="$objects" 'BEGIN { print a + b }' >> "$work/floors-json"
  fetch "N=$1: floor, records' metadata (protobuf)" "$metapb" "$work/urls-records"; records=$(cat "$work/fetched")
  fetch "N=$1: floor, objects' metadata (protobuf)" "$metapb" "$work/urls-objects"; objects=$(cat "$work/fetched")
  awk -v a="$records" -v b="$objects" 'BEGIN { print a + b }' >> "$work/floors-pb"
}

# median FILE: the median of the numbers of FILE, one per line.
median() {
  sort -n "$1" | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

if [ "$full" = 1 ]; then
  echo "== apply, each release waits on a Deployment (goal: 20 <= 2x one)"
  mkwait "$work/one" one 1
  mkwait "$work/twenty" twenty 20
  measure "apply, 1 release" "$work/convoy" apply -C "$work/one" --auto-approve --no-progress
  one=$(cat "$work/last")
  measure "apply, 20 independent releases" "$work/convoy" apply -C "$work/twenty" --auto-approve --no-progress
  twenty=$(cat "$work/last")
  awk -v a="$twenty" -v b="$one" 'BEGIN { printf "ratio 20/1: %.2fx\n", a / b }'
fi

for n in "${sizes[@]}"; do
  dir=$work/fleet$n
  # var.changed of a tenth: each of mkfleet's shapes holds about a third.
  if [ "$chart" = tiny ]; then mktiny "$dir" "b$n" "$n"; tenth=$(( n / 10 )); else mkfleet "$dir" "b$n" "$n"; tenth=$(( n / 30 )); fi
  served=$(apiserver_requests)
  measure "N=$n: apply (setup, -p $apply_p)" "$work/convoy" apply -C "$dir" --auto-approve --no-progress -p "$apply_p" --stats
  apply_share "$n" "$served"
  apply_secs=$(cat "$work/last")
  # Let the controllers and the fake kubelet finish what the apply started
  # (ReplicaSets, pods, their status), as they have by the time people plan.
  sleep "$settle"
  floor_urls "b$n"
  : > "$work/floors-json"; : > "$work/floors-pb"; : > "$work/no-change"
  for i in 1 2 3; do
    floor "$n"
    plans "N=$n: plan, no change ($i)" -C "$dir" --detailed-exitcode
    [ -z "$before" ] && cat "$work/last" >> "$work/no-change"
  done
  if [ -z "$before" ]; then
    # The goal (issue 56): no change <= 1.3x the floor of the same run.
    awk -v p="$(median "$work/no-change")" -v j="$(median "$work/floors-json")" -v b="$(median "$work/floors-pb")" -v n="$n" \
      'BEGIN { printf "N=%d: no change, median %.2f s; floor, median (records + objects): JSON %.2f s, protobuf %.2f s; ratio %.2fx JSON, %.2fx protobuf\n", n, p, j, b, p / j, p / b }'
  fi
  code=0; "$work/convoy" plan -C "$dir" --detailed-exitcode >/dev/null 2>&1 || code=$?
  [ "$code" -eq 0 ] || { echo "N=$n: the no-change plan found changes (exit $code)"; exit 1; }
  plans "N=$n: plan, 1 changed" -C "$dir" --var one=true --detailed-exitcode
  if [ "$quick" != 1 ]; then
    plans "N=$n: plan, 3 changed (1 per chart)" -C "$dir" --var changed=1 --detailed-exitcode
    plans "N=$n: plan, 10% changed" -C "$dir" --var changed=$tenth --detailed-exitcode
  fi
  if [ "$full" = 1 ]; then
    # The goal (issue 56): full refresh <= 8x the floor, measured before
    # each as for the no-change plans.
    : > "$work/floors-json"; : > "$work/full"
    for i in 1 2 3; do
      floor "$n" >/dev/null
      plans "N=$n: full refresh, no change ($i)" -C "$dir" --detailed-exitcode --refresh=full
      [ -z "$before" ] && cat "$work/last" >> "$work/full"
    done
    if [ -z "$before" ]; then
      awk -v p="$(median "$work/full")" -v j="$(median "$work/floors-json")" -v n="$n" \
        'BEGIN { printf "N=%d: full refresh, no change, median %.2f s; floor (JSON), median %.2f s; ratio %.2fx\n", n, p, j, p / j }'
    fi
    plans "N=$n: full refresh, 1 changed" -C "$dir" --var one=true --detailed-exitcode --refresh=full
    plans "N=$n: full refresh, 3 changed" -C "$dir" --var changed=1 --detailed-exitcode --refresh=full
    plans "N=$n: full refresh, 10% changed" -C "$dir" --var changed=$tenth --detailed-exitcode --refresh=full
  fi
  fetch "N=$n: records in full (JSON)" application/json "$work/urls-records"
  if [ -n "${APPLY_FLOOR:-}" ]; then
    "$work/convoy" render -C "$dir" > "$work/rendered"
    served=$(apiserver_requests)
    "$work/applyfloor" -p "$apply_p" -prefix "floor-" < "$work/rendered" | tee "$work/floor-apply"
    all=$(( $(apiserver_requests) - served ))
    awk -v n="$n" -v a="$all" -v c="$apply_secs" -v line="$(cat "$work/floor-apply")" 'BEGIN {
      split(line, w, " "); s = w[9]
      printf "N=%d: apply floor: %.1f releases/s; the API server served %d requests (%.0f/s, %.1f per release); the apply (%.1f releases/s) at %.2fx the floor rate\n",
        n, n / s, a, a / s, a / n, n / c, (n / c) / (n / s) }'
  fi
done

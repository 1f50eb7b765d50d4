#!/usr/bin/env bash
# hack/faults.sh: fault injection during `convoy apply` (docs/faults.md).
#
# Starts a private devcluster; for each scenario, writes a stack of its own
# ($RELEASES small releases in namespace f-SCENARIO: a ConfigMap and a
# Deployment each, pods Ready only after --var delay, the devcluster's
# ready-after annotation), applies it once, then runs the scenario during a
# `convoy apply -p 10` that changes every release:
#
#   apiserver  once the releases wait, SIGSTOP the kube-apiserver for
#              $FREEZE s, then SIGCONT
#   etcd       SIGSTOP etcd for $FREEZE s, then SIGCONT
#   takeover   SIGSTOP the apply once its releases wait; 40 s later (its
#              Lease expired) a
#              second apply with other values takes the lock over and
#              finishes; then SIGCONT the first (issue 43, item 1)
#   kill9      SIGKILL the apply once its releases wait
#
# After each, one healing `convoy apply` with the last values, then checks
# with helm v4 on the cluster's kubeconfig:
#   one-deployed  no release has two `deployed` revisions (helm history)
#   no-pending    no release is left pending-* (helm list -A --pending …)
#   plan-clean    `convoy plan --detailed-exitcode` exits 0
# and prints a table: scenario, outcome, checks passed/failed. Exits 1 when
# a check failed.
#
# Usage: hack/faults.sh [scenario ...]    (default: all four, in that order)
#
# Environment:
#   FAULTS_DIR  work directory (default: a new temporary one; kept, it holds
#               the logs)
#   HELM        helm v4 (default: the tools directory's helm-v4.3.1)
#   RELEASES    releases in the stack (default 30)
#   FREEZE      seconds a component stays frozen (default 20)
#   NO_BUILD=1  use bin/convoy and bin/devcluster as they are
#
# Not part of `make test`: it takes several minutes and freezes processes.
# It signals only the processes it started or the components its own
# devcluster records (`bin/devcluster pids`), never processes by name.
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$PWD
RELEASES=${RELEASES:-30}
FREEZE=${FREEZE:-20}
TOOLS=${CONVOY_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/convoy/tools}
HELM=${HELM:-$TOOLS/helm-v4.3.1/bin/helm}
W=${FAULTS_DIR:-$(mktemp -d /tmp/convoy-faults.XXXXXX)}
mkdir -p "$W"
CONVOY=$ROOT/bin/convoy
DEVCLUSTER=$ROOT/bin/devcluster
STATE=$W/cluster
KC=$STATE/kubeconfig
# Set per scenario: its stack directory and namespace.
STACK=
NS=

log() { printf '%s %s\n' "$(date -u +%H:%M:%S)" "$*" >&2; }

if [[ -z ${NO_BUILD:-} ]]; then
	log "building bin/convoy and bin/devcluster"
	CGO_ENABLED=0 go build -o "$CONVOY" ./cmd/convoy
	go build -o "$DEVCLUSTER" ./hack/devcluster
fi
[[ -x $HELM ]] || {
	echo "faults.sh: helm v4 not found at $HELM (make tools, or set HELM)" >&2
	exit 2
}

# alive PID: whether PID is a background job of this shell that has not
# ended (running or stopped). Never a bare pid check: a pid that ended is
# soon another process's (pid_max may be 32768).
alive() {
	local jobs
	jobs=" $(jobs -rp | tr '\n' ' ') $(jobs -sp | tr '\n' ' ') "
	[[ $jobs == *" $1 "* ]]
}

# Components this script froze, to resume on exit (they live as long as
# the devcluster, which is stopped after).
FROZEN=()
cleanup() {
	local pid
	for pid in "${FROZEN[@]}"; do kill -CONT "$pid" 2>/dev/null || true; done
	for pid in $(jobs -rp) $(jobs -sp); do
		kill -CONT "$pid" 2>/dev/null || true
		kill -KILL "$pid" 2>/dev/null || true
	done
	"$DEVCLUSTER" down --state "$STATE" >/dev/null 2>&1 || true
	log "logs in $W"
}
trap cleanup EXIT

log "starting a devcluster (state $STATE)"
"$DEVCLUSTER" up --state "$STATE" >"$W/devcluster-up.log"

# component_pid NAME: the pid of one of the devcluster's components.
component_pid() {
	"$DEVCLUSTER" pids --state "$STATE" | awk -v n="$1" '$1 == n { print $2 }'
}
freeze() { # PID: SIGSTOP it, resumed on exit if still frozen
	FROZEN+=("$1")
	kill -STOP "$1"
}
thaw() {
	kill -CONT "$1"
	local keep=() p
	for p in "${FROZEN[@]}"; do [[ $p == "$1" ]] || keep+=("$p"); done
	FROZEN=("${keep[@]}")
}

# write_stack: the scenario's stack, RELEASES releases of one chart in
# namespace NS, at STACK.
write_stack() {
mkdir -p "$STACK/charts/app/templates"
cat >"$STACK/charts/app/Chart.yaml" <<'EOF'
apiVersion: v2
name: app
version: 0.1.0
EOF
cat >"$STACK/charts/app/values.yaml" <<'EOF'
gen: "0"
delay: 1s
EOF
cat >"$STACK/charts/app/templates/configmap.yaml" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}
data:
  gen: {{ .Values.gen | quote }}
EOF
cat >"$STACK/charts/app/templates/deployment.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: 1
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
      annotations:
        gen: {{ .Values.gen | quote }}
        devcluster.convoy.dev/ready-after: {{ .Values.delay | quote }}
    spec:
      containers:
        - name: web
          image: nginx:1.27
EOF
cat >"$STACK/stack.hcl" <<EOF
stack "$NS" {
  default_namespace = "$NS"
}

variable "gen" {
  default = "0"
}

variable "delay" {
  default = "1s"
}

release "web" {
  for_each         = toset([for i in range($RELEASES) : format("web-%02d", i)])
  name             = each.key
  chart            = "./charts/app"
  create_namespace = true
  values           = [{ gen = var.gen, delay = var.delay }]
  wait             = true
  timeout          = "2m"
}
EOF
}

# convoy_cmd ARGS: convoy on the devcluster, in the stack.
convoy_cmd() { "$CONVOY" "$@" -C "$STACK" --kubeconfig "$KC"; }

# apply_bg LOG GEN DELAY: start an apply in the background; its pid in $!.
apply_bg() {
	"$CONVOY" apply -C "$STACK" --kubeconfig "$KC" --auto-approve --no-progress -p 10 \
		--var gen="$2" --var delay="$3" >"$1" 2>&1 &
}

# wait_exit PID SECONDS: sets RC to the exit code of a background apply,
# or to 124 after SECONDS (it is killed then). Not in a subshell: only
# this shell can wait for its children.
wait_exit() {
	local pid=$1 deadline=$((SECONDS + $2))
	while alive "$pid" && ((SECONDS < deadline)); do sleep 1; done
	if alive "$pid"; then
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		RC=124
		return
	fi
	RC=0
	wait "$pid" || RC=$?
}

# check GEN DELAY: the checks after a scenario's healing run; prints
# "passed failed names-of-failed".
check() {
	local gen=$1 delay=$2 pass=0 fail=0 failed=()
	local list bad
	# helm 4 lists the newest revision of each release in these states
	# (helm 3's --all).
	if ! list=$("$HELM" list -A --deployed --failed --pending --superseded --uninstalling \
		--kubeconfig "$KC" -o json 2>"$W/$SCEN-helm.err"); then
		echo "0 3 helm-list-failed"
		return
	fi
	local count
	count=$(jq '[.[] | select(.namespace == "'"$NS"'")] | length' <<<"$list")
	if ((count != RELEASES)); then # the checks would pass vacuously
		echo "0 3 helm-list($count-of-$RELEASES)"
		return
	fi
	bad=$(jq -r '.[] | select(.status | startswith("pending")) | "\(.name):\(.status)"' <<<"$list")
	if [[ -z $bad ]]; then pass=$((pass + 1)); else
		fail=$((fail + 1))
		failed+=("no-pending($(echo $bad | tr ' ' ','))")
	fi
	local twice=() name n hist
	for name in $(jq -r '.[] | select(.namespace == "'"$NS"'") | .name' <<<"$list"); do
		if ! hist=$("$HELM" history "$name" -n "$NS" --kubeconfig "$KC" --max 256 -o json 2>>"$W/$SCEN-helm.err"); then
			twice+=("$name:history-failed")
			continue
		fi
		n=$(jq '[.[] | select(.status == "deployed")] | length' <<<"$hist")
		((n > 1)) && twice+=("$name:$n")
	done
	if ((${#twice[@]} == 0)); then pass=$((pass + 1)); else
		fail=$((fail + 1))
		failed+=("one-deployed(${#twice[@]}:${twice[*]:0:2})")
	fi
	local rc=0
	convoy_cmd plan --detailed-exitcode --var gen="$gen" --var delay="$delay" >"$W/$SCEN-plan.log" 2>&1 || rc=$?
	if ((rc == 0)); then pass=$((pass + 1)); else
		fail=$((fail + 1))
		failed+=("plan-clean(exit $rc)")
	fi
	echo "$pass $fail ${failed[*]:-}"
}

# mid_apply LOG: wait (up to 2 min) until the apply logging to LOG has
# recorded its pending revisions and waits for readiness: the moment the
# faults hit, whatever the machine's load.
mid_apply() {
	local deadline=$((SECONDS + 120))
	until grep -q 'waiting for' "$1" 2>/dev/null || ((SECONDS >= deadline)); do sleep 0.2; done
}

# heal LOG GEN DELAY: the healing apply; prints its exit code.
heal() {
	local rc=0
	"$CONVOY" apply -C "$STACK" --kubeconfig "$KC" --auto-approve --no-progress -p 10 \
		--var gen="$2" --var delay="$3" >"$1" 2>&1 || rc=$?
	echo "$rc"
}

ROWS=()
row() { ROWS+=("$1|$2|$3|$4"); }

scenario_freeze() { # COMPONENT
	local comp=$1 pid rc hrc
	pid=$(component_pid "$comp")
	[[ -n $pid ]] || {
		row "$SCEN" "no $comp pid in the state dir" 0 "1 (setup)"
		return
	}
	apply_bg "$W/$SCEN-apply.log" "$SCEN" 8s
	local apid=$!
	mid_apply "$W/$SCEN-apply.log"
	log "$SCEN: SIGSTOP $comp (pid $pid) for ${FREEZE}s"
	freeze "$pid"
	sleep "$FREEZE"
	thaw "$pid"
	log "$SCEN: SIGCONT $comp"
	wait_exit "$apid" 600
	rc=$RC
	hrc=$(heal "$W/$SCEN-heal.log" "$SCEN" 8s)
	finish "apply exit $rc, heal exit $hrc" "$SCEN" 8s
}

scenario_takeover() {
	local apid brc rc hrc
	apply_bg "$W/$SCEN-apply-a.log" "$SCEN-a" 10s
	apid=$!
	mid_apply "$W/$SCEN-apply-a.log"
	log "$SCEN: SIGSTOP the first apply (pid $apid); waiting 40s for its Lease to expire"
	freeze "$apid"
	sleep 40
	log "$SCEN: a second apply takes the lock over"
	brc=$(heal "$W/$SCEN-apply-b.log" "$SCEN-b" 3s)
	log "$SCEN: second apply exit $brc; SIGCONT the first"
	thaw "$apid"
	wait_exit "$apid" 600
	rc=$RC
	# Checked before healing too: what the resumed run wrote is the point.
	local pre
	pre=$(check "$SCEN-b" 3s)
	log "$SCEN: before healing: checks passed/failed: $pre"
	hrc=$(heal "$W/$SCEN-heal.log" "$SCEN-b" 3s)
	finish "B exit $brc, resumed A exit $rc, heal exit $hrc; before healing: $(cut -d' ' -f1,2 <<<"$pre" | awk '{print $1" passed/"$2" failed"}')" "$SCEN-b" 3s
}

scenario_kill9() {
	local apid rc hrc
	apply_bg "$W/$SCEN-apply.log" "$SCEN" 10s
	apid=$!
	mid_apply "$W/$SCEN-apply.log"
	sleep 1
	log "$SCEN: SIGKILL the apply (pid $apid)"
	alive "$apid" && kill -KILL "$apid"
	wait_exit "$apid" 30
	rc=$RC
	hrc=$(heal "$W/$SCEN-heal.log" "$SCEN" 10s)
	finish "apply exit $rc (killed), heal exit $hrc" "$SCEN" 10s
}

# finish OUTCOME GEN DELAY: run the checks and add the row.
finish() {
	local res pass fail names
	res=$(check "$2" "$3")
	read -r pass fail names <<<"$res"
	log "$SCEN: $1; checks $pass passed, $fail failed ${names:-}"
	row "$SCEN" "$1" "$pass" "$fail${names:+ $names}"
}

SCENARIOS=("$@")
((${#SCENARIOS[@]})) || SCENARIOS=(apiserver etcd takeover kill9)
for SCEN in "${SCENARIOS[@]}"; do
	case $SCEN in
	apiserver | etcd | takeover | kill9) ;;
	*)
		echo "faults.sh: unknown scenario $SCEN (apiserver, etcd, takeover, kill9)" >&2
		exit 2
		;;
	esac
	STACK=$W/$SCEN/stack NS=f-$SCEN
	write_stack
	log "scenario $SCEN: initial apply of $RELEASES releases in namespace $NS"
	rc=$(heal "$W/$SCEN-initial.log" 0 1s)
	if ((rc != 0)); then
		log "$SCEN: the initial apply failed (exit $rc), see $W/$SCEN-initial.log"
		row "$SCEN" "initial apply exit $rc" 0 "1 (setup)"
		continue
	fi
	case $SCEN in
	apiserver) scenario_freeze kube-apiserver ;;
	etcd) scenario_freeze etcd ;;
	takeover) scenario_takeover ;;
	kill9) scenario_kill9 ;;
	esac
done

failed=0
{
	printf '%s|%s|%s|%s\n' scenario outcome passed failed
	printf '%s\n' "${ROWS[@]}"
} | column -t -s '|'
for r in "${ROWS[@]}"; do
	[[ $(cut -d'|' -f4 <<<"$r" | cut -d' ' -f1) == 0 ]] || failed=1
done
exit "$failed"

# Shared setup of hack/bench/pipeline.sh and fleet.sh, sourced by them:
# the work directory and its cleanup list, the convoy and devcluster
# binaries, a local registry, the one-ConfigMap chart, and the
# controller's CPU time and peak RSS. Needs $root set, and the registry
# binary in $CONVOY_REGISTRY (make tools).

: "${CONVOY_REGISTRY:?set CONVOY_REGISTRY to the registry binary (make tools)}"
work=$(mktemp -d)
pids=()

# bench_build builds convoy and devcluster into $work.
bench_build() {
  (cd "$root" && CGO_ENABLED=0 go build -o "$work/convoy" ./cmd/convoy && go build -o "$work/devcluster" ./hack/devcluster)
}

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# bench_registry starts a registry on a free port: $port. With
# BENCH_WEBHOOK=URL and BENCH_TOKEN, it notifies URL of every push, as a
# registry tells the controller's push receiver (docs/pipelines.md).
bench_registry() {
  port=$(free_port)
  notify=""
  if [ -n "${BENCH_WEBHOOK:-}" ]; then
    notify="notifications: { endpoints: [ { name: convoy, url: $BENCH_WEBHOOK, headers: { Authorization: [Bearer $BENCH_TOKEN] }, timeout: 5s, threshold: 1, backoff: 1s, ignore: { actions: [pull] } } ] }"
  fi
  cat > "$work/registry.yml" <<YML
version: 0.1
log: { level: error, accesslog: { disabled: true } }
storage: { filesystem: { rootdirectory: $work/registry } }
http: { addr: 127.0.0.1:$port, secret: bench }
$notify
YML
  "$CONVOY_REGISTRY" serve "$work/registry.yml" >"$work/registry.log" 2>&1 &
  pids+=($!)
  until curl -sf "http://127.0.0.1:$port/v2/" >/dev/null; do sleep 0.1; done
}

# bench_chart writes the chart (one ConfigMap of .Values.version) into
# $src/charts/app.
bench_chart() {
  mkdir -p "$src/charts/app/templates"
  printf 'apiVersion: v2\nname: app\nversion: 0.1.0\n' > "$src/charts/app/Chart.yaml"
  cat > "$src/charts/app/templates/app.yaml" <<'Y'
apiVersion: v1
kind: ConfigMap
metadata: { name: {{ .Release.Name }}-config }
data: { version: {{ .Values.version | quote }} }
Y
}

# bench_kill stops what the bench started (pids).
bench_kill() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}

# cpu and rss: a process's CPU time (s) and peak RSS (MiB).
cpu() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.1f", ($14 + $15) / t }' "/proc/$1/stat"; }
rss() { awk '/VmHWM/ { printf "%d", $2 / 1024 }' "/proc/$1/status"; }

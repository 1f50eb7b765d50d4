#!/usr/bin/env bash
# Runs every test (unit and integration) against one devcluster started for
# this run, and tears it down however the tests end. Called by `make test`,
# which has built the tools every package needs (the control plane, kwok, the
# helm oracle, the registry) and bin/devcluster, and exported their paths.
#
# The oracles only a few tests run (Prometheus, helm 3, helmfile, cosign, Chromium) are built
# here, in the background, while the tests run: hack/build-tools.sh holds a
# lock per tool while it builds it, and a test that needs one waits for its
# lock (devcluster.Locate*) rather than failing. With them built already,
# the background build ends at once.
set -euo pipefail
cd "$(dirname "$0")/.."

state=$(mktemp -d "${TMPDIR:-/tmp}/convoy-test-cluster.XXXXXX")
oracles=
cleanup() {
  if [ -n "$oracles" ] && kill -0 "$oracles" 2>/dev/null; then
    kill -- "-$oracles" 2>/dev/null || kill "$oracles" 2>/dev/null || true
  fi
  bin/devcluster down --state "$state" || true
  rm -rf "$state"
}
trap cleanup EXIT

# A process group of its own, so that cleanup stops the builds it started.
set -m
hack/build-tools.sh --locked "$state/oracles.locked" prometheus helm3 helmfile cosign chromium postgresql jq 2>"$state/oracles.log" &
oracles=$!
set +m
# The tests start only once the builder holds its locks (or has ended).
while [ ! -e "$state/oracles.locked" ] && kill -0 "$oracles" 2>/dev/null; do sleep 0.1; done

bin/devcluster up --state "$state"
rc=0
CONVOY_TEST_KUBECONFIG="$state/kubeconfig" go test -count=1 -timeout 30m "$@" ./... || rc=$?

if ! wait "$oracles"; then
  echo "test: building the oracles failed (the tests that need them failed, saying so):" >&2
  cat "$state/oracles.log" >&2
  rc=1
fi
oracles=
grep -h ' took ' "$state/oracles.log" >&2 || true
exit "$rc"

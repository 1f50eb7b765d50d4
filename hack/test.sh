#!/usr/bin/env bash
# Runs every test (unit and integration) against one devcluster started for
# this run, and tears it down however the tests end. Called by `make test`,
# which has built the tools and bin/devcluster and exported their paths.
set -euo pipefail
cd "$(dirname "$0")/.."

state=$(mktemp -d "${TMPDIR:-/tmp}/convoy-test-cluster.XXXXXX")
cleanup() {
  bin/devcluster down --state "$state" || true
  rm -rf "$state"
}
trap cleanup EXIT

bin/devcluster up --state "$state"
CONVOY_TEST_KUBECONFIG="$state/kubeconfig" go test -count=1 -timeout 30m "$@" ./...

# convoy's build, test and local-cluster entry points. Tool versions are
# pinned in hack/tools.env; the tools are built from the Go module proxy into
# a cache outside the repository (hack/build-tools.sh).
include hack/tools.env

TOOLS_DIR := $(or $(CONVOY_TOOLS_DIR),$(or $(XDG_CACHE_HOME),$(HOME)/.cache)/convoy/tools)
export CONVOY_TOOLS_DIR := $(TOOLS_DIR)
export CONVOY_KUBE_BIN_DIR := $(TOOLS_DIR)/k8s-$(K8S_VERSION)/bin
export CONVOY_KWOK_BIN := $(TOOLS_DIR)/kwok-$(KWOK_VERSION)/bin/kwok
export CONVOY_HELM := $(TOOLS_DIR)/helm-$(HELM_VERSION)/bin/helm
export CONVOY_HELM3 := $(TOOLS_DIR)/helm3-$(HELM3_VERSION)/bin/helm
# A source build, else Debian's package unpacked into the cache (expanded when
# a recipe runs, after the tools are built; the tests also look on PATH:
# devcluster.LocateRegistry).
export CONVOY_REGISTRY = $(or $(wildcard $(TOOLS_DIR)/registry-$(REGISTRY_VERSION)/bin/registry),$(TOOLS_DIR)/registry-debian/bin/registry)
export CONVOY_HELMFILE := $(TOOLS_DIR)/helmfile-$(HELMFILE_VERSION)/bin/helmfile
export CONVOY_COSIGN := $(TOOLS_DIR)/cosign-$(COSIGN_VERSION)/bin/cosign
# A source build; else Debian's package on PATH (devcluster.LocatePrometheus).
export CONVOY_PROMETHEUS := $(TOOLS_DIR)/prometheus-$(PROMETHEUS_VERSION)/bin/prometheus
CONTROLLER_GEN := $(TOOLS_DIR)/controller-gen-$(CONTROLLER_GEN_VERSION)/bin/controller-gen

# One build configuration for the binary, the tests and the binaries the
# tests build (static, as shipped), so that one build cache serves them all.
export CGO_ENABLED := 0

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
DATE ?= $(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ 2>/dev/null)
LDFLAGS := -X github.com/convoy-sh/convoy/internal/version.version=$(VERSION) \
           -X github.com/convoy-sh/convoy/internal/version.commit=$(COMMIT) \
           -X github.com/convoy-sh/convoy/internal/version.date=$(DATE)

DEVCLUSTER_STATE := .devcluster

.PHONY: build dist image tools cluster-tools test-tools test test-short lint generate verify-generated demo devcluster-up devcluster-down bin/devcluster

# Static (no cgo): a cgo build links the plugin package kustomize imports,
# which exports every symbol (185 MB against 138 MB, 40 MiB more resident at
# start; docs/performance.md).
build:
	go build -ldflags '$(LDFLAGS)' -o bin/convoy ./cmd/convoy

# The controller's image: a static convoy binary per platform on a minimal
# base (CA bundle, user 65532, /tmp), assembled and pushed as an OCI index by
# hack/image without a container engine. Loopback registries (127.0.0.1:PORT,
# localhost:PORT) are spoken to over plain HTTP; others with the credentials
# of ~/.docker/config.json. Files and configs carry the commit's time, so a
# commit's image has one digest.
IMAGE ?= ghcr.io/convoy-sh/convoy:$(VERSION)
IMAGE_PLATFORMS ?= linux/amd64,linux/arm64
image:
	go run ./hack/image --image '$(IMAGE)' --platforms '$(IMAGE_PLATFORMS)' \
		--version '$(VERSION)' --commit '$(COMMIT)' --created '$(SOURCE_DATE_EPOCH)' \
		--ldflags '$(LDFLAGS) -s -w'

# Release files in dist/: convoy for linux, darwin and windows on amd64 and
# arm64 (archives), an SPDX SBOM, SHA256SUMS and, with DIST_KEY (a cosign
# or openssl ECDSA P-256 key; COSIGN_PASSWORD for a cosign one), its
# signature by convoy's signing code and the public key (hack/dist).
DIST_KEY ?=
dist:
	go run ./hack/dist --out dist --version '$(VERSION)' --commit '$(COMMIT)' --created '$(SOURCE_DATE_EPOCH)' \
		--ldflags '$(LDFLAGS) -s -w' --key '$(DIST_KEY)'

bin/devcluster:
	go build -o bin/devcluster ./hack/devcluster

# Builds what is missing: the control plane, kwok, the helm oracles (v4 and v3),
# the registry (Debian's package, unpacked, where apt-get can download it),
# Prometheus (the metric gate's tests; Debian's package where
# apt-get can install it), the helmfile and cosign oracles and Chromium (convoy
# ui's browser tests; Debian's package). A no-op once built. In two waves:
# the test tools first, then the oracles (all nine side by side took 1,070 s
# against 921 s in two waves, and delayed the control plane). From empty
# caches on two cores: 350 s, then 325 s (docs/devcluster.md).
tools: test-tools
	hack/build-tools.sh prometheus helm3 helmfile cosign chromium postgresql jq

# What a local cluster needs (the demo does not wait for the test oracles).
cluster-tools:
	hack/build-tools.sh k8s kwok

# What every test package may need; hack/test.sh builds the oracles that
# only a few tests run (Prometheus, helm 3, helmfile, cosign) while the tests run.
test-tools:
	hack/build-tools.sh k8s kwok helm registry

# Unit and integration tests against a devcluster of their own.
test: test-tools bin/devcluster
	hack/test.sh

# The tests that need neither a cluster nor a built tool (go test -short):
# the others skip, saying what they need.
test-short:
	go test -short ./...

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	go vet ./...

# The API types' deepcopy functions and the CRDs, generated from the types
# and their kubebuilder markers by controller-gen (built into the tools
# cache), then the schema parts no marker can say (api/v1alpha1/crd-patches.yaml).
# The chart's crds/ are the one copy: `convoy controller install` embeds them.
# ignoreUnexportedFields: StackSpec.decodeErrors and PipelineStackRef.raw are
# no part of the API; allowDangerousTypes: a Prometheus gate's max is a float.
CRD_DIR := deploy/chart/convoy-controller/crds
GENERATED := api/v1alpha1/zz_generated.deepcopy.go $(CRD_DIR)
generate:
	hack/build-tools.sh controller-gen
	$(CONTROLLER_GEN) object crd:ignoreUnexportedFields=true,allowDangerousTypes=true \
		paths=./api/... output:crd:dir=$(CRD_DIR)
	go run ./hack/crdpatch api/v1alpha1/crd-patches.yaml $(CRD_DIR)

# Fails when a generated file differs from what `make generate` writes (or
# is new): run make generate and commit the result. CI runs it.
verify-generated: generate
	@out=$$(git status --porcelain -- $(GENERATED)); if [ -n "$$out" ]; then \
		echo "generated files are stale (run make generate and commit them):"; echo "$$out"; \
		git --no-pager diff --stat -- $(GENERATED); exit 1; fi

# The main job: a local cluster, then plan, apply and status of the example
# shop stack (a database, an API and a web front end per region, with a
# migration hook and waits).
DEMO_STACK ?= examples/shop
DEMO_KUBECONFIG := $(CURDIR)/$(DEVCLUSTER_STATE)/kubeconfig
demo: build cluster-tools bin/devcluster
	bin/devcluster up --state $(DEVCLUSTER_STATE)
	KUBECONFIG=$(DEMO_KUBECONFIG) bin/convoy plan -C $(DEMO_STACK)
	KUBECONFIG=$(DEMO_KUBECONFIG) bin/convoy apply -C $(DEMO_STACK) --auto-approve
	KUBECONFIG=$(DEMO_KUBECONFIG) bin/convoy status -C $(DEMO_STACK)
	@echo
	@echo "The stack is deployed. Try: export KUBECONFIG=$(DEMO_KUBECONFIG); bin/convoy plan -C $(DEMO_STACK) --var api_replicas=3"
	@echo "Stop the cluster with: make devcluster-down"

devcluster-up: cluster-tools bin/devcluster
	bin/devcluster up --state $(DEVCLUSTER_STATE)
	@echo "export KUBECONFIG=$(CURDIR)/$(DEVCLUSTER_STATE)/kubeconfig"

devcluster-down: bin/devcluster
	bin/devcluster down --state $(DEVCLUSTER_STATE)

# kubectl-rv. `make help` lists the targets.
SHELL := /usr/bin/env bash
GO ?= go
VERSION ?= $(shell hack/version.sh)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
PKG := github.com/kubectl-rv/kubectl-rv/pkg/version
LDFLAGS := -X $(PKG).gitVersion=$(VERSION) -X $(PKG).gitCommit=$(COMMIT) -X $(PKG).buildDate=$(DATE)
BIN := _output/bin
PREFIX ?= $(HOME)/.local/bin
E2E_TIMEOUT ?= 75m

.PHONY: help demo build install test test-unit test-quick e2e lint bench control-plane cluster-up cluster-down docs release release-check fuzz clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-14s %s\n", $$1, $$2}'

demo: ## build kubectl-rv and run kubectl rv simulate, offline (the README's first command)
	@echo "building $(BIN)/kubectl-rv: the first build compiles the API server's packages (several minutes on 2 cores; seconds once Go's cache is warm)" >&2
	@$(GO) build -trimpath -o $(BIN)/kubectl-rv ./cmd/kubectl-rv
	@echo "running kubectl rv simulate" >&2
	@$(BIN)/kubectl-rv simulate

build: ## build _output/bin/kubectl-rv
	$(GO) build -trimpath -ldflags "$(LDFLAGS)" -o $(BIN)/kubectl-rv ./cmd/kubectl-rv

install: build ## install kubectl-rv and kubectl_complete-rv into PREFIX (default ~/.local/bin)
	install -d $(PREFIX)
	install -m 0755 $(BIN)/kubectl-rv $(PREFIX)/kubectl-rv
	install -m 0755 hack/kubectl_complete-rv $(PREFIX)/kubectl_complete-rv

test: ## unit tests with -race beside the e2e suite against a real control plane (hack/test.sh)
	hack/test.sh

# Tests that push tens of thousands of events through a decoder, an engine
# or the simulator, to hold two paths equal, a memory bound or golden bytes,
# and the log services' million-event paging tests. Under -race they cost
# several times their plain run (figures in docs/bench/test-time.md): the race
# detector's cost on every memory access, not a race to find, since the
# concurrent parts they pass through (the mapped reader, the stream's pipe,
# the paging clients) are raced by smaller tests, and the simulator runs on
# one goroutine. They run once, without -race; every other test runs with it.
HEAVY_TESTS := ^(TestAnalyzeMemoryBounded|TestDecodeMappedMatchesRead|TestDecodeReuseMatches|TestTrackerRetainsLessThanJSON|TestSourcePagesThroughAMillionEvents|TestSourcePagesThroughAMillionDocuments|TestSourceStreamsAMillionRows|TestStreamMatchesReference|TestBuiltinGolden|TestSameSeedSameBytes|TestSVGShowsWhatWentWrong|TestSVGIsWellFormed)$$

test-unit: ## unit tests with -race (the heavy data tests once, without it)
	$(GO) test -race -trimpath -count=1 -skip '$(HEAVY_TESTS)' ./...
	CGO_ENABLED=0 $(GO) test -trimpath -count=1 -run '$(HEAVY_TESTS)' ./pkg/audit/... ./pkg/conflicts ./pkg/inspect ./pkg/output/simprint

test-quick: ## unit tests without -race, cached: the edit loop (make test-unit before you push)
	$(GO) test ./...

# The e2e tests that wait on control planes rather than use the CPU (doctor
# on its planes, leases, the release build's check: see test/e2e's TestMain)
# run in parallel at the end of the suite, all at once: the limit is above
# their count (26 with their parallel subtests), so none waits for a slot.
E2E_PARALLEL ?= 32

# The suite is built with the release build's flags (CGO_ENABLED=0,
# -trimpath), as are the kubectl-rv it runs and the release test's build for
# this platform (framework.GoBuild): one set of compiled packages for all.
e2e: control-plane ## end-to-end tests against a real control plane (built on first use)
	set -o pipefail; CGO_ENABLED=0 $(GO) test -trimpath -tags e2e -count=1 -timeout $(E2E_TIMEOUT) -parallel $(E2E_PARALLEL) -v ./test/e2e/ 2>&1 | hack/e2e-summary.sh

control-plane: ## build (or reuse) etcd, kube-apiserver, kube-controller-manager, kubectl and kine
	hack/build-control-plane.sh >/dev/null
	hack/build-kine.sh >/dev/null

cluster-up: ## start a local control plane; prints the export KUBECONFIG line
	hack/local-cluster.sh up

cluster-down: ## stop the local control plane
	hack/local-cluster.sh down

lint: ## gofmt, go vet, function length (at most 80 lines in pkg/), and the generated docs check
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(GO) vet -tags e2e ./test/...
	@if [ -x hack/verify-docs.sh ]; then hack/verify-docs.sh; fi
	$(GO) run ./hack/funclen -max 80 pkg

bench: ## benchmarks of the engines
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/...

fuzz: ## a short fuzzing run of every decoder and parser
	hack/fuzz.sh

docs: ## regenerate docs/commands from the cobra commands
	hack/update-docs.sh

release: ## cross-compile archives and render the krew manifest: make release VERSION=v0.1.0
	hack/release.sh $(VERSION)

# The e2e suite's release test builds two platforms (this machine's and
# windows/amd64); release-check builds all five, as make release does, into
# a scratch directory, and checks the archives and the krew manifest. CI
# and the release manager run it; PLATFORMS from the environment is ignored.
release-check: ## cross-compile all five platforms into a scratch directory and check archives and krew manifest
	@dir=$$(mktemp -d) && trap 'rm -rf "$$dir"' EXIT && DIST="$$dir/dist" PLATFORMS= hack/release.sh $(VERSION)

clean: ## remove built binaries (keeps the cached control plane)
	rm -rf $(BIN) dist

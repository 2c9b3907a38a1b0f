# Every routine task. Targets that touch Go code loop over every module (each
# directory with a go.mod), in the workspace and, for `standalone`, alone.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

# The modules the routine targets loop over. scripts/ holds the release
# tool and e2e/hosts/ programs that stand for outside users: both are in
# go.work, so editors and go vet see them, but they are built and tested
# their own way (release-tool; release-check builds the hosts as strangers
# would, with no go.sum of their own to keep tidy).
MODULES := $(shell find . -name go.mod -not -path './e2e/peers/*' -not -path './e2e/hosts/*' -not -path './scripts/*' -not -path '*/testdata/*' -not -path '*/node_modules/*' -exec dirname {} \; | sed 's|^\./||' | sort)
GO ?= go
FUZZTIME ?= 20s
# Go minimizes every input that finds new coverage, for up to a minute by
# default, in time quadratic in the input's length; bounded here so one
# long input cannot take a target's whole FUZZTIME.
FUZZMINIMIZETIME ?= 5s
BENCHTIME ?= 1s
BENCHCOUNT ?= 3

# Runs a command in each module directory, naming the module on failure.
define each
	@for m in $(MODULES); do \
		( cd $$m && $(1) ) || { echo "make: failed in module $$m" >&2; exit 1; }; \
	done
endef

.PHONY: help
help: ## list the targets
	@awk -F':.*## ' '/^[a-z0-9-]+:.*## /{printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: ci
# make test caches results, except e2e's: its tests build the basis
# command, another module, which the cache does not see change.
# The tests of ci run once, each module alone (GOWORK=off, as a stranger builds
# it) and with the race detector; vet compiles every package and test in
# the workspace too.
# The tests and the release checks then run side by side: the tests wait
# on the programs they start, the release check compiles.
ci: fmt-check vet staticcheck tidy-check ## everything CI checks: these, then standalone beside release-tool, release-check and release-dry-run
	@$(MAKE) --no-print-directory -j2 --output-sync=target standalone ci-release
	@$(MAKE) --no-print-directory test-audit

.PHONY: test-audit
test-audit: ## the tests that turn the kernel's audit on, which is the whole machine's: alone, after every other test (they skip without CAP_AUDIT_CONTROL)
	cd sandbox && BASIS_TEST_AUDIT=1 GOWORK=off $(GO) test -count=1 -run 'Watch|Audit' ./...
	cd workspace && BASIS_TEST_AUDIT=1 GOWORK=off $(GO) test -count=1 -run 'Refus' ./...

.PHONY: ci-release
ci-release: ## release-tool, release-check, release-dry-run and test-nomcp, one after another
	@$(MAKE) --no-print-directory release-tool
	@$(MAKE) --no-print-directory release-check
	@$(MAKE) --no-print-directory release-dry-run
	@$(MAKE) --no-print-directory test-nomcp

.PHONY: test-nomcp
test-nomcp: ## cmd/basis's tests built with -tags nomcp (no MCP code at all), alone (GOWORK=off)
	cd cmd/basis && GOWORK=off $(GO) test -tags nomcp -count=1 ./...

.PHONY: test
test: ## the edit-test loop: go test in every module, in the workspace, results cached while nothing changed
	$(call each,$(GO) test $$([ $$m = e2e ] && echo -count=1) ./...)

.PHONY: test-race
test-race: ## go test -race in every module, in the workspace, nothing cached
	$(call each,$(GO) test -race -count=1 ./...)

.PHONY: vet
vet: ## go vet in every module
	$(call each,$(GO) vet ./...)

# staticcheck is pinned as a tool of scripts/tools, a module outside the
# workspace that holds nothing else, so its dependencies move no module's
# versions. `go tool -n` builds it once into the build cache (fetching it
# through the module proxy on a fresh machine) and prints its path; each
# module is then checked from its own directory. cmd/basis is checked as
# built by default and with -tags nomcp, results merged: what only one of
# the two builds uses is not unused.
STATICCHECK_MATRIX_cmd/basis := default:\nnomcp: -tags nomcp

.PHONY: staticcheck lint
staticcheck: ## staticcheck (pinned in scripts/tools/go.mod) in every module and the release tool
	@sc=$$(cd scripts/tools && GOWORK=off $(GO) tool -n staticcheck); \
	for m in $(MODULES) scripts/release; do \
		case $$m in \
		cmd/basis) ( cd $$m && printf '$(STATICCHECK_MATRIX_cmd/basis)\n' | $$sc -matrix ./... ) ;; \
		*) ( cd $$m && $$sc ./... ) ;; \
		esac || { echo "make: staticcheck failed in module $$m" >&2; exit 1; }; \
	done
lint: staticcheck ## alias of staticcheck

# apidiff (pinned in scripts/tools/go.mod, like staticcheck) lists, per
# module, the incompatible API changes between BASE and the working tree:
# what the CHANGELOG must name. BASE unset: each module against its last
# release tag, or 7246ab3 (the tree before issue 21) when it has none.
# MODULE=dir limits it to one module. Not part of ci: an incompatible
# change is a decision to write down, not a failure.
BASE ?=
.PHONY: apidiff
apidiff: ## incompatible API changes per module between BASE (default: last release tags, else 7246ab3) and the working tree
	@ad=$$(cd scripts/tools && GOWORK=off $(GO) tool -n apidiff); \
	scripts/apidiff.sh "$$ad" "$(BASE)" $(if $(MODULE),$(MODULE),$(filter-out e2e examples,$(MODULES)))

.PHONY: fmt-check
fmt-check: ## fail if gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

.PHONY: fmt
fmt: ## gofmt every file
	gofmt -w .

.PHONY: tidy-check
tidy-check: ## fail if go mod tidy would change a go.mod or go.sum (and the tools module's)
	$(call each,$(GO) mod tidy -diff)
	cd scripts/tools && GOWORK=off $(GO) mod tidy -diff

.PHONY: tidy
tidy: ## go mod tidy in every module
	$(call each,$(GO) mod tidy)

.PHONY: standalone
# Two modules at a time: much of a module's test time is spent waiting on
# the programs its tests start, which the other module's tests fill. Each
# module's output is printed whole when it is done.
STANDALONE_JOBS ?= 2
standalone: ## build and test (-race) every module alone (GOWORK=off), nothing cached, STANDALONE_JOBS at a time
	@printf '%s\n' $(MODULES) | xargs -P $(STANDALONE_JOBS) -I{} sh -c '\
		out=$$(cd {} && GOWORK=off $(GO) build ./... 2>&1 && GOWORK=off $(GO) test -race -count=1 ./... 2>&1); rc=$$?; \
		printf "%s\n" "$$out"; \
		[ $$rc -eq 0 ] || { echo "make: failed in module {}" >&2; exit 255; }'


.PHONY: bench
bench: e2e/peers/node_modules/.package-lock.json ## every ratio benchmark against its baseline and the MCP conformance table, written to e2e/BENCHMARKS.md
	@conf=$$(mktemp) && trap 'rm -f "$$conf"' EXIT && \
	(cd e2e && $(GO) run ./cmd/conformance -root .. > "$$conf") && \
	cd e2e && $(GO) run ./cmd/benchtable -root .. -count $(BENCHCOUNT) -benchtime $(BENCHTIME) -conformance "$$conf" -out BENCHMARKS.md

.PHONY: bench-all
bench-all: ## every benchmark of every module, once
	$(call each,$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./...)

# Each fuzz target runs alone for FUZZTIME; every target runs even after
# one fails, and the run fails at the end if any found something (see
# e2e/cmd/fuzzall, which also tells go1.26's -fuzztime deadline race,
# golang/go#75804, from a finding).
.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME each (default 20s); fail on any finding
	cd e2e && $(GO) run ./cmd/fuzzall -root .. -fuzztime $(FUZZTIME) -minimizetime $(FUZZMINIMIZETIME) $(MODULES)

.PHONY: soak
soak: ## 5,000 declared calls, 16 at a time, through the runtime and basis serve; goroutines, fds, children and RSS stay flat
	cd e2e && BASIS_SOAK=1 $(GO) test -run Soak -count=1 -v -timeout 30m .

.PHONY: build
build: ## build the basis command and its sandbox helper (static: it starts fastest) into bin/
	cd cmd/basis && $(GO) build -o $(CURDIR)/bin/basis .
	cd sandbox && CGO_ENABLED=0 $(GO) build -o $(CURDIR)/bin/basis-sandbox ./cmd/basis-sandbox

.PHONY: install
install: ## install the basis command and its sandbox helper into $(go env GOBIN), else $(go env GOPATH)/bin, and say whether that is on PATH
	@dir="$$($(GO) env GOBIN)"; [ -n "$$dir" ] || dir="$$($(GO) env GOPATH)/bin"; \
	(cd cmd/basis && $(GO) install .) && (cd sandbox && CGO_ENABLED=0 $(GO) install ./cmd/basis-sandbox) && \
	echo "installed $$dir/basis and $$dir/basis-sandbox" && \
	case ":$$PATH:" in *":$$dir:"*) echo "$$dir is on PATH: run basis";; \
	*) echo "$$dir is not on PATH: add it (export PATH=\"$$dir:\$$PATH\") or run $$dir/basis";; esac

.PHONY: demo
demo: build ## build basis and run it on the example workspace
	cd examples && $(GO) build -o $(CURDIR)/examples/workspace/.basis/bin/ ./tools/... ./mcpserver
	rm -rf examples/workspace/tickets
	examples/demo.sh $(CURDIR)/bin/basis examples/workspace

.PHONY: modules
modules: ## list the modules
	@printf '%s\n' $(MODULES)

# The release tool is a module of its own, outside the workspace.
RELEASE := cd scripts/release && GOWORK=off $(GO)

.PHONY: release-tool
release-tool: ## vet, tidy-check and test the release tool
	$(RELEASE) vet ./...
	$(RELEASE) mod tidy -diff
	$(RELEASE) test -race -count=1 ./...

.PHONY: release-check
release-check: ## prove every module being released builds as a stranger gets it (file proxy, no replaces), gorelease, hosts, go install
	$(RELEASE) run . check

VERSION_FILE ?=
.PHONY: release
release: ## tag the modules whose version in versions.yaml is untagged, in dependency order (DRY_RUN=1 prints the steps)
	$(RELEASE) run . release $(if $(VERSION_FILE),-versions $(abspath $(VERSION_FILE))) $(if $(DRY_RUN),-dry-run)

.PHONY: release-dry-run
release-dry-run: ## print what make release would do
	@$(MAKE) --no-print-directory release DRY_RUN=1

# The pinned peers, installed again whenever package-lock.json changed since
# the last install (npm ci writes node_modules/.package-lock.json), so a
# checkout that gains a peer gets it.
PEERS := e2e/peers/node_modules/.package-lock.json
$(PEERS): e2e/peers/package-lock.json
	cd e2e/peers && npm ci --no-audit --no-fund
	touch $@

.PHONY: e2e
e2e: $(PEERS) ## install the pinned MCP peers when missing or changed, run the end-to-end suite against them, then make conformance STRICT=1
	cd e2e && BASIS_E2E=1 $(GO) test -race -count=1 ./...
	@$(MAKE) --no-print-directory conformance STRICT=1

# STRICT=1: fail when basis serve fails a check everything-server passes
# directly that e2e/conformance/baseline.yml does not list, or basis as a
# client one everything-client passes that conformance/client-baseline.yml
# does not.
STRICT ?=
.PHONY: conformance
conformance: $(PEERS) ## the MCP conformance suite: basis serve against everything-server directly, then basis as a client against everything-client: two tables (STRICT=1 fails on a check basis loses)
	cd e2e && $(GO) run ./cmd/conformance -root .. $(if $(filter 1,$(STRICT)),-strict)

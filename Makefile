# Every routine task. Targets that touch Go code loop over every module (each
# directory with a go.mod), in the workspace and, for `standalone`, alone.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

MODULES := $(shell find . -name go.mod -not -path './e2e/peers/*' -not -path '*/testdata/*' -exec dirname {} \; | sed 's|^\./||' | sort)
GO ?= go
FUZZTIME ?= 10s
BENCHTIME ?= 1s

# Runs a command in each module directory, naming the module on failure.
define each
	@for m in $(MODULES); do \
		( cd $$m && $(1) ) || { echo "make: failed in module $$m" >&2; exit 1; }; \
	done
endef

.PHONY: help
help: ## list the targets
	@awk -F':.*## ' '/^[a-z-]+:.*## /{printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: ci
ci: fmt-check vet tidy-check test standalone ## everything CI checks

.PHONY: test
test: ## go test -race in every module
	$(call each,$(GO) test -race -count=1 ./...)

.PHONY: vet
vet: ## go vet in every module
	$(call each,$(GO) vet ./...)

.PHONY: fmt-check
fmt-check: ## fail if gofmt would change a file
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

.PHONY: fmt
fmt: ## gofmt every file
	gofmt -w .

.PHONY: tidy-check
tidy-check: ## fail if go mod tidy would change a go.mod or go.sum
	$(call each,$(GO) mod tidy -diff)

.PHONY: tidy
tidy: ## go mod tidy in every module
	$(call each,$(GO) mod tidy)

.PHONY: standalone
standalone: ## build and test every module alone (GOWORK=off)
	$(call each,GOWORK=off $(GO) build ./... && GOWORK=off $(GO) test -count=1 ./...)

.PHONY: bench
bench: ## run every benchmark once (ratios against baselines measured in the same run)
	$(call each,$(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) ./...)

.PHONY: fuzz
fuzz: ## run every fuzz target for FUZZTIME each
	@for m in $(MODULES); do \
		for pkg in $$(cd $$m && $(GO) list ./...); do \
			for f in $$(cd $$m && $(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
				echo "== $$pkg $$f"; \
				( cd $$m && $(GO) test -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME) $$pkg ) || exit 1; \
			done; \
		done; \
	done

.PHONY: build
build: ## build the basis command into bin/basis
	cd cmd/basis && $(GO) build -o $(CURDIR)/bin/basis .

.PHONY: demo
demo: build ## build basis and run it on the example workspace
	cd examples && $(GO) build -o $(CURDIR)/examples/workspace/.basis/bin/ ./tools/...
	rm -rf examples/workspace/tickets
	examples/demo.sh $(CURDIR)/bin/basis examples/workspace

.PHONY: modules
modules: ## list the modules
	@printf '%s\n' $(MODULES)

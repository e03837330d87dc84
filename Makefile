# rpcbed — `make` alone lists the targets.
SHELL := /bin/bash
GO    ?= go
BIN   := $(CURDIR)/bin
MODULE := github.com/rpcbed/rpcbed
export PATH := $(BIN):$(PATH)

.DEFAULT_GOAL := help

# Each part of the project adds its own targets in a fragment (see the fragments):
# SETUP_TARGETS install/build what its tests need, TEST_TARGETS run its suites,
# GENERATE_TARGETS regenerate its code from idl/.
SETUP_TARGETS :=
TEST_TARGETS :=
GENERATE_TARGETS :=
-include php-client/php.mk java-client/java.mk docker/docker.mk mk/*.mk

help: ## list the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  %-18s %s\n", $$1, $$2}'

## ---- code generation -------------------------------------------------------
$(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc: go.mod
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go google.golang.org/grpc/cmd/protoc-gen-go-grpc

generate: generate-go $(GENERATE_TARGETS) ## regenerate all code from idl/ (Go, PHP, Java)

generate-go: $(BIN)/protoc-gen-go $(BIN)/protoc-gen-go-grpc ## regenerate internal/gen from idl/
	rm -rf internal/gen && mkdir -p internal/gen
	protoc -I idl --plugin=protoc-gen-go=$(BIN)/protoc-gen-go --plugin=protoc-gen-go-grpc=$(BIN)/protoc-gen-go-grpc \
	  --go_out=. --go_opt=module=$(MODULE) --go-grpc_out=. --go-grpc_opt=module=$(MODULE) idl/data.proto
	thrift --gen go:package_prefix=$(MODULE)/internal/gen/,skip_remote -out internal/gen idl/data.thrift
	gofmt -w internal/gen

checkgenerate: ## fail when generated code is stale
	@$(MAKE) -s generate >/dev/null
	@git diff --exit-code --stat -- internal/gen php-client/gen java-client/src/main/gen || { echo "generated code is stale: run 'make generate' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- internal/gen php-client/gen java-client/src/main/gen)" || { git status --porcelain -- internal/gen php-client/gen java-client/src/main/gen; echo "untracked generated files: run 'make generate' and commit"; exit 1; }

## ---- build and test ----------------------------------------------------------
build: ## build bin/go-server, bin/go-client, bin/rpcbed
	$(GO) build -o $(BIN)/ ./go-server ./go-client ./cmd/rpcbed

setup: $(SETUP_TARGETS) ## install and build everything the tests need (idempotent)

# `make test` runs each suite's target in turn (scripts/test-suites.sh), each set up
# by its prerequisites, and ends with a summary: which suites ran, passed or failed,
# and which tests were skipped and why. The Go suite needs the PHP extension, the jar
# and the Docker engine + images (the integration and runner tests), and Redis and
# Aerospike, which scripts/test-services.sh starts for the run when none answers.
TEST_SUMMARY_DIR ?= $(BIN)/test-summary
export TEST_SUMMARY_DIR

test: ## run every test suite (Go with -race, PHP, Java), setting up what each needs; ends with a summary
	@scripts/test-suites.sh test-go $(TEST_TARGETS)

test-go: build $(filter setup-php setup-java setup-docker,$(SETUP_TARGETS)) ## Go tests with the race detector (Redis and Aerospike started for the run when at hand)
	$(GO) vet ./...
	@mkdir -p $(TEST_SUMMARY_DIR)
	scripts/test-services.sh bash -o pipefail -c '$(GO) test -race -count=1 -timeout 20m -json ./... | $(GO) run ./scripts/testsum -summary $(TEST_SUMMARY_DIR)/go.txt'

.PHONY: help generate generate-go checkgenerate build setup test test-go


## ---- deterministic cost: callgrind counts per call (docs/cost.md) ---------------
# `make cost` runs every cost cell of cost.yaml (go and php at c=1, both sides) under
# valgrind's callgrind and writes results/cost-<time>/cost.{json,csv,md} and plots/.
# It needs valgrind (apt-get install valgrind), the Go binaries, the PHP extensions and,
# for php-ice, the Java jar.
#   COST_SPEC=cost.yaml  COST_FLAGS=...  (e.g. -only go-grpc, -out DIR)
#   make cost-gate BASE=results/reference/cost NEW=results/cost-<time>   (exit 1 on > 2 %)
COST_SPEC  ?= cost.yaml
COST_FLAGS ?=
BASE       ?= results/reference/cost
NEW        ?=

setup-cost: ## install valgrind when it is missing (callgrind and callgrind_control)
	@command -v valgrind >/dev/null && command -v callgrind_control >/dev/null || { \
	  apt-get install -y -qq --no-install-recommends valgrind >/dev/null 2>&1 || \
	  { apt-get update -qq && apt-get install -y -qq --no-install-recommends valgrind >/dev/null; }; }

cost: build setup-cost $(filter setup-php setup-java,$(SETUP_TARGETS)) ## count instructions, est. cycles, syscalls and bytes per call under callgrind into results/cost-<time>/
	$(BIN)/rpcbed cost -spec $(COST_SPEC) $(COST_FLAGS)

cost-gate: ## compare a cost run with the reference: exit 1 when a cell grew beyond 2 % (BASE=... NEW=...)
	@test -n "$(NEW)" || { echo "usage: make cost-gate NEW=results/cost-<time> [BASE=results/reference/cost]"; exit 2; }
	$(BIN)/rpcbed gate $(BASE) $(NEW)

# Not part of `make test`: two `make cost` runs back to back, then the share of go and
# php cells whose instructions per call agree within ±1 % (the goal: 95 %).
bench-cost-reproducibility: build setup-cost $(filter setup-php setup-java,$(SETUP_TARGETS)) ## run make cost twice; print the share of cells within ±1 % on instructions
	scripts/bench-cost-reproducibility.sh

.PHONY: setup-cost cost cost-gate bench-cost-reproducibility

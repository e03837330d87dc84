## ---- the matrix, the reproduction, comparisons ----------------------------------
# `make matrix` and `make reproduce` set up what they need on a fresh machine: the
# Go binaries (build), the PHP extension (setup-php), the Java jar (setup-java),
# and, unless RUNNER=local, the Docker engine and images (setup-docker).
#   MATRIX=full          the complete grid (matrix-full.yaml) instead of matrix.yaml
#   MATRIX=tls           what TLS costs (matrix-tls.yaml): plaintext and TLS, persistent and per call
#   RUNNER=auto          docker when an engine answers, else local processes
#   MATRIX_FLAGS=...     extra flags for `rpcbed matrix` (e.g. -q, -out DIR)
#   RESUME=DIR           finish an interrupted run: make matrix RESUME=results/<run>
#   WHICH=all            reproduce: go-grpc-thrift-aerospike | php-go-growth | java-rpc-2015
MATRIX       ?=
RUNNER       ?= auto
MATRIX_FLAGS ?=
RESUME       ?=
WHICH        ?= all
MATRIX_SPEC  := $(if $(filter full tls,$(MATRIX)),matrix-$(MATRIX).yaml,matrix.yaml)
MATRIX_DOCKER_SETUP := $(if $(filter local,$(RUNNER)),,$(filter setup-docker,$(SETUP_TARGETS)))

matrix-setup: build $(filter setup-php setup-java,$(SETUP_TARGETS)) $(MATRIX_DOCKER_SETUP)

setup-reproduce: ## install what `make reproduce` adds to the matrix's set-up: ab (apache2-utils)
	@command -v ab >/dev/null || { apt-get install -y --no-install-recommends apache2-utils >/dev/null 2>&1 || \
	  { apt-get update -qq && apt-get install -y --no-install-recommends apache2-utils >/dev/null; }; }

matrix: matrix-setup ## run the matrix into results/<run>/ (MATRIX=full for the whole grid, RUNNER=docker|local|auto)
	$(BIN)/rpcbed matrix -runner $(RUNNER) $(if $(RESUME),-resume $(RESUME),-spec $(MATRIX_SPEC)) $(MATRIX_FLAGS)

# go-grpc-thrift-aerospike runs on Aerospike, as published, when AEROSPIKE_HOSTS is set
# or scripts/test-services.sh can start asd (../shared/aerospike beside the checkout)
# for the run; on Redis otherwise. reproduction.md says which store ran.
reproduce: matrix-setup setup-reproduce ## re-run the published experiments; writes results/<run>/reproduction.md (WHICH=...)
	scripts/test-services.sh $(BIN)/rpcbed reproduce -runner $(RUNNER) $(WHICH)

# `make reproduce-lan`: go-grpc-thrift-aerospike with its network back, as published
# (server on one host; client and Aerospike on the other): the two hosts of
# docker/netbed.sh, the lan link of reproduce-lan.yaml (checked before and after
# the runs), Aerospike started in the clients' namespace (scripts/reproduce-lan.sh).
# Needs root and ../shared/aerospike. REPRO_LAN_OUT=DIR (default results/reproduce-lan).
REPRO_LAN_OUT ?= results/reproduce-lan
reproduce-lan: matrix-setup ## go-grpc-thrift-aerospike across a lan link between two hosts, as published (root)
	docker/netbed.sh run scripts/reproduce-lan.sh $(abspath $(BIN))/rpcbed $(REPRO_LAN_OUT) $(REPRO_LAN_FLAGS)

.PHONY: matrix-setup setup-reproduce matrix reproduce reproduce-lan

## ---- reproducibility: the same spec twice ------------------------------------------
# Not part of `make test`: it runs the default matrix twice (twice its time) and
# prints how many cells agree within ±10 % (scripts/bench-reproducibility.sh).
# PAIRS=4 runs four back-to-back pairs and pools their calibration.
#   SPEC=matrix.yaml RUNNER=auto OUT=results/repro-<time> TOL=0.10 GOAL=0.90 PAIRS=1
bench-reproducibility: matrix-setup ## run the default matrix twice; print the share of cells within ±10 % (req/s, CPU/call) and the cells outside
	RUNNER=$(RUNNER) scripts/bench-reproducibility.sh

.PHONY: bench-reproducibility

## ---- slice length: many short rounds or few long ones ------------------------------
# Not part of `make test`: one 8-cell spec at 0.25/0.5/1/2 s slices, 6 rounds each
# (about 6 minutes), then `rpcbed slices` prints each length's round noise, its
# switching cost and the half-width it reaches in a fixed time (docs/method.md,
# section 11). LENGTHS="0.25 0.5 1 2" ROUNDS=6 RUNNER=auto OUT=results/slices-<time>
bench-slices: matrix-setup ## measure the slice-length trade-off (round noise, switching cost, half-width per length)
	RUNNER=$(RUNNER) scripts/bench-slices.sh

.PHONY: bench-slices

readme: build ## print README.md's and docs/*.md's generated blocks again from the committed runs (rpcbed readme)
	$(BIN)/rpcbed readme
.PHONY: readme

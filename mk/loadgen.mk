## ---- go-client as a load generator ----------------------------------------------
# The speed benchmark of go-client against ghz, wrk and vegeta
# (scripts/bench-loadgen.sh, docs/loadgen.md). Not part of `make test`: it prints
# numbers and never fails on them. ghz and vegeta are built from their Go modules
# into bin/ (nothing of theirs is committed).
GHZ_VERSION := v0.93.0
VEGETA_VERSION := v12.13.0

$(BIN)/ghz:
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install github.com/bojand/ghz/cmd/ghz@$(GHZ_VERSION)

$(BIN)/vegeta:
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install github.com/tsenart/vegeta/v12@$(VEGETA_VERSION)

setup-loadgen: $(BIN)/ghz $(BIN)/vegeta ## install what bench-loadgen needs: ghz and vegeta (Go modules), wrk and time (apt)
	@for p in wrk:wrk time:/usr/bin/time; do \
	  command -v $${p#*:} >/dev/null || { apt-get install -y --no-install-recommends $${p%%:*} || \
	    { apt-get update && apt-get install -y --no-install-recommends $${p%%:*}; }; }; \
	done

bench-loadgen: setup-loadgen ## go-client vs ghz (gRPC), wrk (HTTP) at c=50, plaintext and over TLS, and vegeta (HTTP open loop): requests/s, rate held, CPU/request, ratios with 95 % intervals, each goal met, NOT met or indistinguishable (about 9 min)
	$(GO) build -o $(BIN)/ ./go-server ./go-client ./cmd/rpcbed
	scripts/bench-loadgen.sh

.PHONY: setup-loadgen bench-loadgen

## ---- go-client as a load generator ----------------------------------------------
# The speed benchmark of go-client against ghz and wrk (scripts/bench-loadgen.sh).
# Not part of `make test`: it prints numbers and never fails on them.
GHZ_VERSION := v0.93.0

$(BIN)/ghz:
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install github.com/bojand/ghz/cmd/ghz@$(GHZ_VERSION)

setup-loadgen: $(BIN)/ghz ## install what bench-loadgen needs: ghz (Go module), wrk and time (apt)
	@for p in wrk:wrk time:/usr/bin/time; do \
	  command -v $${p#*:} >/dev/null || { apt-get install -y --no-install-recommends $${p%%:*} || \
	    { apt-get update && apt-get install -y --no-install-recommends $${p%%:*}; }; }; \
	done

bench-loadgen: setup-loadgen ## go-client vs ghz (gRPC) and vs wrk (HTTP) at c=50: requests/s, CPU/request, ratios
	$(GO) build -o $(BIN)/ ./go-server ./go-client
	scripts/bench-loadgen.sh

.PHONY: setup-loadgen bench-loadgen

## ---- beyond one machine: two engines behind a real link -------------------------
# `make matrix-net` runs matrix-net.yaml through docker/netbed.sh: go-server on one
# Docker engine inside the "server" network namespace, the go, php and java clients
# on another inside "clients", a veth pair between them, unshaped and shaped with
# tc (cmd/rpcbed's TestMatrixNet: it also checks the veth's byte counters and that
# nothing of the bed is left). Needs root. NET_OUT=DIR keeps the run directory.
NET_OUT ?=

matrix-net: matrix-setup ## run matrix-net.yaml across two engines in network namespaces joined by a veth (root)
	RPCBED_MATRIX_NET=1 RPCBED_NET_OUT=$(abspath $(NET_OUT)) $(GO) test -count=1 -timeout 15m -run '^TestMatrixNet$$' -v ./cmd/rpcbed

# `make matrix-net-delay`: the same test on matrix-net-delay.yaml — loopback, the
# lan, region and lossy presets (rpcbed's delayer here) and 100mbit; it checks each
# delayed link's asked against achieved besides. Not in CI yet (matrix-net-delay.yaml).
matrix-net-delay: matrix-setup ## run matrix-net-delay.yaml: loopback, lan, region, lossy and 100mbit across the two engines (root)
	RPCBED_MATRIX_NET=1 RPCBED_NET_SPEC=matrix-net-delay.yaml RPCBED_NET_OUT=$(abspath $(NET_OUT)) $(GO) test -count=1 -timeout 15m -run '^TestMatrixNet$$' -v ./cmd/rpcbed

netbed-up: ## make the two-host bed by hand (docker/netbed.sh up prints its endpoints)
	@docker/netbed.sh up

netbed-down: ## remove the bed: namespaces, veths, daemons
	@docker/netbed.sh down

.PHONY: matrix-net matrix-net-delay netbed-up netbed-down

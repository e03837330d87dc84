## ---- beyond one machine: two engines behind a real link -------------------------
# `make matrix-net` runs matrix-net.yaml through docker/netbed.sh: go-server and the
# Java servers on one Docker engine inside the "server" network namespace, the go,
# php and java clients on another inside "clients", a veth pair between them, on
# loopback, the lan, region and lossy presets (netem, or rpcbed's delayer where the
# kernel has none) and 100mbit (tc tbf), one round each (cmd/rpcbed's
# TestMatrixNet: each delayed link's asked against achieved, the link physics,
# the veth's byte counters and that nothing of the bed is left). In CI. Needs
# root. NET_OUT=DIR keeps the run directory.
NET_OUT ?=

matrix-net: matrix-setup ## run matrix-net.yaml across two engines in network namespaces joined by a veth: loopback, lan, region, lossy, 100mbit (root)
	RPCBED_MATRIX_NET=1 RPCBED_NET_OUT=$(abspath $(NET_OUT)) $(GO) test -count=1 -timeout 15m -run '^TestMatrixNet$$' -v ./cmd/rpcbed

# `make matrix-net-full`: the same test on matrix-net-full.yaml — wan added and
# three paired rounds, so each link comes as ratios to loopback with intervals
# (README's "What a slower, lossier link does" is from its committed run,
# results/links). About 14 minutes here (13m48s with the bed, docs/notes/2026-12-04-links.md).
matrix-net-full: matrix-setup ## run matrix-net-full.yaml: every preset (wan too), three paired rounds (root)
	RPCBED_MATRIX_NET=1 RPCBED_NET_SPEC=matrix-net-full.yaml RPCBED_NET_OUT=$(abspath $(NET_OUT)) $(GO) test -count=1 -timeout 45m -run '^TestMatrixNet$$' -v ./cmd/rpcbed

netbed-up: ## make the two-host bed by hand (docker/netbed.sh up prints its endpoints)
	@docker/netbed.sh up

netbed-down: ## remove the bed: namespaces, veths, daemons
	@docker/netbed.sh down

.PHONY: matrix-net matrix-net-full netbed-up netbed-down

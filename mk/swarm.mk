## ---- scale-out on a cluster engine: Docker Swarm over netbed ---------------------
# `make matrix-swarm` runs matrix-swarm.yaml on a 3-node Docker Swarm rpcbed forms
# over docker/netbed.sh's engines (RPCBED_NETBED_CLIENTS=2: a server host and two
# client hosts): go-server on the server pool's node, go, php and java cells at
# c=50 split 25 + 25 over the client nodes, gang-started, merged (cmd/rpcbed's
# TestMatrixSwarm), then the fault test (TestMatrixSwarmFault: one client node
# killed mid-repeat). Both check that nothing is left: no service, swarm state,
# namespace, veth or daemon. Needs root. SWARM_OUT=DIR keeps the run directory.
# The tests bound themselves (7 + 5 min) within go test's -timeout and tear down.
SWARM_OUT ?=

matrix-swarm: matrix-setup ## run matrix-swarm.yaml on a 3-node Docker Swarm over netbed, and the node-loss test (root)
	RPCBED_MATRIX_SWARM=1 RPCBED_SWARM_OUT=$(abspath $(SWARM_OUT)) $(GO) test -count=1 -timeout 14m -run '^TestMatrixSwarm(Fault)?$$' -v ./cmd/rpcbed

.PHONY: matrix-swarm

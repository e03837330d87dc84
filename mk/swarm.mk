## ---- scale-out on a cluster engine: Docker Swarm over netbed ---------------------
# `make matrix-swarm` runs matrix-swarm.yaml on a 3-node Docker Swarm rpcbed forms
# over docker/netbed.sh's engines (RPCBED_NETBED_CLIENTS=2: a server host and two
# client hosts): go-server on the server pool's node, go, php and java cells at
# c=50 split 25 + 25 over the client nodes, gang-started, merged (cmd/rpcbed's
# TestMatrixSwarm). `make matrix-swarm-fault` kills one client node (its dockerd
# and all else in its namespace) mid-repeat (TestMatrixSwarmFault). Both check
# that nothing is left: no service, swarm state, namespace, veth or daemon. Root
# only. SWARM_OUT=DIR keeps matrix-swarm's run directory. Each test bounds itself
# (7 and 5 min) within go test's -timeout, so its clean-up still runs.
SWARM_OUT ?=

matrix-swarm: matrix-setup ## run matrix-swarm.yaml on a 3-node Docker Swarm over netbed: go, php, java at c=50 split 25+25 (root)
	RPCBED_MATRIX_SWARM=1 RPCBED_SWARM_OUT=$(abspath $(SWARM_OUT)) $(GO) test -count=1 -timeout 9m -run '^TestMatrixSwarm$$' -v ./cmd/rpcbed

matrix-swarm-fault: matrix-setup ## kill one client node of a 3-node swarm mid-repeat: the repeat fails naming it, the run goes on (root)
	RPCBED_MATRIX_SWARM=1 $(GO) test -count=1 -timeout 7m -run '^TestMatrixSwarmFault$$' -v ./cmd/rpcbed

.PHONY: matrix-swarm matrix-swarm-fault

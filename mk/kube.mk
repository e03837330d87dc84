## ---- scale-out on a real Kubernetes cluster ------------------------------------
# `make kube-build` builds Kubernetes $(KUBE_VERSION) from the Go module proxy into
# $(KUBE_CACHE) (outside the repository: CI can keep it; a built version is
# reused). `make kube-up` starts a 3-node cluster on this machine (scripts/kube.sh:
# etcd, apiserver with RBAC on, controller-manager, scheduler; a server node and
# two client nodes, each a kubelet with its own containerd in a netbed namespace)
# and loads the project's images into every node; `make kube-down` stops it and
# fails unless the host is as kube-up found it. `make matrix-kube` runs
# matrix-kube.yaml on it with the runner's ServiceAccount (cmd/rpcbed's
# TestMatrixKube). Root only.
KUBE_VERSION ?= v1.30.14
KUBE_CACHE   ?= $(HOME)/.cache/rpcbed/kube
KUBE_OUT     ?=
KUBE_IMAGES  ?=
export KUBE_VERSION
export RPCBED_KUBE_CACHE := $(KUBE_CACHE)

kube-setup: ## install what a local Kubernetes cluster needs: etcd-server, containerd, runc, CNI plugins (root)
	@pkgs=""; for p in etcd-server containerd runc containernetworking-plugins; do dpkg -s $$p >/dev/null 2>&1 || pkgs="$$pkgs $$p"; done; \
	  [ -z "$$pkgs" ] || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$pkgs >/dev/null; }

kube-build: ## build Kubernetes $(KUBE_VERSION) from the Go module proxy into $(KUBE_CACHE) (once; ~6 min on 2 cores)
	nice -n 15 scripts/kube-build.sh

kube-up: kube-setup kube-build images ## start a 3-node Kubernetes cluster (RBAC on) on this machine and load the images (root)
	scripts/kube.sh up
	scripts/kube.sh load $(KUBE_IMAGES)

kube-down: ## stop the local Kubernetes cluster and check the host is as kube-up found it (root)
	scripts/kube.sh down

.PHONY: kube-setup kube-build kube-up kube-down

matrix-kube: matrix-setup ## run matrix-kube.yaml on the cluster of kube-up: go, php, java at c=50 split 25+25 over two client nodes (root)
	RPCBED_MATRIX_KUBE=1 RPCBED_KUBE_OUT=$(abspath $(KUBE_OUT)) $(GO) test -count=1 -timeout 9m -run '^TestMatrixKube$$' -v ./cmd/rpcbed

# It kills client node rbkube-c2: run it last, before kube-down.
matrix-kube-fault: matrix-setup ## on the cluster of kube-up: a missing image is refused at once; a client node killed mid-repeat (root)
	RPCBED_KUBE_KUBECONFIG=$$(scripts/kube.sh env | sed -n 's/^KUBE_KUBECONFIG=//p') $(GO) test -count=1 -timeout 3m -run '^TestLiveMissingImage$$' -v ./internal/kube
	RPCBED_MATRIX_KUBE_FAULT=1 $(GO) test -count=1 -timeout 7m -run '^TestMatrixKubeFault$$' -v ./cmd/rpcbed

.PHONY: matrix-kube matrix-kube-fault

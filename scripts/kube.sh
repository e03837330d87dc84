#!/usr/bin/env bash
# kube.sh — a real Kubernetes cluster on this machine, for rpcbed's kubernetes
# placement (docs/scale.md): Kubernetes $KUBE_VERSION built from the Go module
# proxy (scripts/kube-build.sh), etcd (Debian's etcd-server), kube-apiserver with
# RBAC on, kube-controller-manager, kube-scheduler, and three nodes: one of the
# server pool and two of the clients pool, each a kubelet with its own containerd
# inside a network namespace that docker/netbed.sh makes (RPCBED_NETBED_CLIENTS=2,
# namespaces and links only), as the Swarm engines live there.
#
#   scripts/kube.sh up        start everything; print KUBECONFIG=... (the runner's)
#   scripts/kube.sh down      stop everything and restore the host; fails when the
#                             host is not as up found it (check)
#   scripts/kube.sh check     compare the host with the record up made
#   scripts/kube.sh load IMAGE...   copy images from the host's Docker engine into
#                             every node's containerd (no registry)
#   scripts/kube.sh kill-node NODE  stop a node dead: its kubelet, containerd and
#                             every process in its namespace (the fault tests)
#   scripts/kube.sh env       print the endpoints of a running cluster
#
# Addresses (N = $RPCBED_KUBE_NET, default 3), all in 198.18.0.0/15:
#   control plane on the host at 198.19.N.2 (the management link's host end):
#   apiserver :6443, etcd on 127.0.0.1:2479 only;
#   nodes rbkube-server 198.18.N.1, rbkube-c1 198.18.N.2, rbkube-c2 198.18.N.3.
#
# Identities: a static token per component and node (the kubelets as
# system:node:NAME in system:nodes, under the Node authorizer and NodeRestriction),
# and the runner's kubeconfig holds a ServiceAccount token (TokenRequest) bound
# to a namespaced Role (docs/kube-role.yaml), never cluster-admin.
#
# What kubelet changes on the host (../shared/PLATFORM.md) and how down undoes it:
# sysctls (vm.overcommit_memory, kernel.panic, kernel.panic_on_oops: put back to
# the values up recorded), cgroups (each node's own cgroup root, rbkube-NODE, in
# every hierarchy: removed), mounts (everything under our roots: unmounted),
# /var/log/containers (our symlinks removed, the directory too when up did not
# find it), iptables chains (none on the host: each kubelet's live in its
# namespace and go with it, and makeIPTablesUtilChains is off), the CNI bridge
# (never made: every rpcbed pod uses the node's network; the CNI config only
# marks the node Ready), /var/lib/kubelet and /var/lib/cni (not used: each node
# has its own root-dir and CNI data dir under $DATA). Every exit path of up that
# fails runs down.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
KUBE_VERSION=${KUBE_VERSION:-v1.30.14}
CACHE=${RPCBED_KUBE_CACHE:-$HOME/.cache/rpcbed/kube}
KBIN=$CACHE/$KUBE_VERSION/bin
NAME=rbkube
NET=${RPCBED_KUBE_NET:-3}
RUN=/run/rpcbed-kube
DATA=${RPCBED_KUBE_DATA:-/var/lib/rpcbed-kube}
STATE=/var/lib/rpcbed-kube-host # the host record: outlives DATA's removal
WAIT=${RPCBED_KUBE_WAIT:-90}
NODES=(server c1 c2)
CP_ADDR=198.19.$NET.2
API=https://$CP_ADDR:6443
ETCD=http://127.0.0.1:2479
NS_NAME=${RPCBED_KUBE_NAMESPACE:-rpcbed}
PAUSE=docker.io/rpcbed/pause:3.9
SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops vm.panic_on_oom kernel.keys.root_maxkeys kernel.keys.root_maxbytes)

say() { echo "kube: $*" >&2; }
die() { say "$*"; exit 1; }

netbed() { RPCBED_NETBED=$NAME RPCBED_NETBED_NET=$NET RPCBED_NETBED_CLIENTS=2 RPCBED_NETBED_ENGINES=0 "$REPO/docker/netbed.sh" "$@"; }
node_ns() { echo "$NAME-$1"; }
node_name() { echo "$NAME-$1"; }
node_addr() { case $1 in server) echo "198.18.$NET.1" ;; c*) echo "198.18.$NET.$((1 + ${1#c}))" ;; esac; }
node_index() { case $1 in server) echo 0 ;; c*) echo "${1#c}" ;; esac; }
node_pool() { case $1 in server) echo server ;; *) echo clients ;; esac; }
sock() { echo "$RUN/$1/containerd.sock"; }
kctl() { "$KBIN/kubectl" --kubeconfig "$RUN/admin.kubeconfig" "$@"; }
ctr_() { local n=$1; shift; ctr -a "$(sock "$n")" -n k8s.io "$@"; }

# ---- the host record ---------------------------------------------------------
# snapshot prints what kubelet, containerd and this script could change on the
# host, one line each; check compares it with the one up saved.
snapshot() {
	local s h d
	for s in "${SYSCTLS[@]}"; do echo "sysctl $s=$(sysctl -n "$s" 2>/dev/null || echo -)"; done
	for h in /sys/fs/cgroup/*/; do
		for d in "$h"kubepods* "$h"k8s.io "$h"$NAME-*; do [ -e "$d" ] && echo "cgroup $d"; done
	done
	for d in /var/lib/kubelet /var/lib/cni /var/log/pods /var/log/containers /etc/cni/net.d /run/containerd /run/containerd/s /run/containerd/runc /var/lib/containerd /opt/containerd "$DATA" "$RUN"; do
		[ -e "$d" ] && echo "path $d"
	done
	[ -d /var/log/containers ] && find /var/log/containers -maxdepth 1 -name "*$NAME*" -printf 'containers-log %f\n'
	for t in filter nat mangle; do iptables -t "$t" -S 2>/dev/null | awk -v t="$t" '/^-N KUBE-/{print "iptables " t " " $2}'; done
	awk -v d="$DATA" -v r="$RUN" '$2 ~ "^(" d "|" r "|/var/lib/kubelet)" {print "mount " $2}' /proc/self/mounts
	ip -o link show | awk -F': ' '{sub(/@.*/, "", $2); print $2}' | grep -E "^($NAME-|cni0$|kube-bridge$)" | sed 's/^/link /' || true
	ip netns list | awk '{print $1}' | grep -E "^$NAME-" | sed 's/^/netns /' || true
	pgrep -f -- "$KBIN/|--data-dir $DATA/etcd|$RUN/[a-z0-9]+/containerd.toml" | sed 's/^/process /' || true
}

check() {
	[ -s "$STATE/before.txt" ] || die "check: no record of the host (up makes it)"
	local now
	now=$(snapshot)
	if ! diff <(sort "$STATE/before.txt") <(sort <<<"$now") >"$STATE/diff.txt"; then
		say "the host is not as up found it (< before, > now):"
		cat "$STATE/diff.txt" >&2
		return 1
	fi
	say "check: the host is as up found it"
}

# ---- down ----------------------------------------------------------------------
stop_pidfile() {
	local pf=$1 pid
	[ -s "$pf" ] || return 0
	pid=$(cat "$pf")
	if kill -0 "$pid" 2>/dev/null; then
		kill "$pid" 2>/dev/null || true
		for _ in $(seq 1 75); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill -9 "$pid" 2>/dev/null || true
	fi
	rm -f "$pf"
}

# sweep NETNS: every process left in a node's namespace is this cluster's
# (containerd shims, pause and client containers): stop it.
sweep() {
	local pids
	for sig in TERM TERM KILL KILL; do
		pids=$(ip netns pids "$1" 2>/dev/null || true)
		[ -n "$pids" ] || return 0
		kill -"$sig" $pids 2>/dev/null || true
		sleep 0.5
	done
}

rm_cgroups() {
	local h d
	for h in /sys/fs/cgroup/*/; do
		for d in "$h"$NAME-*; do
			[ -d "$d" ] || continue
			# depth first: a cgroup goes once it has no children and no tasks
			find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null || true
		done
	done
}

down() {
	local n
	for n in "${NODES[@]}"; do stop_pidfile "$RUN/$n/kubelet.pid"; done
	stop_pidfile "$RUN/scheduler.pid"
	stop_pidfile "$RUN/controller-manager.pid"
	for n in "${NODES[@]}"; do
		stop_pidfile "$RUN/$n/containerd.pid"
		ip netns list | awk '{print $1}' | grep -qx "$(node_ns "$n")" && sweep "$(node_ns "$n")"
	done
	stop_pidfile "$RUN/apiserver.pid"
	stop_pidfile "$RUN/etcd.pid"
	# mounts under our roots (kubelet's bind mount of its root-dir, pod volumes,
	# containerd's rootfs and shm): deepest first
	awk -v d="$DATA" -v r="$RUN" '$2 ~ "^(" d "|" r ")" {print $2}' /proc/self/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
	rm_cgroups
	netbed down >/dev/null 2>&1 || netbed down >&2 || true
	if [ -d /var/log/containers ]; then
		find /var/log/containers -maxdepth 1 -lname "$DATA/*" -delete 2>/dev/null || true
	fi
	if [ -s "$STATE/before.txt" ]; then
		local s v
		for s in "${SYSCTLS[@]}"; do
			v=$(sed -n "s/^sysctl $s=//p" "$STATE/before.txt")
			[ -n "$v" ] && [ "$v" != - ] && sysctl -qw "$s=$v" >/dev/null 2>&1 || true
		done
		grep -qx 'path /var/log/containers' "$STATE/before.txt" || rmdir /var/log/containers 2>/dev/null || true
		grep -qx 'path /var/log/pods' "$STATE/before.txt" || rmdir /var/log/pods 2>/dev/null || true
		# kubelet's device plugin manager keeps its socket at a fixed path,
		# /var/lib/kubelet/device-plugins/kubelet.sock, whatever its root-dir
		grep -qx 'path /var/lib/kubelet' "$STATE/before.txt" || rm -rf /var/lib/kubelet
		# containerd 1.6 keeps its shims' sockets (/run/containerd/s, shared with
		# dockerd's containerd) and runc's state (runc/k8s.io: the CRI's namespace,
		# ours alone) under /run/containerd whatever its own state dir: remove the
		# sockets made since up that nothing listens on, and our runc state
		if [ -d /run/containerd/s ]; then
			local live f
			live=$(ss -xl 2>/dev/null | awk '{print $5}')
			find /run/containerd/s -type s -newer "$STATE/before.txt" 2>/dev/null | while read -r f; do
				grep -qxF "$f" <<<"$live" || rm -f "$f"
			done
		fi
		rm -rf /run/containerd/runc/k8s.io
		for f in /run/containerd/runc /run/containerd/s /run/containerd; do
			grep -qx "path $f" "$STATE/before.txt" || rmdir "$f" 2>/dev/null || true
		done
	fi
	rm -rf "$RUN" "$DATA"
	if [ -s "$STATE/before.txt" ]; then
		check || return 1
		rm -rf "$STATE"
	fi
	say "down: the cluster is gone"
}

# ---- up ------------------------------------------------------------------------
need() {
	[ "$(id -u)" = 0 ] || die "needs root (namespaces, kubelets, cgroups)"
	local c
	for c in etcd containerd runc ctr openssl ip nsenter docker; do
		command -v "$c" >/dev/null || die "$c is not installed (make kube-setup installs etcd-server, containerd, runc and containernetworking-plugins)"
	done
	[ -x /usr/lib/cni/bridge ] || die "no CNI plugins in /usr/lib/cni (apt-get install containernetworking-plugins)"
	for c in kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl; do
		[ -x "$KBIN/$c" ] || die "$KBIN/$c is missing: make kube-build"
	done
}

certs() {
	local p=$RUN/pki
	mkdir -p "$p"
	(
		cd "$p"
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj "/CN=rpcbed-kube-ca" 2>/dev/null
		cat >apiserver.ext <<EOF
subjectAltName=IP:$CP_ADDR,IP:127.0.0.1,IP:198.19.200.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc
extendedKeyUsage=serverAuth
EOF
		openssl req -newkey rsa:2048 -nodes -keyout apiserver.key -out apiserver.csr -subj "/CN=kube-apiserver" 2>/dev/null
		openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out apiserver.crt -days 2 -extfile apiserver.ext 2>/dev/null
		printf 'extendedKeyUsage=clientAuth\n' >client.ext
		openssl req -newkey rsa:2048 -nodes -keyout kubelet-client.key -out kubelet-client.csr -subj "/CN=kube-apiserver-kubelet-client/O=rpcbed" 2>/dev/null
		openssl x509 -req -in kubelet-client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out kubelet-client.crt -days 2 -extfile client.ext 2>/dev/null
		openssl genrsa -out sa.key 2048 2>/dev/null
		openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
	)
	local t n
	: >"$p/tokens.csv"
	chmod 600 "$p/tokens.csv"
	tok() { openssl rand -hex 16; }
	t=$(tok); echo "$t,rpcbed-admin,rpcbed-admin,system:masters" >>"$p/tokens.csv"; kubeconfig admin "$t"
	t=$(tok); echo "$t,system:kube-controller-manager,system:kube-controller-manager" >>"$p/tokens.csv"; kubeconfig controller-manager "$t"
	t=$(tok); echo "$t,system:kube-scheduler,system:kube-scheduler" >>"$p/tokens.csv"; kubeconfig scheduler "$t"
	for n in "${NODES[@]}"; do
		t=$(tok); echo "$t,system:node:$(node_name "$n"),system:node:$(node_name "$n"),system:nodes" >>"$p/tokens.csv"
		kubeconfig "$n/kubelet" "$t"
	done
}

# kubeconfig NAME TOKEN [NAMESPACE]: $RUN/NAME.kubeconfig
kubeconfig() {
	local f=$RUN/$1.kubeconfig
	mkdir -p "$(dirname "$f")"
	cat >"$f" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: $NAME
  cluster: {server: "$API", certificate-authority: "$RUN/pki/ca.crt"}
users:
- name: $(basename "$1")
  user: {token: "$2"}
contexts:
- name: $NAME
  context: {cluster: $NAME, user: $(basename "$1")${3:+, namespace: $3}}
current-context: $NAME
EOF
	chmod 600 "$f"
}

# start NAME PIDFILE CMD...: a daemon of the cluster, its log beside its pidfile.
start() {
	local name=$1 pf=$2
	shift 2
	setsid "$@" >"${pf%.pid}.log" 2>&1 </dev/null &
	echo $! >"$pf"
}

wait_for() {
	local what=$1 i
	shift
	for ((i = 0; i < WAIT * 4; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.25
	done
	die "$what did not come up within ${WAIT}s"
}

control_plane() {
	mkdir -p "$DATA/etcd"
	start etcd "$RUN/etcd.pid" etcd --name "$NAME" --data-dir "$DATA/etcd" \
		--listen-client-urls "$ETCD" --advertise-client-urls "$ETCD" \
		--listen-peer-urls http://127.0.0.1:2480 --initial-advertise-peer-urls http://127.0.0.1:2480 \
		--initial-cluster "$NAME=http://127.0.0.1:2480" --log-level warn
	wait_for etcd curl -fsS "$ETCD/health"
	start apiserver "$RUN/apiserver.pid" "$KBIN/kube-apiserver" \
		--etcd-servers="$ETCD" --bind-address="$CP_ADDR" --advertise-address="$CP_ADDR" --secure-port=6443 \
		--tls-cert-file="$RUN/pki/apiserver.crt" --tls-private-key-file="$RUN/pki/apiserver.key" \
		--client-ca-file="$RUN/pki/ca.crt" --token-auth-file="$RUN/pki/tokens.csv" \
		--authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
		--service-account-issuer="https://$NAME.invalid" --service-account-key-file="$RUN/pki/sa.pub" \
		--service-account-signing-key-file="$RUN/pki/sa.key" --service-cluster-ip-range=198.19.200.0/24 \
		--kubelet-preferred-address-types=InternalIP,Hostname \
		--kubelet-client-certificate="$RUN/pki/kubelet-client.crt" --kubelet-client-key="$RUN/pki/kubelet-client.key" \
		--kubelet-certificate-authority="" --profiling=false --enable-priority-and-fairness=false
	wait_for "the apiserver" kctl get --raw /readyz
	start controller-manager "$RUN/controller-manager.pid" "$KBIN/kube-controller-manager" \
		--kubeconfig="$RUN/controller-manager.kubeconfig" --leader-elect=false --bind-address=127.0.0.1 --secure-port=0 \
		--service-account-private-key-file="$RUN/pki/sa.key" --root-ca-file="$RUN/pki/ca.crt" \
		--use-service-account-credentials=true --node-monitor-grace-period=20s --profiling=false
	start scheduler "$RUN/scheduler.pid" "$KBIN/kube-scheduler" \
		--kubeconfig="$RUN/scheduler.kubeconfig" --leader-elect=false --bind-address=127.0.0.1 --secure-port=0 --profiling=false
}

pause_image() {
	docker image inspect "${PAUSE#docker.io/}" >/dev/null 2>&1 && return 0
	say "making the pause image (a static Go binary, no base image)"
	local d
	d=$(mktemp -d)
	cat >"$d/main.go" <<'EOF'
// pause: a pod sandbox's first process; it waits for SIGINT or SIGTERM.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGINT, syscall.SIGTERM)
	<-c
}
EOF
	printf 'module pause\n\ngo 1.22\n' >"$d/go.mod"
	(cd "$d" && CGO_ENABLED=0 GOWORK=off go build -trimpath -ldflags='-s -w' -o pause .)
	tar -C "$d" -c pause | docker import -c 'ENTRYPOINT ["/pause"]' - "${PAUSE#docker.io/}" >/dev/null
	rm -rf "$d"
}

node() {
	local n=$1 d=$DATA/$1 r=$RUN/$1
	mkdir -p "$d/containerd" "$d/kubelet" "$d/pods" "$d/cni" "$r/cni" "$r/containerd"
	cat >"$r/cni/10-rpcbed.conflist" <<EOF
{"cniVersion": "1.0.0", "name": "$NAME-$n", "plugins": [
  {"type": "bridge", "bridge": "$NAME-cni$(node_index "$n")", "isGateway": false, "ipMasq": false,
   "ipam": {"type": "host-local", "dataDir": "$d/cni", "ranges": [[{"subnet": "198.19.$((210 + $(node_index "$n"))).0/24"}]]}},
  {"type": "loopback"}]}
EOF
	cat >"$r/containerd.toml" <<EOF
version = 2
root = "$d/containerd"
state = "$r/containerd"
[grpc]
  address = "$(sock "$n")"
[ttrpc]
  address = "$(sock "$n").ttrpc"
[debug]
  address = "$(sock "$n").debug"
[metrics]
  address = ""
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE"
  restrict_oom_score_adj = true
  enable_selinux = false
  disable_apparmor = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$r/cni"
[plugins."io.containerd.internal.v1.opt"]
  path = "$d/opt"
EOF
	start "containerd $n" "$r/containerd.pid" nsenter --net="/var/run/netns/$(node_ns "$n")" containerd --config "$r/containerd.toml"
	# each node's own cgroup root in every hierarchy (kubelet wants it to exist)
	local h
	for h in /sys/fs/cgroup/*/; do
		case $h in */unified/) continue ;; esac
		mkdir -p "$h$NAME-$n"
		# a new cpuset cgroup starts with no cpus or mems: give it the root's
		case $h in */cpuset/)
			cat "${h}cpuset.cpus" >"$h$NAME-$n/cpuset.cpus"
			cat "${h}cpuset.mems" >"$h$NAME-$n/cpuset.mems" ;;
		esac
	done
	cat >"$r/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $(node_addr "$n")
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
cgroupDriver: cgroupfs
cgroupRoot: /$NAME-$n
cgroupsPerQOS: true
enforceNodeAllocatable: [pods]
containerRuntimeEndpoint: unix://$(sock "$n")
failSwapOn: false
makeIPTablesUtilChains: false
resolvConf: ""
podLogsDir: $d/pods
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $RUN/pki/ca.crt}
authorization: {mode: AlwaysAllow}
evictionHard: {memory.available: 100Mi, nodefs.available: 1%, imagefs.available: 1%}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
EOF
}

start_kubelet() {
	local n=$1 r=$RUN/$1
	start "kubelet $n" "$r/kubelet.pid" nsenter --net="/var/run/netns/$(node_ns "$n")" "$KBIN/kubelet" \
		--config="$r/kubelet.yaml" --kubeconfig="$r/kubelet.kubeconfig" --root-dir="$DATA/$n/kubelet" \
		--cert-dir="$DATA/$n/kubelet/pki" --hostname-override="$(node_name "$n")" --node-ip="$(node_addr "$n")" \
		--node-labels="rpcbed.pool=$(node_pool "$n")" --v=1
}

nodes_ready() {
	[ "$(kctl get nodes -o jsonpath='{range .items[*]}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' | grep -c True)" = "${#NODES[@]}" ]
}

# runner_access: the namespace, the runner's ServiceAccount bound to the Role of
# docs/kube-role.yaml, and its kubeconfig with a TokenRequest token.
runner_access() {
	kctl create namespace "$NS_NAME" >/dev/null
	sed "s/namespace: rpcbed\$/namespace: $NS_NAME/" "$REPO/docs/kube-role.yaml" | kctl apply -f - >/dev/null
	local t
	t=$(kctl -n "$NS_NAME" create token rpcbed-runner --duration=24h)
	kubeconfig runner "$t" "$NS_NAME"
}

# logs_tail: the last lines of every daemon's log (a failed up's reasons).
logs_tail() {
	local f
	for f in "$RUN"/*.log "$RUN"/*/*.log; do
		[ -s "$f" ] || continue
		echo "== ${f#$RUN/}"
		{ grep -E '^[EF][0-9]{4} |level=(error|fatal)' "$f" || true; } | tail -n 8
	done
	return 0
}

up() {
	need
	[ -e "$RUN" ] && die "$RUN exists: a cluster runs (scripts/kube.sh down)"
	mkdir -p "$STATE"
	[ -s "$STATE/before.txt" ] && die "$STATE/before.txt exists: an earlier cluster was not brought down (scripts/kube.sh down)"
	snapshot >"$STATE/before.txt"
	trap 'rc=$?; trap - EXIT INT TERM; say "up failed: removing what it made"; logs_tail >&2; down >&2 || true; exit $rc' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	local t0 n
	t0=$(date +%s.%N)
	mkdir -p "$RUN" "$DATA"
	netbed up >/dev/null
	certs
	pause_image
	control_plane
	for n in "${NODES[@]}"; do node "$n"; done
	for n in "${NODES[@]}"; do
		wait_for "containerd on $n" ctr -a "$(sock "$n")" version
		docker save "${PAUSE#docker.io/}" | ctr_ "$n" images import - >/dev/null
	done
	for n in "${NODES[@]}"; do start_kubelet "$n"; done
	wait_for "three Ready nodes" nodes_ready
	runner_access
	trap - EXIT INT TERM
	say "up in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}') s: $(kctl get nodes --no-headers | awk '{printf "%s %s; ", $1, $2}')"
	env_
}

env_() {
	echo "KUBE_KUBECONFIG=$RUN/runner.kubeconfig"
	echo "KUBE_ADMIN_KUBECONFIG=$RUN/admin.kubeconfig"
	echo "KUBE_NAMESPACE=$NS_NAME"
	echo "KUBE_DRIVER_ADDR=$CP_ADDR"
	echo "KUBECTL=$KBIN/kubectl"
}

# load IMAGE...: with no IMAGE, the runtime images of this checkout (the tags
# docker/images.sh gives them, which rpcbed matrix runs).
load() {
	local im n
	[ -d "$RUN" ] || die "no cluster runs (scripts/kube.sh up)"
	if [ $# = 0 ]; then
		for im in $("$REPO/docker/images.sh" tags | grep -v '^rpcbed/base:'); do
			set -- "$@" "$im"
		done
	fi
	# Each image is saved once and imported into every node at once (each node's
	# containerd has its own store).
	local tar pids rc=0 t0
	tar=$(mktemp -d)
	for im in "$@"; do
		t0=$(date +%s)
		docker image inspect "$im" >/dev/null 2>&1 || { rm -rf "$tar"; die "image $im is not on the host's engine (make images)"; }
		docker save -o "$tar/image.tar" "$im" || { rm -rf "$tar"; die "docker save $im failed"; }
		pids=()
		for n in "${NODES[@]}"; do
			[ -S "$(sock "$n")" ] || continue
			ctr_ "$n" images import "$tar/image.tar" >/dev/null &
			pids+=($!)
		done
		for p in "${pids[@]}"; do wait "$p" || rc=1; done
		rm -f "$tar/image.tar"
		[ $rc = 0 ] || { rm -rf "$tar"; die "importing $im into a node failed"; }
		say "loaded $im into ${#pids[@]} nodes in $(( $(date +%s) - t0 )) s"
	done
	rm -rf "$tar"
}

kill_node() {
	local n=${1#$NAME-}
	[ -d "$RUN/$n" ] || die "no node $1"
	# as a node that crashes: SIGKILL to everything of it at once
	local pids
	pids="$(cat "$RUN/$n/kubelet.pid" "$RUN/$n/containerd.pid" 2>/dev/null) $(ip netns pids "$(node_ns "$n")" 2>/dev/null || true)"
	kill -9 $pids 2>/dev/null || true
	rm -f "$RUN/$n/kubelet.pid" "$RUN/$n/containerd.pid"
	sweep "$(node_ns "$n")"
	say "killed node $(node_name "$n")"
}

case "${1:-}" in
up) up ;;
down) down ;;
check) check ;;
env) env_ ;;
load) shift; load "$@" ;;
kill-node) kill_node "${2:?usage: $0 kill-node NODE}" ;;
snapshot) snapshot ;;
*) die "usage: $0 up|down|check|env|load IMAGE...|kill-node NODE|snapshot" ;;
esac

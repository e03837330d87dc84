#!/usr/bin/env bash
# netbed.sh — two hosts on one machine: network namespaces "server" and "clients",
# joined by a veth pair with addresses from 198.18.0.0/15 (RFC 2544's range for
# network benchmarking), each with a Docker engine of its own.
#
#   docker/netbed.sh up       create both, print the endpoints (KEY=VALUE lines)
#   docker/netbed.sh down     remove the namespaces, the veths and the daemons
#   docker/netbed.sh status   exit 0 when both engines answer
#   docker/netbed.sh env      print the endpoints of a running netbed
#   docker/netbed.sh load IMAGE...   copy images from the host's engine to both
#   docker/netbed.sh run CMD...      up, run CMD with the endpoints in its
#                                    environment, down on every exit path
#
# RPCBED_NETBED_CLIENTS=K (default 1) makes K client hosts instead of one (a swarm's
# client pool, docs/scale.md): namespaces NAME-c1..NAME-cK, each with its own
# dockerd, joined to the server namespace by a bridge there (below).
# RPCBED_NETBED_ENGINES=0 makes the namespaces and links only, no dockerd (the
# Kubernetes nodes of scripts/kube.sh run their own containerd and kubelet there).
#
# Layout (NAME = $RPCBED_NETBED, default rpcbed; N = $RPCBED_NETBED_NET, default 0):
#
#   NAME-clients netns            NAME-server netns              host (the driver)
#   dockerd (own root, socket)    dockerd (own root, socket)
#   NAME-dc 198.18.N.2/24 ======= NAME-ds 198.18.N.1/24          the data link
#                                 NAME-ms 198.19.N.1/30 ======== NAME-mh 198.19.N.2/30
#
# With K >= 2 client hosts the data link is a bridge inside the server namespace:
#
#   NAME-ck netns (k = 1..K)      NAME-server netns              host (the driver)
#   NAME-dk 198.18.N.(1+k)/24 === NAME-bk (port) -+- NAME-br 198.18.N.1/24
#                                 NAME-ms 198.19.N.1/30 ======== NAME-mh 198.19.N.2/30
#
# and the server namespace forwards between the bridge and the management link
# (routes: the host to 198.18.N.0/24, each client to 198.19.N.2/32), so the tasks on
# the client hosts reach the driver (a swarm run's ready barrier) and the driver
# reaches them; still no default route anywhere.
#
# The data link is the one the benchmark measures and `tc` shapes. The second veth
# is the driver's management link: the driver samples the server's /stats over it
# (a route to 198.18.N.1/32 via 198.19.N.1), so sampling never uses the measured
# link. Neither namespace has a default route: they reach each other and, for the
# server, the host's end of the management link, and nothing else. The engines run
# with --bridge=none --iptables=false --ip-masq=false; every container uses host
# networking, i.e. lives in its engine's namespace.
#
# The data-roots stay in $RPCBED_NETBED_DATA (images loaded once are kept);
# `down -purge` removes them too. `up` traps every exit path: a failed up removes
# what it made.
set -euo pipefail

NAME=${RPCBED_NETBED:-rpcbed}
NET=${RPCBED_NETBED_NET:-0}
RUN=/run/rpcbed-netbed/$NAME
DATA=${RPCBED_NETBED_DATA:-/var/lib/rpcbed-netbed/$NAME}
WAIT=${RPCBED_NETBED_WAIT:-60}
CLIENTS=${RPCBED_NETBED_CLIENTS:-1}
ENGINES=${RPCBED_NETBED_ENGINES:-1}

say() { echo "netbed: $*" >&2; }
die() { say "$*"; exit 1; }

[ ${#NAME} -le 12 ] || die "RPCBED_NETBED=$NAME: at most 12 characters (interface names are at most 15)"
case $NET in '' | *[!0-9]*) die "RPCBED_NETBED_NET=$NET: want 0..255" ;; esac
[ "$NET" -le 255 ] || die "RPCBED_NETBED_NET=$NET: want 0..255"
case $CLIENTS in [1-9]) ;; *) die "RPCBED_NETBED_CLIENTS=$CLIENTS: want 1..9" ;; esac
if [ "$CLIENTS" = 1 ]; then
	ROLES=(server clients)
else
	ROLES=(server)
	for ((k = 1; k <= CLIENTS; k++)); do ROLES+=("c$k"); done
fi

ns() { echo "$NAME-$1"; }
sock() { echo "$RUN/$1/docker.sock"; }
addr() { case $1 in server) echo "198.18.$NET.1" ;; clients) echo "198.18.$NET.2" ;; c*) echo "198.18.$NET.$((1 + ${1#c}))" ;; esac; }
DEV_S=$NAME-ds DEV_C=$NAME-dc MGMT_S=$NAME-ms MGMT_H=$NAME-mh BRIDGE=$NAME-br
MGMT_NS_ADDR=198.19.$NET.1 MGMT_HOST_ADDR=198.19.$NET.2

engine_answers() { docker -H "unix://$(sock "$1")" version --format '{{.Server.Version}}' >/dev/null 2>&1; }

print_env() {
	if [ "$CLIENTS" != 1 ]; then
		local r k=0
		echo "NETBED_SERVER_ENGINE=unix://$(sock server)"
		echo "NETBED_SERVER_ADDR=$(addr server)"
		echo "NETBED_SERVER_NETNS=$(ns server)"
		echo "NETBED_SERVER_DEV=$BRIDGE"
		echo "NETBED_CLIENTS=$CLIENTS"
		echo "NETBED_DRIVER_ADDR=$MGMT_HOST_ADDR"
		for r in "${ROLES[@]:1}"; do
			k=${r#c}
			echo "NETBED_CLIENT${k}_ENGINE=unix://$(sock "$r")"
			echo "NETBED_CLIENT${k}_ADDR=$(addr "$r")"
			echo "NETBED_CLIENT${k}_NETNS=$(ns "$r")"
			echo "NETBED_CLIENT${k}_DEV=$NAME-d$k"
		done
		return
	fi
	cat <<EOF
NETBED_SERVER_ENGINE=unix://$(sock server)
NETBED_SERVER_ADDR=$(addr server)
NETBED_SERVER_NETNS=$(ns server)
NETBED_SERVER_DEV=$DEV_S
NETBED_CLIENTS_ENGINE=unix://$(sock clients)
NETBED_CLIENTS_ADDR=$(addr clients)
NETBED_CLIENTS_NETNS=$(ns clients)
NETBED_CLIENTS_DEV=$DEV_C
EOF
}

# stop_daemon ROLE: the dockerd this script started for ROLE, by its pidfile.
# launched.pid is the pid `up` started (nsenter execs dockerd: the same process),
# written before dockerd writes its own pidfile, so an up interrupted at once
# still finds it.
stop_daemon() {
	local pf pid
	for pf in "$RUN/$1/dockerd.pid" "$RUN/$1/launched.pid"; do
		[ -s "$pf" ] || continue
		pid=$(cat "$pf")
		if kill -0 "$pid" 2>/dev/null; then
			kill "$pid" 2>/dev/null || true
			for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
			kill -9 "$pid" 2>/dev/null || true
		fi
		rm -f "$pf"
	done
}

# sweep_processes NETNS: anything still running in our namespace (a containerd-shim
# or container the daemon left behind) is ours: stop it, or the namespace lingers.
sweep_processes() {
	local pids
	pids=$(ip netns pids "$1" 2>/dev/null || true)
	[ -n "$pids" ] || return 0
	kill $pids 2>/dev/null || true
	for _ in $(seq 1 25); do
		pids=$(ip netns pids "$1" 2>/dev/null || true)
		[ -n "$pids" ] || return 0
		sleep 0.2
	done
	kill -9 $pids 2>/dev/null || true
}

# all_roles: the roles of this NAME that exist, whichever RPCBED_NETBED_CLIENTS
# made them (down and leftovers must not depend on being told it again).
all_roles() {
	{
		printf '%s\n' "${ROLES[@]}" server clients
		ip netns list | awk '{print $1}' | sed -n "s/^$NAME-\(c[0-9][0-9]*\)\$/\1/p"
		[ -d "$RUN" ] && ls "$RUN" | grep -E '^c[0-9]+$' || true
	} | awk '!seen[$0]++'
}

down() {
	local purge=${1:-} r
	local roles
	mapfile -t roles < <(all_roles)
	# A swarm an interrupted run left on these engines (rpcbed's swarm runner
	# leaves on every exit path it sees; a killed driver sees none): its state
	# would outlive the daemons in the kept data-roots.
	for r in "${roles[@]}"; do
		[ -S "$(sock "$r")" ] || continue
		case $(docker -H "unix://$(sock "$r")" info --format '{{.Swarm.LocalNodeState}}' 2>/dev/null) in
		active | pending | error | locked) docker -H "unix://$(sock "$r")" swarm leave --force >/dev/null 2>&1 || true ;;
		esac
	done
	for r in "${roles[@]}"; do stop_daemon "$r"; done
	for r in "${roles[@]}"; do
		if ip netns list | awk '{print $1}' | grep -qx "$(ns "$r")"; then
			sweep_processes "$(ns "$r")"
			# Deleting a namespace deletes the veth ends in it, and so their peers.
			ip netns delete "$(ns "$r")" 2>/dev/null || true
		fi
	done
	ip link delete "$MGMT_H" 2>/dev/null || true
	ip link delete "$DEV_S" 2>/dev/null || true
	ip route delete "$(addr server)/32" 2>/dev/null || true
	ip route delete "198.18.$NET.0/24" via "$MGMT_NS_ADDR" 2>/dev/null || true
	for r in "${roles[@]}"; do
		# The exec-root holds the daemon's mounts (netns files, container rootfs).
		if [ -d "$RUN/$r" ]; then
			grep -F " $RUN/$r" /proc/self/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
			rm -rf "$RUN/$r"
		fi
	done
	rmdir "$RUN" 2>/dev/null || true
	if [ "$purge" = -purge ] && [ -d "$DATA" ]; then
		# (every role's data-root is under $DATA: c1..cK included)
		grep -F " $DATA" /proc/self/mounts | awk '{print $2}' | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
		rm -rf "$DATA"
	fi
	left=$(leftovers)
	[ -z "$left" ] || die "left behind: $left"
	say "down: $NAME removed"
}

# leftovers lists what down should have removed and did not.
leftovers() {
	local r out="" roles
	mapfile -t roles < <(all_roles)
	for r in "${roles[@]}"; do
		ip netns list | awk '{print $1}' | grep -qx "$(ns "$r")" && out+=" netns:$(ns "$r")"
		[ -s "$RUN/$r/dockerd.pid" ] && out+=" dockerd:$r"
		# Only looked at, never signalled by name: a daemon on our data-root.
		pgrep -f -- "--data-root $DATA/$r( |$)" >/dev/null 2>&1 && out+=" dockerd-process:$r"
	done
	for d in "$DEV_S" "$DEV_C" "$MGMT_S" "$MGMT_H" "$BRIDGE" $(ip -o link show | awk -F': ' '{sub(/@.*/, "", $2); print $2}' | grep -E "^$NAME-[bd][0-9]+\$"); do
		ip link show "$d" >/dev/null 2>&1 && out+=" link:$d"
	done
	echo "${out# }"
}

up() {
	[ "$(id -u)" = 0 ] || die "needs root (network namespaces, veths, dockerd)"
	local c
	for c in ip nsenter dockerd docker; do command -v "$c" >/dev/null || die "$c is not installed"; done
	# A dockerd finding the system containerd's socket uses that containerd, whose
	# containers would live in the host's namespace, not ours.
	[ "$ENGINES" = 0 ] || [ ! -S /run/containerd/containerd.sock ] ||
		die "a system containerd runs (/run/containerd/containerd.sock): the engines would share it and their containers would not live in the namespaces"
	ip netns list | awk '{print $1}' | grep -qx "$(ns server)" && die "$(ns server) exists: another netbed runs (docker/netbed.sh down, or RPCBED_NETBED=another-name)"
	ip route get "$(addr server)" 2>/dev/null | grep -q "dev $MGMT_H" && die "a route to $(addr server) exists"
	ip netns list | awk '{print $1}' | grep -qE "^$NAME-(clients|c[0-9]+)\$" && die "client namespaces of $NAME exist: another netbed runs (docker/netbed.sh down)"

	trap 'rc=$?; trap - EXIT INT TERM; say "up failed: removing what it made"; down >&2 || true; exit $rc' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM

	local r
	for r in "${ROLES[@]}"; do
		ip netns add "$(ns "$r")"
		ip -n "$(ns "$r")" link set lo up
	done
	if [ "$CLIENTS" = 1 ]; then
		ip link add "$DEV_S" type veth peer name "$DEV_C"
		ip link set "$DEV_S" netns "$(ns server)"
		ip link set "$DEV_C" netns "$(ns clients)"
		ip -n "$(ns server)" addr add "$(addr server)/24" dev "$DEV_S"
		ip -n "$(ns clients)" addr add "$(addr clients)/24" dev "$DEV_C"
		ip -n "$(ns server)" link set "$DEV_S" up
		ip -n "$(ns clients)" link set "$DEV_C" up
	else
		ip -n "$(ns server)" link add "$BRIDGE" type bridge
		ip -n "$(ns server)" addr add "$(addr server)/24" dev "$BRIDGE"
		ip -n "$(ns server)" link set "$BRIDGE" up
		local k
		for r in "${ROLES[@]:1}"; do
			k=${r#c}
			ip link add "$NAME-b$k" type veth peer name "$NAME-d$k"
			ip link set "$NAME-b$k" netns "$(ns server)"
			ip link set "$NAME-d$k" netns "$(ns "$r")"
			ip -n "$(ns server)" link set "$NAME-b$k" master "$BRIDGE"
			ip -n "$(ns server)" link set "$NAME-b$k" up
			ip -n "$(ns "$r")" addr add "$(addr "$r")/24" dev "$NAME-d$k"
			ip -n "$(ns "$r")" link set "$NAME-d$k" up
		done
	fi
	# The management link: the host reaches the server's data address over it.
	ip link add "$MGMT_H" type veth peer name "$MGMT_S"
	ip link set "$MGMT_S" netns "$(ns server)"
	ip -n "$(ns server)" addr add "$MGMT_NS_ADDR/30" dev "$MGMT_S"
	ip -n "$(ns server)" link set "$MGMT_S" up
	ip addr add "$MGMT_HOST_ADDR/30" dev "$MGMT_H"
	ip link set "$MGMT_H" up
	if [ "$CLIENTS" = 1 ]; then
		ip route add "$(addr server)/32" via "$MGMT_NS_ADDR" dev "$MGMT_H"
	else
		# The server namespace routes between the bridge and the management link:
		# the tasks on the client hosts reach the driver, and it reaches them.
		nsenter --net="/var/run/netns/$(ns server)" sh -c "echo 1 >/proc/sys/net/ipv4/ip_forward"
		ip route add "198.18.$NET.0/24" via "$MGMT_NS_ADDR" dev "$MGMT_H"
		for r in "${ROLES[@]:1}"; do
			ip -n "$(ns "$r")" route add "$MGMT_HOST_ADDR/32" via "$(addr server)"
		done
	fi

	if [ "$ENGINES" = 0 ]; then
		for r in "${ROLES[@]}"; do mkdir -p "$RUN/$r"; done
		trap - EXIT INT TERM
		say "up: $NAME, namespaces and links only (RPCBED_NETBED_ENGINES=0)"
		print_env
		return
	fi
	for r in "${ROLES[@]}"; do
		mkdir -p "$RUN/$r" "$DATA/$r"
		# nsenter --net, not `ip netns exec`: that one remounts /sys, and dockerd then
		# finds no cgroups. setsid: the daemon outlives the shell that started it.
		setsid nsenter --net="/var/run/netns/$(ns "$r")" \
			dockerd --data-root "$DATA/$r" --exec-root "$RUN/$r/exec" --pidfile "$RUN/$r/dockerd.pid" \
			-H "unix://$(sock "$r")" --bridge=none --iptables=false --ip-masq=false \
			>"$RUN/$r/dockerd.log" 2>&1 </dev/null &
		echo $! >"$RUN/$r/launched.pid"
	done
	local i
	for r in "${ROLES[@]}"; do
		for ((i = 0; i < WAIT * 4; i++)); do
			engine_answers "$r" && break
			sleep 0.25
		done
		# RPCBED_NETBED_WAIT=0 gives no time at all: fail, whatever a fast engine
		# (or one left by an earlier bed) would answer.
		{ ((WAIT > 0)) && engine_answers "$r"; } || { tail -n 20 "$RUN/$r/dockerd.log" >&2; die "the $r engine did not answer within ${WAIT}s"; }
	done
	trap - EXIT INT TERM
	if [ "$CLIENTS" = 1 ]; then
		say "up: $NAME (server $(addr server), clients $(addr clients))"
	else
		say "up: $NAME (server $(addr server), $CLIENTS client hosts $(addr c1)..$(addr "c$CLIENTS"))"
	fi
	print_env
}

load() {
	local im r
	for im in "$@"; do
		for r in "${ROLES[@]}"; do
			local want have
			want=$(docker image inspect -f '{{.Id}}' "$im") || die "image $im is not on the host's engine (make images)"
			have=$(docker -H "unix://$(sock "$r")" image inspect -f '{{.Id}}' "$im" 2>/dev/null || true)
			[ "$want" = "$have" ] && continue
			say "copying $im to the $r engine"
			docker save "$im" | docker -H "unix://$(sock "$r")" load >/dev/null
		done
	done
}

# run CMD...: up, CMD with the endpoints exported, down on every exit path.
run() {
	local env
	env=$(up)
	trap 'rc=$?; trap - EXIT INT TERM; down >&2 || rc=1; exit $rc' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	set -a
	eval "$env"
	set +a
	"$@"
}

case "${1:-}" in
up) up ;;
down) down "${2:-}" ;;
status) for r in "${ROLES[@]}"; do engine_answers "$r" || exit 1; done ;;
env) print_env ;;
leftovers) leftovers ;;
load) shift; load "$@" ;;
run) shift; [ $# -gt 0 ] || die "usage: $0 run CMD..."; run "$@" ;;
*) die "usage: $0 up|down [-purge]|status|env|leftovers|load IMAGE...|run CMD..." ;;
esac

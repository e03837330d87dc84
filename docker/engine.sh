#!/usr/bin/env bash
# engine.sh — make sure a Docker engine answers, starting Debian's dockerd if needed.
#
#   docker/engine.sh [up]    engine reachable afterwards, or exit 1 with the reason
#   docker/engine.sh status  exit 0 when an engine answers
#   docker/engine.sh down    stop the dockerd this script started (by its pidfile)
#
# An engine that already answers (DOCKER_HOST or the default socket) is used as is.
# Otherwise, as root: install docker.io when dockerd is missing, then start
# `dockerd --bridge=none --iptables=false` in the background. No bridge and no
# iptables: every rpcbed container runs with host networking, so all traffic stays
# on 127.0.0.1 and the engine never touches the host's firewall.
set -euo pipefail

STATE_DIR=${RPCBED_ENGINE_DIR:-/var/run/rpcbed}
PIDFILE=$STATE_DIR/dockerd.pid
LOG=${RPCBED_ENGINE_LOG:-/var/log/rpcbed-dockerd.log}
SOCK=/var/run/docker.sock
WAIT=${RPCBED_ENGINE_WAIT:-60}

say() { echo "engine: $*" >&2; }
die() { say "$*"; exit 1; }

answers() { docker version --format '{{.Server.Version}}' >/dev/null 2>&1; }

ensure_client_and_daemon() {
	command -v dockerd >/dev/null && command -v docker >/dev/null && return 0
	[ "$(id -u)" = 0 ] || die "dockerd is not installed and this is not root: install Debian's docker.io (apt-get install docker.io) or point DOCKER_HOST at an engine"
	say "installing docker.io"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y --no-install-recommends docker.io >/dev/null ||
		{ apt-get update -qq && apt-get install -y --no-install-recommends docker.io >/dev/null; } ||
		die "apt-get install docker.io failed"
	command -v dockerd >/dev/null || die "docker.io installed but dockerd is not on PATH"
}

ours_running() {
	[ -s "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null
}

up() {
	if answers; then
		say "an engine answers ($(docker version --format 'server {{.Server.Version}}, API {{.Server.APIVersion}}' 2>/dev/null))"
		return 0
	fi
	[ -z "${DOCKER_HOST:-}" ] || die "DOCKER_HOST=$DOCKER_HOST does not answer; unset it to let this script start a local dockerd"
	ensure_client_and_daemon
	[ "$(id -u)" = 0 ] || die "no engine answers on $SOCK and starting dockerd needs root"
	mkdir -p "$STATE_DIR" "$(dirname "$LOG")"
	if ours_running; then
		say "dockerd (pid $(cat "$PIDFILE")) is starting; waiting"
	else
		# A dead dockerd can leave its pidfile and socket behind; dockerd refuses to
		# start over its own stale pidfile.
		if [ -e /var/run/docker.pid ] && ! kill -0 "$(cat /var/run/docker.pid 2>/dev/null)" 2>/dev/null; then
			rm -f /var/run/docker.pid
		fi
		say "starting dockerd --bridge=none --iptables=false (log: $LOG)"
		# setsid: the daemon outlives the make or CI shell that started it.
		setsid dockerd --bridge=none --iptables=false --ip-masq=false \
			--pidfile=/var/run/docker.pid >>"$LOG" 2>&1 </dev/null &
		echo $! >"$PIDFILE"
	fi
	local i
	for ((i = 0; i < WAIT * 4; i++)); do
		if answers; then
			say "dockerd up (pid $(cat "$PIDFILE"), $(docker version --format 'server {{.Server.Version}}, API {{.Server.APIVersion}}'))"
			return 0
		fi
		ours_running || break
		sleep 0.25
	done
	say "dockerd did not answer on $SOCK within ${WAIT}s; last lines of $LOG:"
	tail -n 20 "$LOG" >&2 || true
	if ours_running; then
		kill "$(cat "$PIDFILE")" 2>/dev/null || true
	fi
	rm -f "$PIDFILE"
	exit 1
}

down() {
	if ! ours_running; then
		say "no dockerd started by this script is running"
		rm -f "$PIDFILE"
		return 0
	fi
	local pid
	pid=$(cat "$PIDFILE")
	say "stopping dockerd pid $pid"
	kill "$pid"
	for _ in $(seq 1 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
	rm -f "$PIDFILE"
}

case "${1:-up}" in
up) up ;;
status) answers ;;
down) down ;;
*) die "usage: $0 [up|status|down]" ;;
esac

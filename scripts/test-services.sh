#!/usr/bin/env bash
# test-services.sh CMD...: run CMD with the services the Go tests (make test-go) and
# make reproduce use, starting each for the run when none answers and stopping what
# it started (by pid) on every exit path:
#   Redis      127.0.0.1:6379 (REDIS_ADDR): redis-server, installed with apt-get
#              when missing and this is root
#   Aerospike  AEROSPIKE_HOSTS, else 127.0.0.1:3000 when it answers, else asd from
#              ../shared/aerospike/start.sh beside the repository (when present)
# A service that cannot be had is reported; the tests that need it skip (or fail,
# when RPCBED_REQUIRE names it). One line per service goes to $TEST_SUMMARY_DIR/services.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
summary_dir=${TEST_SUMMARY_DIR:-}
[ -z "$summary_dir" ] || { mkdir -p "$summary_dir" && : >"$summary_dir/services.txt"; }
note() {
	echo "test-services: $*" >&2
	[ -z "$summary_dir" ] || echo "  $*" >>"$summary_dir/services.txt"
}
answers() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

redis_pid="" as_pid="" as_dir=""
cleanup() {
	local p
	for p in $redis_pid $as_pid; do
		kill "$p" 2>/dev/null || continue
		for _ in $(seq 100); do kill -0 "$p" 2>/dev/null || break; sleep 0.2; done
		kill -9 "$p" 2>/dev/null || true
	done
	redis_pid="" as_pid=""
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- Redis -----------------------------------------------------------------------
redis_addr=${REDIS_ADDR:-127.0.0.1:6379}
if answers "${redis_addr%:*}" "${redis_addr##*:}"; then
	note "redis: $redis_addr answers (used as is)"
elif [ "$redis_addr" != 127.0.0.1:6379 ]; then
	note "redis: REDIS_ADDR=$redis_addr does not answer; its tests skip"
else
	if ! command -v redis-server >/dev/null && [ "$(id -u)" = 0 ]; then
		echo "test-services: installing redis-server" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null 2>&1 ||
			{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends redis-server >/dev/null 2>&1; }
	fi
	if command -v redis-server >/dev/null; then
		redis-server --bind 127.0.0.1 --port 6379 --save '' --appendonly no --daemonize no \
			>"${TMPDIR:-/tmp}/rpcbed-test-redis.log" 2>&1 &
		redis_pid=$!
		for _ in $(seq 50); do answers 127.0.0.1 6379 && break; sleep 0.1; done
		if answers 127.0.0.1 6379; then
			note "redis: started for the run on 127.0.0.1:6379 (pid $redis_pid)"
		else
			note "redis: redis-server did not come up (log ${TMPDIR:-/tmp}/rpcbed-test-redis.log); its tests skip"
		fi
	else
		note "redis: no redis-server (apt-get install redis-server); its tests skip"
	fi
fi

# --- Aerospike -------------------------------------------------------------------
as_pkg=${RPCBED_AEROSPIKE_PKG:-$(dirname "$root")/shared/aerospike}
[ -x "$as_pkg/bin/asd" ] && export RPCBED_AEROSPIKE_PKG=$as_pkg
if [ -n "${AEROSPIKE_HOSTS:-}" ]; then
	note "aerospike: AEROSPIKE_HOSTS=$AEROSPIKE_HOSTS (used as is)"
elif answers 127.0.0.1 3000; then
	export AEROSPIKE_HOSTS=127.0.0.1:3000
	note "aerospike: 127.0.0.1:3000 answers (used as is)"
elif [ -x "$as_pkg/start.sh" ]; then
	as_dir=${TMPDIR:-/tmp}/rpcbed-test-aerospike
	if as_pid=$("$as_pkg/start.sh" "$as_dir" | tail -n 1) && [ -n "$as_pid" ]; then
		export AEROSPIKE_HOSTS=127.0.0.1:3000
		note "aerospike: started for the run on 127.0.0.1:3000 (pid $as_pid, $as_pkg/start.sh)"
	else
		as_pid=""
		note "aerospike: $as_pkg/start.sh failed (log $as_dir/log); its tests skip"
	fi
else
	note "aerospike: no server package at $as_pkg (and AEROSPIKE_HOSTS is not set); its tests skip"
fi

"$@"
rc=$?
cleanup
exit $rc

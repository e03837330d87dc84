#!/usr/bin/env bash
# How fast is go-client as a load generator? Against one go-server on loopback
# (-auth=false), in the same run:
#   go-client vs ghz on gRPC DataType  (same -c, same connection count)
#   go-client vs wrk on HTTP DataType  (same connections, keep-alive)
# Prints requests/s and client CPU per request (user+sys of the whole client
# process, from /usr/bin/time) for each, and the ratios. A benchmark, not a test:
# it never fails on a number.
#
# go-client runs with -check length here: it checks the status, the token and the
# response size, the work closest to what ghz and wrk do (they look at the status
# only; ghz also decodes the protobuf, as go-client must to read the token). The
# matrix always runs -check full (every response decoded and its content checked,
# docs/method.md), which costs more client CPU per call, above all on HTTP/JSON.
#
# Environment: C (default 50), DUR seconds per tool (default 10), ROUNDS (default 3;
# the tools alternate within a round), GRPC_CONNS (default 1), BIN (default bin).
#
# On a machine shared with other work, requests/s swing with the load of the
# moment: the ratios are also given as the median of the per-round ratios (each
# round runs the two tools back to back), and CPU per request is the steadier
# figure.
set -euo pipefail
cd "$(dirname "$0")/.."

C=${C:-50}
DUR=${DUR:-10}
ROUNDS=${ROUNDS:-3}
GRPC_CONNS=${GRPC_CONNS:-1}
BIN=${BIN:-bin}

for tool in "$BIN/go-server" "$BIN/go-client" "$BIN/ghz" wrk /usr/bin/time; do
	if ! command -v "$tool" >/dev/null; then
		echo "bench-loadgen: $tool is missing (make bench-loadgen builds and installs what it needs)" >&2
		exit 1
	fi
done

tmp=$(mktemp -d)
server_pid=
cleanup() {
	if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# One server on :0 ports; its log names the ports it bound.
"$BIN/go-server" -auth=false -grpc 127.0.0.1:0 -http 127.0.0.1:0 -thrift '' 2>"$tmp/server.log" &
server_pid=$!
for _ in $(seq 100); do
	grep -q 'listening proto=http' "$tmp/server.log" 2>/dev/null && break
	sleep 0.1
done
grpc_addr=$(sed -n 's/.*listening proto=grpc addr=\([^ ]*\).*/\1/p' "$tmp/server.log")
http_addr=$(sed -n 's/.*listening proto=http addr=\([^ ]*\).*/\1/p' "$tmp/server.log")
if [[ -z $grpc_addr || -z $http_addr ]]; then
	echo "bench-loadgen: go-server did not start:" >&2
	cat "$tmp/server.log" >&2
	exit 1
fi
echo "bench-loadgen: go-server grpc=$grpc_addr http=$http_addr; c=$C, ${DUR}s per tool, $ROUNDS round(s), $(nproc) cores" >&2

datatype_path='/v1/datatype?groupName=USER_EVENT&enName=app_call_connect_success'

# measure NAME CMD...: runs CMD under /usr/bin/time; leaves "requests seconds cpu"
# in $tmp/NAME.<round>.
measure() {
	local name=$1 round=$2
	shift 2
	echo "bench-loadgen: $name: $*" >&2
	/usr/bin/time -f '%U %S' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || {
		echo "bench-loadgen: $name failed:" >&2
		cat "$tmp/err" "$tmp/out" >&2
		exit 1
	}
	local reqs secs
	case $name in
	ghz)
		reqs=$(awk '/^  Count:/ {print $2}' "$tmp/out")
		secs=$(awk '/^  Total:/ {v=$2; u=$3; if (u=="ms") v/=1000; else if (u=="m") v*=60; print v}' "$tmp/out")
		local ok
		ok=$(awk '/\[OK\]/ {gsub(/[^0-9]/, "", $2); print $2}' "$tmp/out")
		[[ $ok == "$reqs" ]] || echo "bench-loadgen: ghz: only $ok of $reqs calls OK" >&2
		;;
	wrk)
		reqs=$(awk '/requests in/ {print $1}' "$tmp/out")
		secs=$(awk '/requests in/ {v=$4; sub(/,$/, "", v); if (v ~ /ms$/) {sub(/ms$/, "", v); v/=1000} else if (v ~ /m$/) {sub(/m$/, "", v); v*=60} else sub(/s$/, "", v); print v}' "$tmp/out")
		grep -q 'Non-2xx\|Socket errors' "$tmp/out" && echo "bench-loadgen: wrk: $(grep 'Non-2xx\|Socket errors' "$tmp/out")" >&2
		;;
	go-client-*)
		reqs=$(awk '/^Complete requests:/ {print $3}' "$tmp/out")
		secs=$(awk '/^Time taken for tests:/ {print $5}' "$tmp/out")
		grep -q '^Failed requests: *0$' "$tmp/out" || echo "bench-loadgen: $name: $(grep '^Failed requests' "$tmp/out")" >&2
		;;
	esac
	read -r user sys <"$tmp/time"
	echo "$reqs $secs $(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')" >"$tmp/$name.$round"
	awk -v n="$name" -v r="$reqs" -v s="$secs" -v u="$user" -v y="$sys" \
		'BEGIN {printf "bench-loadgen: %s: %d requests in %.2fs: %.0f/s, %.1f us CPU/request (load average %s)\n", n, r, s, r / s, (u + y) * 1e6 / r, ARGV[1]}' \
		"$(cut -d' ' -f1 /proc/loadavg)" >&2
}

for round in $(seq "$ROUNDS"); do
	measure ghz "$round" "$BIN/ghz" --insecure --proto idl/data.proto --call rpcbed.data.Data/DataType \
		-d '{"auth":{"client_id":"ghz"},"group_name":"USER_EVENT","en_name":"app_call_connect_success"}' \
		-c "$C" --connections "$GRPC_CONNS" -z "${DUR}s" "$grpc_addr"
	measure go-client-grpc "$round" "$BIN/go-client" -proto grpc -call datatype -check length -c "$C" -conns "$GRPC_CONNS" -t "$DUR" -addr "$grpc_addr"
	measure wrk "$round" wrk -t "$(nproc)" -c "$C" -d "${DUR}s" -H 'X-Client-Id: wrk' "http://$http_addr$datatype_path"
	measure go-client-http "$round" "$BIN/go-client" -proto http -call datatype -check length -c "$C" -k -t "$DUR" -addr "$http_addr"
done

# Sum the rounds: requests/s = all requests / all seconds; CPU per request likewise.
row() {
	cat "$tmp/$1".* | awk -v name="$1" -v proto="$2" '
		{ r += $1; s += $2; cpu += $3 }
		END { printf "%-16s %-6s %12.0f %14.1f\n", name, proto, r / s, cpu * 1e6 / r }'
}
{
	printf "%-16s %-6s %12s %14s\n" tool proto "requests/s" "cpu_us/req"
	row ghz grpc
	row go-client-grpc grpc
	row wrk http
	row go-client-http http
} >"$tmp/table"
cat "$tmp/table"
# median NAME OTHER: the median over rounds of NAME's requests/s over OTHER's.
median() {
	for r in $(seq "$ROUNDS"); do
		awk 'NR == FNR {a = $1 / $2; next} {print a / ($1 / $2)}' "$tmp/$1.$r" "$tmp/$2.$r"
	done | sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}
awk -v mg="$(median go-client-grpc ghz)" -v mh="$(median go-client-http wrk)" '
	{ rps[$1] = $3; cpu[$1] = $4 }
	END {
		printf "\ngo-client/ghz  (gRPC): requests/s x%.2f (median of rounds x%.2f; goal >= 1.30), cpu/request x%.2f\n", rps["go-client-grpc"] / rps["ghz"], mg, cpu["go-client-grpc"] / cpu["ghz"]
		printf "go-client/wrk  (HTTP): requests/s x%.2f (median of rounds x%.2f; goal >= 0.90), cpu/request x%.2f\n", rps["go-client-http"] / rps["wrk"], mh, cpu["go-client-http"] / cpu["wrk"]
	}' <(tail -n +2 "$tmp/table")

#!/usr/bin/env bash
# What does PHP's runtime choice cost? Against one go-server on loopback, side by
# side in one run: datalist at c=1 for each ITEMS size, on each PROTOS protocol,
#   go-client                       (go)
#   php-client -runtime c           (php: protobuf C extension / Thrift accelerator)
#   php-client -runtime pure        (php-pure: pure-PHP protobuf / Thrift)
# Prints requests/s and client CPU per call (each the median over ROUNDS; the three
# clients alternate within a round), then each client's ratio to go paired by round
# with its 95 % interval and verdict (rpcbed ratio), and the goal
# php-grpc-datalist-200-c1 >= 0.4 x go-grpc-datalist-200-c1 on requests/s.
# A benchmark, not a test: it never fails on a number. On a machine shared with
# other work requests/s swing with the load of the moment; client CPU per call
# (Client CPU user + system over the calls, from the report) is the steadier figure.
#
# Environment: ITEMS (default "2 200 5000"), PROTOS (default "grpc thrift"), DUR
# (seconds measured per run, default 3), WARM (warm-up, default 1s), ROUNDS (3),
# BIN (bin), PIN=1 to pin go-server to SERVER_CPU (0) and each client to CLIENT_CPU
# (1) with taskset, as the matrix does (off by default: on a machine busy with
# other work a pinned process waits for its one core while the other is free).
set -euo pipefail
cd "$(dirname "$0")/.."

ITEMS=${ITEMS:-2 200 5000}
PROTOS=${PROTOS:-grpc thrift}
DUR=${DUR:-3}
WARM=${WARM:-1s}
ROUNDS=${ROUNDS:-3}
BIN=${BIN:-bin}
PHP_CLIENT=php-client/bin/php-client

for tool in "$BIN/go-server" "$BIN/go-client" "$BIN/rpcbed" "$PHP_CLIENT"; do
	[[ -x $tool ]] || { echo "bench-php-runtime: $tool is missing (make build setup-php)" >&2; exit 1; }
done
for so in php-client/ext/build/grpc.so php-client/ext/build/protobuf.so; do
	[[ -f $so ]] || { echo "bench-php-runtime: $so is missing (php-client/build-ext.sh)" >&2; exit 1; }
done
server_pin=() client_pin=()
if [[ ${PIN:-0} == 1 ]]; then
	server_pin=(taskset -c "${SERVER_CPU:-0}")
	client_pin=(taskset -c "${CLIENT_CPU:-1}")
fi

tmp=$(mktemp -d)
server_pid=
cleanup() {
	if [[ -n $server_pid ]]; then kill "$server_pid" 2>/dev/null || true; wait "$server_pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT

"${server_pin[@]}" "$BIN/go-server" -grpc 127.0.0.1:0 -thrift 127.0.0.1:0 -http 127.0.0.1:0 2>"$tmp/server.log" &
server_pid=$!
for _ in $(seq 100); do
	grep -q 'listening proto=thrift' "$tmp/server.log" 2>/dev/null && grep -q 'listening proto=grpc' "$tmp/server.log" && break
	sleep 0.1
done
declare -A addr
for p in grpc thrift; do
	addr[$p]=$(sed -n "s/.*listening proto=$p addr=\([^ ]*\).*/\1/p" "$tmp/server.log")
	[[ -n ${addr[$p]} ]] || { echo "bench-php-runtime: go-server did not start:" >&2; cat "$tmp/server.log" >&2; exit 1; }
done

# run CLIENT PROTO ITEMS: prints "REQ/S CPU_US_PER_CALL", or "- -" when the run failed.
run() {
	local client=$1 proto=$2 items=$3 out cmd
	case $client in
	go) cmd=("$BIN/go-client") ;;
	php) cmd=("$PHP_CLIENT" -runtime c) ;;
	php-pure) cmd=("$PHP_CLIENT" -runtime pure) ;;
	esac
	if out=$("${client_pin[@]}" "${cmd[@]}" -proto "$proto" -call datalist -items "$items" -c 1 -t "$DUR" \
		-warmup "$WARM" -addr "${addr[$proto]}" 2>"$tmp/err"); then
		awk '/^Requests per second:/ { rps = $4 } /^Complete requests:/ { n = $3 }
			/^Client CPU user:/ { u = $4 } /^Client CPU system:/ { s = $4 }
			END { if (rps == "" || n == 0) print "- -"; else printf "%s %.0f\n", rps, (u + s) / n * 1e6 }' <<<"$out"
	else
		echo "bench-php-runtime: $client $proto $items: $(tail -1 "$tmp/err")" >&2
		echo "- -"
	fi
}

median() { tr ' ' '\n' | { grep -v '^-\?$' || true; } | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }

declare -A rps cpu
clients=(go php php-pure)
for ((r = 1; r <= ROUNDS; r++)); do
	for proto in $PROTOS; do
		for items in $ITEMS; do
			for client in "${clients[@]}"; do
				read -r x y <<<"$(run "$client" "$proto" "$items")"
				rps[$client-$proto-$items]+="$x "
				cpu[$client-$proto-$items]+="$y "
			done
		done
	done
	echo "bench-php-runtime: round $r of $ROUNDS done" >&2
done

# pairs A B: "A's figure B's figure" per round both have ("-" is a failed run).
pairs() {
	paste -d' ' <(tr ' ' '\n' <<<"$1" | grep -v '^$') <(tr ' ' '\n' <<<"$2" | grep -v '^$') | awk '$1 != "-" && $2 != "-"'
}

# ratio WIDTH LABEL BETTER GOAL A_ROUNDS B_ROUNDS: A/B paired by round with its 95 %
# interval and verdict (GOAL 0: against 1); a failure is said on the line.
ratio() {
	local width=$1 label=$2 better=$3 goal=$4
	pairs "$5" "$6" | "$BIN/rpcbed" ratio -width "$width" -label "$label" -better "$better" -goal "$goal" ||
		echo "$label: no ratio (rpcbed ratio failed: stderr says why)"
}

echo "# datalist c=1: requests/s and client CPU µs per call (median of $ROUNDS rounds, $DUR s each after $WARM warm-up)"
echo
echo "| cell | go req/s | php req/s | php-pure req/s | go CPU µs | php CPU µs | php-pure CPU µs |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for proto in $PROTOS; do
	for items in $ITEMS; do
		row="| $proto-datalist-$items-c1 |"
		for client in "${clients[@]}"; do row+=" $(median <<<"${rps[$client-$proto-$items]}") |"; done
		for client in "${clients[@]}"; do row+=" $(median <<<"${cpu[$client-$proto-$items]}") |"; done
		echo "$row"
	done
done
echo
echo "== ratios to go-client, paired by round (95 % intervals)"
for proto in $PROTOS; do
	for items in $ITEMS; do
		for client in php php-pure; do
			k=$proto-$items
			ratio 52 "$client/go requests/s $proto-datalist-$items-c1" higher 0 "${rps[$client-$k]}" "${rps[go-$k]}"
			ratio 52 "$client/go client CPU/call $proto-datalist-$items-c1" lower 0 "${cpu[$client-$k]}" "${cpu[go-$k]}"
		done
	done
done
if [[ " $PROTOS " == *" grpc "* && " $ITEMS " == *" 200 "* ]]; then
	echo
	echo "== goal"
	ratio 52 "goal php/go requests/s grpc-datalist-200-c1" higher 0.4 "${rps[php-grpc-200]}" "${rps[go-grpc-200]}"
fi

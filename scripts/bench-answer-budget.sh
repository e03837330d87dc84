#!/usr/bin/env bash
# Does go-server's answer budget (bytes reserved before an answer is
# built, the stall cut, Thrift frames in 256 KiB pieces) change a measured cell?
# Two go-servers side by side in one run: BEFORE (default: the commit before the
# budget came in) and the checkout's. Each round runs every cell once on each,
# in an order that alternates between rounds; go-client measures req/s, and the
# server's /stats its CPU per call over the run. Prints the medians over ROUNDS
# and after/before ratios, and /proc/loadavg before and after.
# A benchmark, not a test: it never fails on a number. On a shared machine
# req/s swing with the load of the moment; compare the ratios, and the spread
# of the per-round ratios printed beside them.
#
# Environment: ITEMS (default 5000), CONC (default "1 50"), PROTOS (default
# "grpc thrift http"), DUR (seconds per run, default 2), WARM (default 1s),
# ROUNDS (default 5), BEFORE (a git ref), PIN=1 to pin both servers to
# SERVER_CPU (0) and the client to CLIENT_CPU (1) as the matrix does.
set -euo pipefail
cd "$(dirname "$0")/.."

ITEMS=${ITEMS:-5000}
CONC=${CONC:-1 50}
PROTOS=${PROTOS:-grpc thrift http}
DUR=${DUR:-2}
WARM=${WARM:-1s}
ROUNDS=${ROUNDS:-5}
BEFORE=${BEFORE:-$(git log --diff-filter=A --format=%H -1 -- internal/server/budget.go)^}

server_pin=() client_pin=()
if [[ ${PIN:-0} == 1 ]]; then
	server_pin=(taskset -c "${SERVER_CPU:-0}")
	client_pin=(taskset -c "${CLIENT_CPU:-1}")
fi

tmp=$(mktemp -d /tmp/bench-answer-budget.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
	git worktree remove --force "$tmp/before" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "bench-answer-budget: loadavg before: $(cat /proc/loadavg)" >&2
git worktree add --detach -q "$tmp/before" "$BEFORE"
(cd "$tmp/before" && go build -o "$tmp/go-server-before" ./go-server)
go build -o "$tmp/go-server-after" ./go-server
go build -o "$tmp/go-client" ./go-client

declare -A addr
for v in before after; do
	"${server_pin[@]}" "$tmp/go-server-$v" -grpc 127.0.0.1:0 -thrift 127.0.0.1:0 -http 127.0.0.1:0 2>"$tmp/$v.log" &
	pids+=($!)
	for _ in $(seq 100); do
		grep -q 'listening proto=http' "$tmp/$v.log" 2>/dev/null && break
		sleep 0.1
	done
	for p in grpc thrift http; do
		addr[$v-$p]=$(sed -n "s/.*listening proto=$p addr=\([^ ]*\).*/\1/p" "$tmp/$v.log")
		[[ -n ${addr[$v-$p]} ]] || { echo "bench-answer-budget: go-server $v did not start:" >&2; cat "$tmp/$v.log" >&2; exit 1; }
	done
done

# cpu V: the server's CPU seconds and datalist calls so far, "CPU CALLS".
cpu() {
	curl -fsS "http://${addr[$1-http]}/stats" | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(s["cpu_user_s"] + s["cpu_system_s"], sum(c["datalist"]["requests"] for c in s["calls"].values()))'
}

# run V PROTO ITEMS C: prints "REQ/S SERVER_CPU_US_PER_CALL", or "- -".
run() {
	local v=$1 proto=$2 items=$3 c=$4 out c0 n0 c1 n1
	read -r c0 n0 <<<"$(cpu "$v")"
	if out=$("${client_pin[@]}" "$tmp/go-client" -proto "$proto" -call datalist -items "$items" -c "$c" -t "$DUR" \
		-warmup "$WARM" -addr "${addr[$v-$proto]}" 2>"$tmp/err"); then
		read -r c1 n1 <<<"$(cpu "$v")"
		awk -v c0="$c0" -v c1="$c1" -v n0="$n0" -v n1="$n1" '/^Requests per second:/ { rps = $4 }
			END { if (rps == "" || n1 == n0) print "- -"; else printf "%s %.0f\n", rps, (c1 - c0) / (n1 - n0) * 1e6 }' <<<"$out"
	else
		echo "bench-answer-budget: $v $proto $items c$c: $(tail -1 "$tmp/err")" >&2
		echo "- -"
	fi
}

median() { tr ' ' '\n' | { grep -v '^-\?$' || true; } | sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.3f", a / b }'; }

declare -A rps scpu rr
for ((r = 1; r <= ROUNDS; r++)); do
	order=(before after)
	((r % 2 == 0)) && order=(after before)
	for proto in $PROTOS; do
		for items in $ITEMS; do
			for c in $CONC; do
				k=$proto-$items-$c
				declare -A got=()
				for v in "${order[@]}"; do
					read -r x y <<<"$(run "$v" "$proto" "$items" "$c")"
					rps[$v-$k]+="$x " scpu[$v-$k]+="$y " got[$v]=$x
				done
				rr[$k]+="$(ratio "${got[after]}" "${got[before]}") "
			done
		done
	done
	echo "bench-answer-budget: round $r of $ROUNDS done" >&2
done

echo "# go-client datalist against go-server before ($BEFORE) and after the answer budget, side by side"
echo "# median of $ROUNDS rounds, $DUR s each after $WARM warm-up; order alternating per round"
echo
echo "| cell | before req/s | after req/s | after / before | per-round ratios | before server CPU µs/call | after | after / before |"
echo "|---|---:|---:|---:|---|---:|---:|---:|"
for proto in $PROTOS; do
	for items in $ITEMS; do
		for c in $CONC; do
			k=$proto-$items-$c
			b=$(median <<<"${rps[before-$k]}") a=$(median <<<"${rps[after-$k]}")
			bu=$(median <<<"${scpu[before-$k]}") au=$(median <<<"${scpu[after-$k]}")
			echo "| go-$proto-datalist-$items-c$c | $b | $a | $(ratio "$a" "$b") | ${rr[$k]% } | $bu | $au | $(ratio "$au" "$bu") |"
		done
	done
done
echo
echo "loadavg after: $(cat /proc/loadavg)"

#!/usr/bin/env bash
# How fast is go-client as a load generator? Against one go-server on loopback
# (-auth=false), in the same run:
#   closed loop: go-client vs ghz on gRPC DataType  (same -c, same connection count)
#                go-client vs wrk on HTTP DataType  (same connections, keep-alive)
#   over TLS:    the closed loop again against a second go-server serving TLS 1.3
#                only (ECDSA P-256 certificates from `rpcbed certs`): go-client
#                -security tls vs ghz --cacert (gRPC) and wrk on https (HTTP)
#   open loop:   go-client -rate R vs vegeta attack -rate R on HTTP DataType, at
#                5000/s, 20000/s and the highest rate vegeta holds here (found by
#                short trial attacks), each rate in its own alternating rounds
# Prints requests/s (open loop: the rate achieved against the target), client CPU
# per request (user+sys of the whole client process, from /usr/bin/time), open-loop
# latency, and the ratios. A benchmark, not a test: it never fails on a number.
# docs/loadgen.md says what each figure means and has a run's figures.
#
# go-client runs with -check length here (load-generator mode; on HTTP an event
# loop with its own HTTP/1.1 response reader): it checks the status, the token and
# the response size, the work closest to what ghz, wrk and vegeta do (they look at
# the status only; ghz also decodes the protobuf, as go-client must to read the
# token). The matrix always runs -check full (every response decoded and its
# content checked, docs/method.md), which costs more client CPU per call.
#
# Open-loop latency, both tools: a call's end minus its intended start (the time it
# was due on the schedule, whatever delayed its sending: coordinated omission
# corrected, as wrk2). go-client books it so itself; vegeta's results carry each
# hit's seq and send time, and `rpcbed vegeta` puts hit seq due at the attack's
# start plus (seq+1)/R (vegeta's pacer), the start being the latest one that no hit
# left before. vegeta's own latency (from the send) is printed beside it.
# Achieved rate, both: calls / (last call's end - first call's intended start).
#
# Every ratio (the goals block and the closed-loop summary) is paired by round:
# both tools of a pair run back to back in each round, so the machine's slow drift
# is shared by both and cancels in the round's ratio. `rpcbed ratio` prints the
# median of the rounds' ratios with its 95 % interval, a t interval on the rounds'
# log ratios at ROUNDS-1 degrees of freedom (internal/stats, PairedRounds;
# docs/method.md, section 11), and a verdict: a goal is met when the whole
# interval lies on its better side, NOT met when the whole interval lies on the
# worse side, "indistinguishable from" it when the interval holds it. Rounds are
# short and many because the half-width goes with t(n-1) sqrt(f(n) / n) times a
# round's noise (f: the median's variance factor): t is 4.30 at 2 degrees of
# freedom, 2.57 at 5, so 6 rounds of 5 s give 0.41 of the half-width of 3 rounds
# of 10 s, in the same time, unless halving a round raises its ratio's noise
# 2.4-fold. The tables keep the figures pooled over the rounds (all requests /
# all seconds, all CPU / all requests).
#
# Environment: C (default 50), DUR seconds per tool in a closed-loop round
# (default 5), ROUNDS closed-loop rounds (default 6; the tools alternate within a
# round, in an order that alternates by round), OPEN_DUR seconds per tool in an
# open-loop round (default 10: a round's achieved rate is judged within 1 % of
# the target, and the lag of its last calls weighs twice as much in a round half
# as long), OPEN_ROUNDS open-loop rounds per rate (default 4, even: the order
# alternates there too), GRPC_CONNS (default 1), BIN (default bin), RATES (default
# "5000 20000 max"; "max" is the highest rate vegeta holds within 1 % with no
# failure, tried from 2500/s up in 3 s attacks, twice at most per rate), OPEN
# (default 1; 0 skips the open loop), CLOSED (default 1; 0 skips the closed loop),
# TLS (default 1; 0 skips the closed loop over TLS: ROUNDS rounds of DUR s too),
# KEEP (a directory: keep every round's figures there), FROM (a directory KEEP
# filled: print the tables and goals again from its rounds, measuring nothing).
#
# On a machine shared with other work, requests/s swing with the load of the
# moment; the paired intervals say how much of it a ratio carries, and CPU per
# request is the steadier figure. The last block, "goals", prints each of issue
# 29's goals with its ratio, interval and verdict.
# Run time with the defaults: about 9 minutes (closed loop 4 x 6 x 5 s, the same
# over TLS, vegeta's 3 s trials, open loop 3 rates x 4 rounds x 2 tools x 10 s:
# 6 min 52 s without TLS on 2026-12-02; the TLS block adds 4 x 6 x 5 s and start-up).
set -euo pipefail
cd "$(dirname "$0")/.."

C=${C:-50}
DUR=${DUR:-5}
ROUNDS=${ROUNDS:-6}
OPEN_DUR=${OPEN_DUR:-10}
OPEN_ROUNDS=${OPEN_ROUNDS:-4}
GRPC_CONNS=${GRPC_CONNS:-1}
BIN=${BIN:-bin}
RATES=${RATES:-5000 20000 max}
OPEN=${OPEN:-1}
CLOSED=${CLOSED:-1}
TLS=${TLS:-1}
KEEP=${KEEP:-}
FROM=${FROM:-}

tools=("$BIN/go-server" "$BIN/go-client" "$BIN/ghz" "$BIN/vegeta" "$BIN/rpcbed" wrk /usr/bin/time)
[[ -n $FROM ]] && tools=("$BIN/rpcbed") # nothing is measured
for tool in "${tools[@]}"; do
	if ! command -v "$tool" >/dev/null; then
		echo "bench-loadgen: $tool is missing (make bench-loadgen builds and installs what it needs)" >&2
		exit 1
	fi
done

tmp=$(mktemp -d)
server_pid=
tls_pid=
cleanup() {
	local pid
	for pid in $server_pid $tls_pid; do
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$tmp"
}
trap cleanup EXIT

# Every round's figures go to $rounds, one file a tool and round: the tables and
# the ratios are computed from these files alone (FROM reads them again).
rounds=$tmp/rounds
if [[ -n $FROM ]]; then
	rounds=$FROM
	if [[ ! -s $rounds/params ]]; then
		echo "bench-loadgen: FROM=$FROM holds no kept run (no params file; KEEP=DIR keeps one)" >&2
		exit 1
	fi
	read -r C DUR OPEN_DUR <"$rounds/params"
elif [[ -n $KEEP ]]; then
	rounds=$KEEP
	if [[ -e $rounds/params ]]; then
		echo "bench-loadgen: KEEP=$KEEP already holds a run; name a new directory" >&2
		exit 1
	fi
fi
mkdir -p "$rounds"

# ---- the ratios: paired by round, with their intervals (rpcbed ratio) ------------

# value FIELD FILE: one round's figure from a round file: rps (requests/s), cpu
# (client CPU seconds per request), server (the server's), ocpu (an open-loop
# round's client CPU per request); 0 when the round has no requests.
value() {
	awk -v f="$1" '{
		d = (f == "rps") ? $2 : $1
		n = (f == "rps") ? $1 : (f == "cpu") ? $3 : (f == "server") ? $4 : $9
		printf "%.9g\n", (d > 0) ? n / d : 0
	}' "$2"
}

# pairs A B FIELD: "A's figure B's figure" for every round both have, in order.
pairs() {
	local r=1
	while [[ -e $rounds/$1.$r && -e $rounds/$2.$r ]]; do
		echo "$(value "$3" "$rounds/$1.$r") $(value "$3" "$rounds/$2.$r")"
		r=$((r + 1))
	done
}

# ratio WIDTH LABEL BETTER GOAL A B FIELD: one line, A/B over the paired rounds
# with its 95 % interval and verdict (GOAL 0: against 1). A failure is said on the
# line (and why on stderr); it never stops the run.
ratio() {
	local width=$1 label=$2 better=$3 goal=$4
	shift 4
	pairs "$@" | "$BIN/rpcbed" ratio -width "$width" -label "$label" -better "$better" -goal "$goal" ||
		echo "$label: no ratio (rpcbed ratio failed: stderr says why)"
}

# ---- closed loop ------------------------------------------------------------------
# Sum the rounds: requests/s = all requests / all seconds; CPU per request
# likewise (the client's and the server's); busy: the share of both cores' time
# that was not idle while the tool ran; p50: the median of the rounds' p50s.
# row P TOOL PROTO: TOOL's row of the block whose round files start with P ("" or
# tls-), named TOOL.
row() {
	cat "$rounds/$1$2".[0-9]* | awk -v name="$2" -v proto="$3" '
		{ r += $1; s += $2; cpu += $3; scpu += $4; b += $5; t += $6; p[NR] = $7 }
		END {
			for (i = 2; i <= NR; i++) { x = p[i]; for (j = i - 1; j > 0 && p[j] + 0 > x + 0; j--) p[j + 1] = p[j]; p[j + 1] = x }
			printf "%-16s %-6s %12.0f %14.1f %16.1f %10.3f %8s\n", name, proto, r / s, cpu * 1e6 / r, scpu * 1e6 / r, b / t, p[int((NR + 1) / 2)]
		}'
}
# closed_summary P: the closed-loop block whose round files start with P: ""
# (plaintext) or tls- (the same tools and goals over TLS).
closed_summary() {
	local p=$1 on=""
	if [[ -n $p ]]; then
		on=", TLS"
		echo
		echo "== closed loop over TLS, c=$C: go-client -security tls (-check length) vs ghz --cacert (gRPC) and wrk https (HTTP), one TLS 1.3 go-server"
	else
		echo "== closed loop, c=$C: go-client (-check length) vs ghz (gRPC) and wrk (HTTP)"
	fi
	{
		printf "%-16s %-6s %12s %14s %16s %10s %8s\n" tool proto "requests/s" "cpu_us/req" "server_us/req" "busy" "p50_us"
		row "$p" ghz grpc
		row "$p" go-client-grpc grpc
		row "$p" wrk http
		row "$p" go-client-http http
	} >"$tmp/table"
	cat "$tmp/table"
	echo
	{
		ratio 51 "goal go-client/ghz requests/s (gRPC$on)" higher 1.3 "${p}go-client-grpc" "${p}ghz" rps
		ratio 51 "     go-client/ghz cpu/request (gRPC$on)" lower 0 "${p}go-client-grpc" "${p}ghz" cpu
		ratio 51 "goal go-client/wrk requests/s (HTTP$on)" higher 1.0 "${p}go-client-http" "${p}wrk" rps
		ratio 51 "goal go-client/wrk cpu/request (HTTP$on)" lower 1.0 "${p}go-client-http" "${p}wrk" cpu
		ratio 51 "     server cpu/request under go-client/wrk (HTTP$on)" lower 0 "${p}go-client-http" "${p}wrk" server
		awk '{ srv[$1] = $5; busy[$1] = $6 }
			END { printf "     (pooled: the server %.1f against %.1f us/request; both cores busy %.3f against %.3f)\n", srv["go-client-http"], srv["wrk"], busy["go-client-http"], busy["wrk"] }' <(tail -n +2 "$tmp/table")
	} | tee -a "$tmp/goals"
}

# ---- open loop --------------------------------------------------------------------
open_summary() {
	echo
	echo "== open loop, HTTP DataType: go-client -rate R (-c $C, -check length) vs vegeta attack -rate R"
	[[ -s $rounds/vegeta-max ]] && cat "$rounds/vegeta-max"
	local rate tool
	for rate in $(cat "$rounds/rates"); do
		for tool in vegeta go-client; do
			# Rounds summed: achieved = all calls / all seconds, CPU = all CPU / all
			# calls; latency: the median over rounds of each percentile; held: the
			# rounds whose achieved rate was within 1 % of the target.
			cat "$rounds/open-$tool-$rate".[0-9]* | awk -v t="$tool" -v r="$rate" '
				function med(v, k,   i, j, x) { # insertion sort of v[1..k], then its median
					for (i = 2; i <= k; i++) { x = v[i]; for (j = i - 1; j > 0 && v[j] + 0 > x + 0; j--) v[j + 1] = v[j]; v[j + 1] = x }
					return v[int((k + 1) / 2)]
				}
				{ n += $1; f += $2; s += $3; cpu += $9; p50[NR] = $5; p99[NR] = $6; s50[NR] = $7; s99[NR] = $8
				  if ($4 >= 0.99 * r && $4 <= 1.01 * r) held++ }
				END { printf "%-9d %-10s %10.1f %+8.2f%% %9d %10.1f %9s %9s %12s %12s %7s\n", r, t, n / s, (n / s / r - 1) * 100, f, cpu * 1e6 / n, med(p50, NR), med(p99, NR), med(s50, NR), med(s99, NR), held + 0 "/" NR }'
		done
	done >"$tmp/open"
	printf "%-9s %-10s %10s %9s %9s %10s %9s %9s %12s %12s %7s\n" target tool achieved/s vs_target failed cpu_us/req p50_us p99_us p50_sent_us p99_sent_us held
	cat "$tmp/open"
	echo
	for rate in $(cat "$rounds/rates"); do
		awk -v rate="$rate" '
			$1 == rate { a[$2] = $3; h[$2] = $11 }
			END {
				r = rate; g = a["go-client"]; v = a["vegeta"]; split(h["go-client"], hg, "/")
				held = (g >= 0.99 * r && g <= 1.01 * r && hg[1] == hg[2]) ? "met" : "NOT met"
				if (v < 0.99 * r) held = held " (not a goal rate: vegeta did not hold it)"
				printf "goal open loop %d/s: go-client within 1 %% of the target: %+.2f%% (rounds held %s): %s; vegeta %+.2f%% (rounds held %s)\n", r, (g / r - 1) * 100, h["go-client"], held, (v / r - 1) * 100, h["vegeta"]
			}' "$tmp/open"
		ratio 0 "goal open loop $rate/s: cpu/request go-client/vegeta" lower 1.0 "open-go-client-$rate" "open-vegeta-$rate" ocpu
	done | tee -a "$tmp/goals"
	cat <<'DEFS'

latency definitions (open loop, both tools; docs/loadgen.md):
  p50/p99       a call's end minus its intended start: the time it was due on the
                tool's schedule, whatever delayed its sending (coordinated omission
                corrected, as wrk2). go-client: each connection's calls are due every
                c/R s, staggered by 1/R. vegeta: hit seq is due at the attack's start
                plus (seq+1)/R; the start is the latest one no hit left before
                (rpcbed vegeta).
  p50/p99_sent  vegeta's own: a hit's end minus when a worker began it (leaves out
                the wait for a free worker).
  achieved/s    calls / (the last call's end - the first call's intended start).
DEFS
}

goals() {
	if [[ -s $tmp/goals ]]; then
		echo
		echo "== goals, measured side by side in this run"
		cat "$tmp/goals"
	fi
}

if [[ -n $FROM ]]; then
	# The tables and the goals again, from a kept run's rounds.
	[[ -e $rounds/ghz.1 ]] && closed_summary ""
	[[ -e $rounds/tls-ghz.1 ]] && closed_summary tls-
	[[ -s $rounds/rates ]] && open_summary
	goals
	exit 0
fi
echo "$C $DUR $OPEN_DUR" >"$rounds/params"
: >"$rounds/rates"

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
echo "bench-loadgen: go-server grpc=$grpc_addr http=$http_addr; c=$C, closed loop ${DUR}s per tool x $ROUNDS round(s), open loop ${OPEN_DUR}s x $OPEN_ROUNDS, $(nproc) cores" >&2
echo "load average before: $(cat /proc/loadavg)"

datatype_path='/v1/datatype?groupName=USER_EVENT&enName=app_call_connect_success'

# Every HTTP tool sends go-client's request head: Host, User-Agent, X-Client-Id and
# X-Token. go-client carries the token of each answer into its next call; wrk and
# vegeta send one the server issued (go-server runs -auth=false: it reads the token
# and does not verify it). With wrk's own head (Host, X-Client-Id: wrk) go-server
# ran 68300-70300 instructions per request under callgrind, with go-client's
# 74700-75900 (docs/loadgen.md): on a machine where the server is the bottleneck,
# a head of its own would give wrk 9 % of the server for free.
client_id=rpcbed-go-client # go-client's default -client-id
host=${http_addr%:*}
exec 3<>"/dev/tcp/$host/${http_addr##*:}"
printf 'GET %s HTTP/1.0\r\nHost: %s\r\nX-Client-Id: %s\r\n\r\n' "$datatype_path" "$http_addr" "$client_id" >&3
token=$(tr -d '\r' <&3 | sed -n 's/^X-Token: //p' | head -1)
exec 3<&-
if [[ -z $token ]]; then
	echo "bench-loadgen: go-server gave no X-Token" >&2
	exit 1
fi
head_args=(-H "User-Agent: rpcbed-go-client" -H "X-Client-Id: $client_id" -H "X-Token: $token")

# The server's CPU (user+sys ticks of its process) and the machine's busy and
# total ticks (/proc/stat), read before and after each closed-loop tool: how
# much of the server each tool got, and how much of both cores sat idle.
clk_tck=$(getconf CLK_TCK)
# srv_pid: the server the tools of the moment load (the TLS block's its own).
srv_pid=$server_pid
server_ticks() { awk '{print $14 + $15}' "/proc/$srv_pid/stat"; }
machine_ticks() { awk '/^cpu / {t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6, t}' /proc/stat; }

# measure NAME CMD...: runs CMD under /usr/bin/time; leaves "requests seconds cpu
# server_cpu busy_ticks total_ticks p50_us" in $rounds/NAME.<round>.
measure() {
	local name=$1 round=$2
	shift 2
	echo "bench-loadgen: $name: $*" >&2
	local s0 m0 s1 m1
	s0=$(server_ticks)
	m0=$(machine_ticks)
	/usr/bin/time -f '%U %S' -o "$tmp/time" "$@" >"$tmp/out" 2>"$tmp/err" || {
		echo "bench-loadgen: $name failed:" >&2
		cat "$tmp/err" "$tmp/out" >&2
		exit 1
	}
	s1=$(server_ticks)
	m1=$(machine_ticks)
	local reqs secs p50
	case ${name#tls-} in
	ghz)
		reqs=$(awk '/^  Count:/ {print $2}' "$tmp/out")
		secs=$(awk '/^  Total:/ {v=$2; u=$3; if (u=="ms") v/=1000; else if (u=="m") v*=60; print v}' "$tmp/out")
		p50=$(awk '/^ *50 % in/ {v=$4; u=$5; if (u=="ms") v*=1000; else if (u=="s") v*=1e6; print v}' "$tmp/out")
		local ok
		ok=$(awk '/\[OK\]/ {gsub(/[^0-9]/, "", $2); print $2}' "$tmp/out")
		[[ $ok == "$reqs" ]] || echo "bench-loadgen: ghz: only $ok of $reqs calls OK" >&2
		;;
	wrk)
		reqs=$(awk '/requests in/ {print $1}' "$tmp/out")
		secs=$(awk '/requests in/ {v=$4; sub(/,$/, "", v); if (v ~ /ms$/) {sub(/ms$/, "", v); v/=1000} else if (v ~ /m$/) {sub(/m$/, "", v); v*=60} else sub(/s$/, "", v); print v}' "$tmp/out")
		p50=$(awk '/^ +50% / {v=$2; if (v ~ /us$/) {sub(/us$/, "", v)} else if (v ~ /ms$/) {sub(/ms$/, "", v); v*=1000} else if (v ~ /s$/) {sub(/s$/, "", v); v*=1e6}; print v}' "$tmp/out")
		grep -q 'Non-2xx\|Socket errors' "$tmp/out" && echo "bench-loadgen: wrk: $(grep 'Non-2xx\|Socket errors' "$tmp/out")" >&2
		;;
	go-client-*)
		reqs=$(awk '/^Complete requests:/ {print $3}' "$tmp/out")
		secs=$(awk '/^Time taken for tests:/ {print $5}' "$tmp/out")
		p50=$(awk '/^Latency p50:/ {print $3}' "$tmp/out")
		grep -q '^Failed requests: *0$' "$tmp/out" || echo "bench-loadgen: $name: $(grep '^Failed requests' "$tmp/out")" >&2
		# How evenly go-server served the connections (go-client's log): the
		# reason a p50 can lie far below the mean (docs/loadgen.md).
		sed -n 's/^go-client: \(measured calls per caller: .*\)/bench-loadgen: '"$name"': \1/p' "$tmp/err" >&2
		# Over TLS: what it negotiated and its handshakes in the window (the report's).
		sed -n 's/^\(TLS[^:]*:\) */bench-loadgen: '"$name"': \1 /p' "$tmp/out" >&2
		;;
	esac
	read -r user sys <"$tmp/time"
	read -r b0 t0 <<<"$m0"
	read -r b1 t1 <<<"$m1"
	local server_secs
	server_secs=$(awk -v a="$s0" -v b="$s1" -v k="$clk_tck" 'BEGIN {print (b - a) / k}')
	echo "$reqs $secs $(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}') $server_secs $((b1 - b0)) $((t1 - t0)) ${p50:-0}" >"$rounds/$name.$round"
	awk -v n="$name" -v r="$reqs" -v s="$secs" -v u="$user" -v y="$sys" -v sc="$server_secs" -v busy="$(awk -v a=$((b1 - b0)) -v b=$((t1 - t0)) 'BEGIN {print a / b}')" -v p="${p50:-0}" \
		'BEGIN {printf "bench-loadgen: %s: %d requests in %.2fs: %.0f/s, %.1f us CPU/request, server %.1f us/request, both cores busy %.3f, p50 %s us (load average %s)\n", n, r, s, r / s, (u + y) * 1e6 / r, sc * 1e6 / r, busy, p, ARGV[1]}' \
		"$(cut -d' ' -f1 /proc/loadavg)" >&2
}

if [[ $CLOSED == 1 ]]; then
run_ghz() {
	measure ghz "$1" "$BIN/ghz" --insecure --proto idl/data.proto --call rpcbed.data.Data/DataType \
		-d '{"auth":{"client_id":"ghz"},"group_name":"USER_EVENT","en_name":"app_call_connect_success"}' \
		-c "$C" --connections "$GRPC_CONNS" -z "${DUR}s" "$grpc_addr"
}
run_go_client_grpc() { measure go-client-grpc "$1" "$BIN/go-client" -proto grpc -call datatype -check length -c "$C" -conns "$GRPC_CONNS" -t "$DUR" -addr "$grpc_addr"; }
run_wrk() { measure wrk "$1" wrk -t "$(nproc)" -c "$C" --latency -d "${DUR}s" "${head_args[@]}" "http://$http_addr$datatype_path"; }
run_go_client_http() { measure go-client-http "$1" "$BIN/go-client" -proto http -call datatype -check length -c "$C" -k -t "$DUR" -addr "$http_addr"; }
# The order within each pair alternates by round: odd rounds run the other tool
# first, even rounds go-client, so that whatever running first or second does
# to a tool (the server's state, the machine's drift within a round) weighs on
# both alike over an even number of rounds.
for round in $(seq "$ROUNDS"); do
	if ((round % 2)); then
		run_ghz "$round"
		run_go_client_grpc "$round"
		run_wrk "$round"
		run_go_client_http "$round"
	else
		run_go_client_grpc "$round"
		run_ghz "$round"
		run_go_client_http "$round"
		run_wrk "$round"
	fi
done
	closed_summary ""
fi

# ---- closed loop over TLS: the same tools against one TLS go-server ----------------
# A second go-server serves TLS 1.3 only on both listeners (gRPC with ALPN h2,
# HTTP/1.1 with http/1.1), from a throwaway CA (rpcbed certs). Connections are
# kept, as in the plaintext block, so a handshake is paid once per connection
# before timing: the figures are TLS's record cost per call. ghz verifies the
# server against the CA (--cacert); wrk speaks https (it verifies nothing);
# go-client -security tls -cacert verifies and prints what it negotiated
# (stderr's log below). The server's CPU is this server's.
if [[ $TLS == 1 ]]; then
	"$BIN/rpcbed" certs "$tmp/certs" >/dev/null
	"$BIN/go-server" -auth=false -grpc 127.0.0.1:0 -http 127.0.0.1:0 -thrift '' \
		-tls-cert "$tmp/certs/server.pem" -tls-key "$tmp/certs/server-key.pem" 2>"$tmp/tls-server.log" &
	tls_pid=$!
	for _ in $(seq 100); do
		grep -q 'listening proto=http' "$tmp/tls-server.log" 2>/dev/null && break
		sleep 0.1
	done
	tls_grpc=$(sed -n 's/.*listening proto=grpc addr=\([^ ]*\).*/\1/p' "$tmp/tls-server.log")
	tls_http=$(sed -n 's/.*listening proto=http addr=\([^ ]*\).*/\1/p' "$tmp/tls-server.log")
	if [[ -z $tls_grpc || -z $tls_http ]]; then
		echo "bench-loadgen: the TLS go-server did not start:" >&2
		cat "$tmp/tls-server.log" >&2
		exit 1
	fi
	echo "bench-loadgen: TLS go-server grpc=$tls_grpc http=$tls_http: $(sed -n 's/.*\(tls: .*\)/\1/p' "$tmp/tls-server.log")" >&2
	srv_pid=$tls_pid
	ca=$tmp/certs/ca.pem
	tls_ghz() {
		measure tls-ghz "$1" "$BIN/ghz" --cacert "$ca" --proto idl/data.proto --call rpcbed.data.Data/DataType \
			-d '{"auth":{"client_id":"ghz"},"group_name":"USER_EVENT","en_name":"app_call_connect_success"}' \
			-c "$C" --connections "$GRPC_CONNS" -z "${DUR}s" "$tls_grpc"
	}
	tls_go_client_grpc() { measure tls-go-client-grpc "$1" "$BIN/go-client" -proto grpc -call datatype -check length -security tls -cacert "$ca" -c "$C" -conns "$GRPC_CONNS" -t "$DUR" -addr "$tls_grpc"; }
	tls_wrk() { measure tls-wrk "$1" wrk -t "$(nproc)" -c "$C" --latency -d "${DUR}s" "${head_args[@]}" "https://$tls_http$datatype_path"; }
	tls_go_client_http() { measure tls-go-client-http "$1" "$BIN/go-client" -proto http -call datatype -check length -security tls -cacert "$ca" -c "$C" -k -t "$DUR" -addr "$tls_http"; }
	for round in $(seq "$ROUNDS"); do
		if ((round % 2)); then
			tls_ghz "$round"
			tls_go_client_grpc "$round"
			tls_wrk "$round"
			tls_go_client_http "$round"
		else
			tls_go_client_grpc "$round"
			tls_ghz "$round"
			tls_go_client_http "$round"
			tls_wrk "$round"
		fi
	done
	kill "$tls_pid" 2>/dev/null || true
	wait "$tls_pid" 2>/dev/null || true
	tls_pid=
	srv_pid=$server_pid
	closed_summary tls-
fi

printf 'GET http://%s%s\nUser-Agent: rpcbed-go-client\nX-Client-Id: %s\nX-Token: %s\n' "$http_addr" "$datatype_path" "$client_id" "$token" >"$tmp/targets"

# ---- open loop: go-client -rate vs vegeta attack -rate (HTTP) --------------------
# vegeta_run R SECS OUT: one attack at R/s with C workers on at most C connections,
# as go-client -c C (with its defaults, workers added as calls queue and no cap on
# connections, vegeta held neither 5000/s nor 10000/s on the shared build machine:
# 473/s and 299/s in 3 s attacks, docs/loadgen.md); leaves "requests failed seconds
# achieved p50 p99 p50_sent p99_sent cpu_seconds" in OUT.
vegeta_run() {
	local rate=$1 secs=$2 out=$3
	/usr/bin/time -f '%U %S' -o "$tmp/time" "$BIN/vegeta" attack -targets "$tmp/targets" -rate "$rate/1s" \
		-duration "${secs}s" -workers "$C" -max-workers "$C" -max-connections "$C" -max-body 0 -output "$tmp/vegeta.bin" 2>"$tmp/err" || {
		echo "bench-loadgen: vegeta failed:" >&2
		cat "$tmp/err" >&2
		exit 1
	}
	local user sys
	read -r user sys <"$tmp/time"
	echo "$("$BIN/vegeta" encode -to csv "$tmp/vegeta.bin" | "$BIN/rpcbed" vegeta -rate "$rate") $(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')" >"$out"
}

# goclient_run R SECS OUT: the same line for go-client -rate R (p50/p99_sent: -).
goclient_run() {
	local rate=$1 secs=$2 out=$3
	/usr/bin/time -f '%U %S' -o "$tmp/time" "$BIN/go-client" -proto http -call datatype -check length -c "$C" -k \
		-rate "$rate" -t "$secs" -addr "$http_addr" >"$tmp/out" 2>"$tmp/err" || {
		echo "bench-loadgen: go-client failed:" >&2
		cat "$tmp/err" "$tmp/out" >&2
		exit 1
	}
	local user sys
	read -r user sys <"$tmp/time"
	awk -v u="$user" -v s="$sys" '
		/^Complete requests:/ {n = $3} /^Failed requests:/ {f = $3} /^Time taken for tests:/ {t = $5}
		/^Latency p50:/ {p50 = $3} /^Latency p99:/ {p99 = $3}
		END {printf "%d %d %.6f %.1f %d %d - - %s\n", n, f, t, n / t, p50, p99, u + s}' "$tmp/out" >"$out"
}

if [[ $OPEN == 1 ]]; then
echo "bench-loadgen: open loop: vegeta's highest rate, then ${OPEN_ROUNDS} rounds per rate" >&2
# The highest rate vegeta holds within 1 %: 3 s trial attacks from 2500/s up.
max=0
if [[ " $RATES " == *" max "* ]]; then
	for r in 2500 5000 7500 10000 12500 15000 20000 25000 30000 40000 50000 60000; do
		ok=0
		for try in 1 2; do # a second try: one stall of a shared machine is not vegeta's limit
			vegeta_run "$r" 3 "$tmp/trial"
			read -r _ failed _ achieved _ <"$tmp/trial"
			ok=$(awk -v a="$achieved" -v r="$r" -v f="$failed" 'BEGIN {print (a >= 0.99 * r && f == 0) ? 1 : 0}')
			echo "bench-loadgen: vegeta trial $try at $r/s: achieved $achieved/s, $failed failed$([[ $ok == 1 ]] || echo ': not held')" >&2
			[[ $ok == 1 ]] && break
		done
		[[ $ok == 1 ]] || break
		max=$r
	done
	echo "highest rate vegeta held in 3 s trials: $max/s" >"$rounds/vegeta-max"
fi
rates=()
for r in $RATES; do
	[[ $r == max ]] && r=$max
	[[ $r -gt 0 && " ${rates[*]} " != *" $r "* ]] && rates+=("$r")
done
echo "${rates[*]}" >"$rounds/rates"
for rate in "${rates[@]}"; do
	for round in $(seq "$OPEN_ROUNDS"); do
		if ((round % 2)); then # the order alternates, as in the closed loop
			vegeta_run "$rate" "$OPEN_DUR" "$rounds/open-vegeta-$rate.$round"
			goclient_run "$rate" "$OPEN_DUR" "$rounds/open-go-client-$rate.$round"
		else
			goclient_run "$rate" "$OPEN_DUR" "$rounds/open-go-client-$rate.$round"
			vegeta_run "$rate" "$OPEN_DUR" "$rounds/open-vegeta-$rate.$round"
		fi
		for tool in vegeta go-client; do
			awk -v t="$tool" -v r="$rate" -v rd="$round" -v l="$(cut -d' ' -f1 /proc/loadavg)" '{printf "bench-loadgen: open %s %d/s round %d: %.1f/s, %.1f us CPU/request, p50 %d us, p99 %d us (load average %s)\n", t, r, rd, $4, $9 * 1e6 / $1, $5, $6, l}' "$rounds/open-$tool-$rate.$round" >&2
		done
	done
done
open_summary
fi
goals
echo "load average after: $(cat /proc/loadavg)"

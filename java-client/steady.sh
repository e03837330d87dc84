#!/usr/bin/env bash
# Java at steady state (issue 11's goal): java-grpc-datalist-2-c1 against
# go-grpc-datalist-2-c1 in the same run, both against one go-server. The Java client
# runs as one long-lived worker (java-client worker), so its JIT stays warm from run
# to run, as the driver runs it; go-client runs one-shot (Go has no JIT). Rounds
# alternate go, java, so drift of a shared machine hits both. Prints every run's
# req/s, then the medians and their ratio java/go (the goal: 0.4 or more).
# usage: [ROUNDS=5] [T=3s] [WARMUP_MAX=10s] [CALL=datalist] [ITEMS=2] [C=1]
#        java-client/steady.sh        (from the repository root or java-client/)
# Needs bin/go-server, bin/go-client (make build) and the jar (make setup-java).
# Every run is bounded by -t; the processes it starts are stopped by their PID.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-5}
T=${T:-3s}
WARMUP_MAX=${WARMUP_MAX:-10s}
CALL=${CALL:-datalist}
ITEMS=${ITEMS:-2}
C=${C:-1}
JAR=java-client/target/java-client.jar
tmp=$(mktemp -d)
spid=""
wpid=""
cleanup() {
  [ -n "$wpid" ] && kill "$wpid" 2>/dev/null || true
  [ -n "$spid" ] && kill "$spid" 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT

bin/go-server -grpc 127.0.0.1:0 -thrift "" -http 127.0.0.1:0 2>"$tmp/server.err" &
spid=$!
for _ in $(seq 1 100); do grep -q 'proto=grpc' "$tmp/server.err" && break; sleep 0.1; done
addr=$(sed -n 's/.*listening proto=grpc addr=//p' "$tmp/server.err")
[ -n "$addr" ] || { echo "go-server did not start:"; cat "$tmp/server.err"; exit 1; }

coproc JW { exec java -jar "$JAR" worker 2>"$tmp/worker.err"; }
wpid=$JW_PID
read -r -t 90 ready <&"${JW[0]}"
case "$ready" in "#rpcbed-worker ready java "*) ;; *) echo "no worker: $ready"; exit 1;; esac

args=(-proto grpc -call "$CALL" -items "$ITEMS" -c "$C" -t "$T" -warmup auto -warmup-max "$WARMUP_MAX" -addr "$addr")
rps() { sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p'; }
settled() { sed -n 's/^Warm-up settled: *//p'; }
warm() { sed -n 's/^Warm-up: *\([0-9.]*\) seconds.*/\1/p'; }
go_rps=()
java_rps=()
printf '%-6s %-6s %10s %8s %8s\n' round client req_s warmup settled
for r in $(seq 1 "$ROUNDS"); do
  bin/go-client "${args[@]}" >"$tmp/go.txt" 2>>"$tmp/go.err" || true
  go_rps+=("$(rps <"$tmp/go.txt")")
  printf '%-6s %-6s %10s %8s %8s\n' "$r" go "${go_rps[-1]:-fail}" "$(warm <"$tmp/go.txt")" "$(settled <"$tmp/go.txt")"
  cmd=$(IFS=$'\t'; printf 'run\tj%s\t%s' "$r" "${args[*]}")
  printf '%s\n' "$cmd" >&"${JW[1]}"
  : >"$tmp/java.txt"
  while IFS= read -r -t 120 line <&"${JW[0]}"; do
    case "$line" in "#rpcbed-worker done j$r exit="*) break;; esac
    printf '%s\n' "$line" >>"$tmp/java.txt"
  done
  java_rps+=("$(rps <"$tmp/java.txt")")
  printf '%-6s %-6s %10s %8s %8s\n' "$r" java "${java_rps[-1]:-fail}" "$(warm <"$tmp/java.txt")" "$(settled <"$tmp/java.txt")"
done
median() { printf '%s\n' "$@" | grep -v '^$' | sort -g | awk '{a[NR]=$1} END{if (NR == 0) print 0; else if (NR % 2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
mg=$(median "${go_rps[@]}")
mj=$(median "${java_rps[@]}")
# The first Java run pays the JIT's compilation inside its warm-up; later ones start warm.
mjw=$(median "${java_rps[@]:1}")
awk -v g="$mg" -v j="$mj" -v w="$mjw" -v n="$ROUNDS" 'BEGIN{
  printf "median req/s over %d rounds: go %.1f, java %.1f (java without its first run %.1f)\n", n, g, j, w
  if (g > 0) printf "ratio java/go: %.2f (without the first Java run %.2f; goal >= 0.40)\n", j / g, w / g }'
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores (a shared machine: ratios only)"

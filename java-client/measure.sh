#!/usr/bin/env bash
# Java baseline servers on 127.0.0.1, one protocol at a time, called by the Java client
# (or by go-client): prints requests per second per protocol and concurrency (the
# java-rpc-2015 shape).
# usage: [WARMUP=20] [JAR=...] [PROTOS="ice thrift grpc dubbo http"] [CLIENT=java|PATH]
#        java-client/measure.sh [CALL] [N_C1] [N_C20]
#   defaults: datatype 5000 40000; WARMUP=20 seconds of JIT warm-up, excluded (on this
#   loaded machine C2 still compiled grpc-java's call path 15-23 s into a run).
#   CLIENT=PATH runs that client binary (e.g. bin/go-client; grpc, thrift, http only)
#   against the jar's servers instead of the jar's own client.
# Every run is bounded by -n and by -t 30s; servers are stopped by their PID.
set -euo pipefail
cd "$(dirname "$0")"
JAR=${JAR:-target/java-client.jar}
CLIENT=${CLIENT:-java}
CALL=${1:-datatype}
N1=${2:-5000}
N20=${3:-40000}
WARMUP=${WARMUP:-20}
PROTOS=${PROTOS:-ice thrift grpc dubbo http}
ITEMS=()
[ "$CALL" = datalist ] && ITEMS=(-items 200)
client=(java -jar "$JAR")
[ "$CLIENT" != java ] && client=("$CLIENT")
tmp=$(mktemp -d)
printf '%-8s %-10s %6s %10s %10s %10s %8s\n' proto call c tps p50_us p99_us cpu_us
for proto in $PROTOS; do
  java -jar "$JAR" serve -proto "$proto" -port 0 2>"$tmp/server.err" &
  spid=$!
  for _ in $(seq 1 120); do grep -q listening "$tmp/server.err" && break; sleep 0.5; done
  addr=$(sed -n 's/.*listening proto=[a-z]* addr=//p' "$tmp/server.err")
  for c in 1 20; do
    n=$N1; [ "$c" = 20 ] && n=$N20
    "${client[@]}" -proto "$proto" -call "$CALL" "${ITEMS[@]}" -c "$c" -n "$n" -t 30 -warmup "${WARMUP}s" \
      -addr "$addr" >"$tmp/report.txt" 2>"$tmp/client.err" || true
    tps=$(sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' "$tmp/report.txt")
    p50=$(sed -n 's/^Latency p50: *\([0-9]*\).*/\1/p' "$tmp/report.txt")
    p99=$(sed -n 's/^Latency p99: *\([0-9]*\).*/\1/p' "$tmp/report.txt")
    # client CPU (user + system) per completed call, in microseconds
    cpu=$(awk '/^Complete requests:/{n=$3} /^Client CPU user:/{u=$4} /^Client CPU system:/{s=$4}
      END{if (n > 0) printf "%d", (u + s) * 1e6 / n}' "$tmp/report.txt")
    printf '%-8s %-10s %6s %10s %10s %10s %8s\n' "$proto" "$CALL" "$c" "${tps:-fail}" "${p50:--}" "${p99:--}" "${cpu:--}"
  done
  kill "$spid"; wait "$spid" 2>/dev/null || true
done
rm -rf "$tmp"

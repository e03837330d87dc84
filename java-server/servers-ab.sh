#!/usr/bin/env bash
# Two builds of the Java baseline servers side by side (run A vs run B in one run): for
# each protocol, A's and B's server run at once on 127.0.0.1 and one Java client worker
# (worker mode: its JIT stays warm) calls each cell on both, in a fresh random order
# every round. Prints every run, then per cell B/A paired by round with its 95 %
# interval and verdict (rpcbed ratio): req/s and the server's CPU per call.
# usage: [ROUNDS=8] [T=3s] [WARMUP=1s] [CELLS="thrift:datatype:0:1 ..."] [CLIENT_JAR=...]
#        java-server/servers-ab.sh A.jar B.jar [OUTDIR]
#        make bench-java-servers A=OLD.jar [B=java-client/target/java-client.jar]
#   a cell is proto:call:items:c (c connections, one per worker thread). Round 0 primes
#   both servers and the client and is not counted. Every run is bounded by -t; the
#   servers are stopped by their PID on every exit path.
set -euo pipefail
cd "$(dirname "$0")"
A=$(realpath "$1")
B=$(realpath "$2")
OUT=${3:-$(mktemp -d /tmp/servers-ab.XXXXXX)}
mkdir -p "$OUT/rounds"
ROUNDS=${ROUNDS:-8}
T=${T:-3s}
WARMUP=${WARMUP:-1s}
CLIENT_JAR=${CLIENT_JAR:-../java-client/target/java-client.jar}
RPCBED=${RPCBED:-../bin/rpcbed}
[ -x "$RPCBED" ] || { echo "servers-ab: $RPCBED is missing (make build)" >&2; exit 1; }
CELLS=${CELLS:-"thrift:datatype:0:1 thrift:datatype:0:20 thrift:datalist:200:20 dubbo:datatype:0:1 dubbo:datatype:0:20 dubbo:datalist:200:20"}
TICK=$(getconf CLK_TCK)

pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT

declare -A addr spid
protos=$(for c in $CELLS; do echo "${c%%:*}"; done | sort -u)
for proto in $protos; do
  for side in A B; do
    jar=$A; [ "$side" = B ] && jar=$B
    java -jar "$jar" serve -proto "$proto" -port 0 2>"$OUT/server-$proto-$side.err" &
    pids+=($!)
    spid[$proto-$side]=$!
    for _ in $(seq 1 240); do grep -q "listening proto=$proto" "$OUT/server-$proto-$side.err" && break; sleep 0.5; done
    addr[$proto-$side]=$(sed -n "s/.*listening proto=$proto addr=//p" "$OUT/server-$proto-$side.err")
    [ -n "${addr[$proto-$side]}" ] || { echo "servers-ab: $side's $proto server did not start" >&2; cat "$OUT/server-$proto-$side.err" >&2; exit 1; }
  done
done

coproc W { exec java -jar "$CLIENT_JAR" worker 2>"$OUT/worker.err"; }
pids+=($W_PID)
read -r -t 120 ready <&"${W[0]}"
case $ready in "#rpcbed-worker ready java "*) ;; *) echo "servers-ab: worker: $ready" >&2; exit 1 ;; esac

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

n=0
# run SIDE CELL ROUND: one run of CELL against SIDE's server; appends a benchmark line.
run() {
  local side=$1 cell=$2 round=$3
  local proto call items c
  IFS=: read -r proto call items c <<<"$cell"
  local name="java-$proto-$call-c$c"
  [ "$call" = datalist ] && name="java-$proto-datalist-$items-c$c"
  n=$((n + 1))
  local id="r$n" args=(-proto "$proto" -call "$call" -c "$c" -t "$T" -warmup "$WARMUP" -addr "${addr[$proto-$side]}")
  [ "$call" = datalist ] && args+=(-items "$items")
  local before after
  before=$(cpu_ticks "${spid[$proto-$side]}")
  printf 'run\t%s' "$id" >&"${W[1]}"
  printf '\t%s' "${args[@]}" >&"${W[1]}"
  printf '\n' >&"${W[1]}"
  local rep="" line code=""
  while read -r -t 120 line <&"${W[0]}"; do
    case $line in
      "#rpcbed-worker done $id exit="*) code=${line##*=}; break ;;
      *) rep+="$line"$'\n' ;;
    esac
  done
  after=$(cpu_ticks "${spid[$proto-$side]}")
  local rps complete cpu
  rps=$(sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' <<<"$rep")
  complete=$(sed -n 's/^Complete requests: *\([0-9]*\).*/\1/p' <<<"$rep")
  # The server's CPU over the whole run (verify and warm-up included, about 1/4 of it
  # at the defaults) per measured call: a comparison between A and B, not an absolute.
  cpu=$(awk -v d=$((after - before)) -v t="$TICK" -v n="${complete:-0}" 'BEGIN{if (n > 0) printf "%.1f", d / t * 1e6 / n}')
  printf 'round %d %s %-32s exit=%s req/s=%s server-us/call=%s\n' "$round" "$side" "$name" "${code:-?}" "${rps:--}" "${cpu:--}" >&2
  if [ "$round" -gt 0 ] && [ "$code" = 0 ] && [ -n "$rps" ] && [ -n "$cpu" ]; then
    echo "$round $rps $cpu" >>"$OUT/rounds/$side.$name"
  fi
}

{ echo "loadavg before: $(cat /proc/loadavg)"; echo "A=$A"; echo "B=$B"; } | tee "$OUT/info.txt" >&2
for round in $(seq 0 "$ROUNDS"); do
  for item in $(for cell in $CELLS; do echo "A/$cell"; echo "B/$cell"; done | shuf); do
    run "${item%%/*}" "${item#*/}" "$round"
  done
done
echo "loadavg after: $(cat /proc/loadavg)" | tee -a "$OUT/info.txt" >&2
printf 'quit\n' >&"${W[1]}"

# B/A per cell over the rounds both sides completed, paired by round.
{
  echo "== B/A per cell, paired by round (95 % intervals; B=$B, A=$A)"
  for f in "$OUT"/rounds/A.*; do
    [ -e "$f" ] || continue
    name=${f##*/A.}
    [ -f "$OUT/rounds/B.$name" ] || { echo "$name: no round of B completed"; continue; }
    join <(sort -k1,1 "$f") <(sort -k1,1 "$OUT/rounds/B.$name") >"$OUT/rounds/pair.$name" # round rpsA cpuA rpsB cpuB
    awk '{print $4, $2}' "$OUT/rounds/pair.$name" | "$RPCBED" ratio -width 64 -label "B/A req/s $name" -better higher ||
      echo "B/A req/s $name: no ratio (rpcbed ratio failed: stderr says why)"
    awk '{print $5, $3}' "$OUT/rounds/pair.$name" | "$RPCBED" ratio -width 64 -label "B/A server CPU/call $name" -better lower ||
      echo "B/A server CPU/call $name: no ratio (rpcbed ratio failed: stderr says why)"
  done
} | tee "$OUT/ratios.txt"
echo "servers-ab: runs and ratios in $OUT" >&2

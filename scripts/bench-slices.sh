#!/usr/bin/env bash
# make bench-slices: the slice-length trade-off behind the default spec's
# duration and rounds (docs/method.md, section 11). It runs one small spec (go and
# php over grpc and thrift, 200 items, c=1 and c=50: 8 cells on go-server) once
# per slice length, each with ROUNDS rounds in random order, then prints per
# length the rounds' noise, the wall time a run took (its switching cost: warm-up,
# dialling, sampling, the probe) and the in-run 95 % half-width that length gives
# a cell in a fixed time (rpcbed slices). It prints figures and never fails on them.
#
#   LENGTHS="0.25 0.5 1 2"   slice lengths in seconds, run in this order
#   ROUNDS=6 RUNNER=auto OUT=results/slices-<UTC time>
set -euo pipefail
cd "$(dirname "$0")/.."
LENGTHS=${LENGTHS:-0.25 0.5 1 2}
ROUNDS=${ROUNDS:-6}
RUNNER=${RUNNER:-auto}
OUT=${OUT:-results/slices-$(date -u +%Y%m%dT%H%M%SZ)}
RPCBED=${RPCBED:-bin/rpcbed}

mkdir -p "$OUT"
dirs=()
for l in $LENGTHS; do
	cat >"$OUT/spec-$l.yaml" <<SPEC
clients: {go: [grpc, thrift], php: [grpc, thrift]}
calls: [datalist]
items: [200]
concurrency: [1, 50]
load: {duration: ${l}s, warmup: auto, warmup_max: 1s, repeat_warmup: 0.3s}
repeats: $ROUNDS
seed: 26
SPEC
	echo "bench-slices: ${l}s x $ROUNDS rounds into $OUT/$l ($(cut -d' ' -f1-3 /proc/loadavg))" >&2
	"$RPCBED" matrix -spec "$OUT/spec-$l.yaml" -runner "$RUNNER" -out "$OUT/$l" -q >/dev/null
	dirs+=("$OUT/$l")
done
echo "loadavg after: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$RPCBED" slices "${dirs[@]}" | tee "$OUT/slices.txt"

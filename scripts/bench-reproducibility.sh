#!/usr/bin/env bash
# make bench-reproducibility: run one matrix spec twice back to back and print how
# well the two runs agree (rpcbed agree): per figure (req/s, client and server CPU
# per call) the share of cells whose run-B median lies inside run A's 95 %
# interval and the other way round, the verdicts (faster, slower,
# indistinguishable) that flipped between the runs, and the share of cells whose
# medians lie within ±10 %. The goal: >= 90 % both ways, no flip. It prints
# figures and never fails on them (a goal lives in a benchmark, not in a test).
#
#   SPEC=matrix.yaml      the spec both runs use
#   RUNNER=auto           docker, local or auto (as make matrix)
#   OUT=results/repro-<UTC time>   the two runs go to OUT/a and OUT/b
#   TOL=0.10 GOAL=0.90    agreement tolerance and the share the goal asks for
set -euo pipefail
cd "$(dirname "$0")/.."
SPEC=${SPEC:-matrix.yaml}
RUNNER=${RUNNER:-auto}
OUT=${OUT:-results/repro-$(date -u +%Y%m%dT%H%M%SZ)}
TOL=${TOL:-0.10}
GOAL=${GOAL:-0.90}
RPCBED=${RPCBED:-bin/rpcbed}

mkdir -p "$OUT"
for run in a b; do
	start=$(date +%s)
	echo "bench-reproducibility: run $run of $SPEC into $OUT/$run" >&2
	# A run with failed cells still counts: agree compares the cells both have.
	"$RPCBED" matrix -spec "$SPEC" -runner "$RUNNER" -out "$OUT/$run" -q ${MATRIX_FLAGS:-} >/dev/null
	echo "bench-reproducibility: run $run took $(( $(date +%s) - start )) s" >&2
done
"$RPCBED" agree -tol "$TOL" -goal "$GOAL" "$OUT/a" "$OUT/b" | tee "$OUT/agreement.txt"

#!/usr/bin/env bash
# make bench-reproducibility: run one matrix spec twice back to back and print how
# well the two runs agree (rpcbed agree): per figure (req/s, client and server CPU
# per call) the share of cells whose run-B median lies inside run A's 95 %
# interval and the other way round, the verdicts (faster, slower,
# indistinguishable) that flipped between the runs, and the share of cells whose
# medians lie within ±10 %. The goal: >= 90 % both ways, no flip. It prints
# figures and never fails on them (a goal lives in a benchmark, not in a test).
# One pair is one draw of the machine's move between runs; PAIRS=4 runs four
# back-to-back pairs and pools their calibration (a pair one cluster;
# docs/method.md, section 11), about 20 minutes a pair for the default spec.
#
#   SPEC=matrix.yaml      the spec both runs use
#   RUNNER=auto           docker, local or auto (as make matrix)
#   OUT=results/repro-<UTC time>   the two runs go to OUT/a and OUT/b; with
#                         PAIRS > 1, pair k's to OUT/k/a and OUT/k/b
#   PAIRS=1               pairs of runs, pooled when more than one
#   TOL=0.10 GOAL=0.90    agreement tolerance and the share the goal asks for
set -euo pipefail
cd "$(dirname "$0")/.."
SPEC=${SPEC:-matrix.yaml}
RUNNER=${RUNNER:-auto}
OUT=${OUT:-results/repro-$(date -u +%Y%m%dT%H%M%SZ)}
TOL=${TOL:-0.10}
GOAL=${GOAL:-0.90}
RPCBED=${RPCBED:-bin/rpcbed}
PAIRS=${PAIRS:-1}
case "$PAIRS" in
''|*[!0-9]*|0) echo "bench-reproducibility: PAIRS=$PAIRS: want a whole number of pairs, at least 1" >&2; exit 2 ;;
esac

mkdir -p "$OUT"
dirs=()
for pair in $(seq 1 "$PAIRS"); do
	dir=$OUT
	[ "$PAIRS" -gt 1 ] && dir=$OUT/$pair
	for run in a b; do
		start=$(date +%s)
		echo "bench-reproducibility: pair $pair of $PAIRS, run $run of $SPEC into $dir/$run" >&2
		# A run with failed cells still counts: agree compares the cells both have.
		"$RPCBED" matrix -spec "$SPEC" -runner "$RUNNER" -out "$dir/$run" -q ${MATRIX_FLAGS:-} >/dev/null
		echo "bench-reproducibility: run $run took $(( $(date +%s) - start )) s" >&2
		dirs+=("$dir/$run")
	done
	[ "$PAIRS" -gt 1 ] && "$RPCBED" agree -tol "$TOL" -goal "$GOAL" "$dir/a" "$dir/b" > "$dir/agreement.txt"
done
"$RPCBED" agree -tol "$TOL" -goal "$GOAL" "${dirs[@]}" | tee "$OUT/agreement.txt"

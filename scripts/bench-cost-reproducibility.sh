#!/usr/bin/env bash
# make bench-cost-reproducibility: `rpcbed cost` twice back to back with one build
# (what `make cost` runs), then the goals' figures:
#   - time: each run's seconds against make cost's goal (600 s for the default cells);
#   - same machine: the share of go and php cells and sides whose instructions per
#     call agree within ±1 % (goal: at least 95 %), by client and side, and the cells
#     furthest apart (rpcbed gate -within 1).
#   COST_SPEC=cost.yaml OUT=results/cost-repro-<time>
set -euo pipefail
cd "$(dirname "$0")/.."
SPEC=${COST_SPEC:-cost.yaml}
OUT=${OUT:-results/cost-repro-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
declare -A took
for run in a b; do
	start=$(date +%s)
	echo "bench-cost-reproducibility: run $run of $SPEC into $OUT/$run (load before: $(cat /proc/loadavg))" >&2
	bin/rpcbed cost -spec "$SPEC" -out "$OUT/$run" >&2 || true
	took[$run]=$(( $(date +%s) - start ))
	echo "bench-cost-reproducibility: run $run took ${took[$run]} s (load after: $(cat /proc/loadavg))" >&2
done
echo "== bench-cost-reproducibility: $SPEC, two runs in $OUT"
for run in a b; do
	verdict="MET"
	if [ "${took[$run]}" -gt 600 ]; then verdict="NOT MET"; fi
	echo "time: run $run took ${took[$run]} s; goal make cost in 600 s or less: $verdict"
done
bin/rpcbed gate -within 1 "$OUT/a" "$OUT/b" || true

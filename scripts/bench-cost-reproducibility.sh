#!/usr/bin/env bash
# make bench-cost-reproducibility: `rpcbed cost` twice back to back with one build,
# then rpcbed gate between them with -within 1: the share of go and php cells whose
# instructions per call agree within ±1 % (goal: at least 95 %), and the cells that
# moved beyond 2 %.
#   COST_SPEC=cost.yaml OUT=results/cost-repro-<time>
set -euo pipefail
cd "$(dirname "$0")/.."
SPEC=${COST_SPEC:-cost.yaml}
OUT=${OUT:-results/cost-repro-$(date -u +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
for run in a b; do
	start=$(date +%s)
	echo "bench-cost-reproducibility: run $run of $SPEC into $OUT/$run (load: $(cat /proc/loadavg))" >&2
	bin/rpcbed cost -spec "$SPEC" -out "$OUT/$run" >&2 || true
	echo "bench-cost-reproducibility: run $run took $(( $(date +%s) - start )) s" >&2
done
bin/rpcbed gate -within 1 "$OUT/a" "$OUT/b" || true

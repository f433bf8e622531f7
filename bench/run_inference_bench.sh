#!/usr/bin/env bash
# run_inference_bench.sh - the inference report of a graph-replay trace merged
# with its capture folder, at 20x the shipped vLLM decode replay.
#
# Usage: bench/run_inference_bench.sh [BUILD_DIR] [COPIES]
#   BUILD_DIR  where tracelens was built (default: <repo>/build)
#   COPIES     how many copies of the replay's events the tiled trace holds
#              (default 20: 20 execution annotations, 20 graph launches, each
#              merged with the capture trace)
#
# It tiles ../shared/data/inference/vllm_decode_full/graph_execution.json.gz
# with bench/tile_trace (ids and times shifted per copy), then runs 3 times
#   tracelens report TILE --inference --enable_pseudo_ops --group_by_parent_module
#     --group_by_num_kernels --include_call_stack --disable_coll_analysis
#     --capture_folder <case>/capture_traces -o OUT -q
# under /usr/bin/time, and prints the best wall time, the largest peak RSS
# and the share of kernel time the ops of ops_summary attribute to named ops
# (not to graph launches). The capture folder is only read (it has its
# execution_details.json). Targets (issue 12): >= 50x faster than the
# reference's inference report on the same input (about 45 s and 2.3 GB on
# this machine class, measured by the issue's author; the reference is not
# installed here), peak memory <= 0.5 GB.
set -euo pipefail
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
BUILD_DIR=${1:-$REPO/build}
COPIES=${2:-20}
RUNS=${TRACELENS_BENCH_RUNS:-3}
die() { echo "run_inference_bench: $*" >&2; exit 1; }
[[ $COPIES =~ ^[1-9][0-9]*$ ]] || die "COPIES must be a positive integer"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
CASE=$REPO/../shared/data/inference/vllm_decode_full
[[ -f $CASE/graph_execution.json.gz ]] || die "$CASE/graph_execution.json.gz not found (the shared data)"
TL=$BUILD_DIR/tracelens
[[ -x $TL ]] || die "$TL not built"
TILER=$BUILD_DIR/tile_trace
if [[ ! -x $TILER || $SCRIPT_DIR/tile_trace.c -nt $TILER ]]; then
    "${CC:-cc}" -O2 -std=c11 -Wall -Wextra -Werror "$SCRIPT_DIR/tile_trace.c" -lz -o "$TILER" || die "tiler build failed"
fi
DATA=$BUILD_DIR/bench-data
mkdir -p "$DATA"
TILE=$DATA/vllm_decode_x$COPIES.json
if [[ ! -f $TILE ]]; then
    bytes=$(gzip -dc "$CASE/graph_execution.json.gz" | wc -c)
    # the tiler makes ceil(target / input) copies: aim just under COPIES inputs
    target=$(awk -v b="$bytes" -v c="$COPIES" 'BEGIN{printf "%.6f", (b * c - b / 2) / 1e6}')
    "$TILER" "$CASE/graph_execution.json.gz" "$TILE.tmp" "$target" 2>/dev/null || die "tiler failed"
    mv "$TILE.tmp" "$TILE"
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
best=999999 peak=0
for i in $(seq "$RUNS"); do
    rm -rf "$OUT/r"
    /usr/bin/time -f '%e %M' -o "$OUT/time" "$TL" report "$TILE" --inference --enable_pseudo_ops \
        --group_by_parent_module --group_by_num_kernels --include_call_stack --disable_coll_analysis \
        --capture_folder "$CASE/capture_traces" -o "$OUT/r" -q || die "tracelens report failed"
    read -r wall rss <"$OUT/time"
    best=$(awk -v a="$best" -v b="$wall" 'BEGIN{print (b < a) ? b : a}')
    peak=$(( rss > peak ? rss : peak ))
done
named=$(python3 - "$OUT/r/perf_report_csvs/ops_summary.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], encoding="utf-8")))
all_ = sum(float(r["total_direct_kernel_time_sum"] or 0) for r in rows)
graph = sum(float(r["total_direct_kernel_time_sum"] or 0) for r in rows if "graphlaunch" in r["name"].lower())
print(f"{(all_ - graph) / all_ * 100 if all_ else 0:.2f}")
PY
)
echo "| input | copies | best wall (s) | vs reference ~45 s | peak RSS (MB) | kernel time on named ops |"
echo "|---|---|---|---|---|---|"
printf '| %s | %s | %.2f | %.0fx | %.0f | %s%% |\n' "$(basename "$TILE") ($(( $(stat -c %s "$TILE") / 1000000 )) MB)" \
    "$COPIES" "$best" "$(awk -v b="$best" 'BEGIN{print 45 / b}')" "$(awk -v p="$peak" 'BEGIN{print p / 1024}')" "$named"

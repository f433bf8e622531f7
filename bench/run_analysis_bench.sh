#!/usr/bin/env bash
# run_analysis_bench.sh - wall time and peak RSS of the analysis orchestrator:
# the perf report alone, the standalone analysis of one trace, and the
# comparative analysis of two traces.
#
# Usage: bench/run_analysis_bench.sh [BUILD_DIR] [TARGET_MB]
#   BUILD_DIR  where tracelens was built (default: <repo>/build)
#   TARGET_MB  approximate uncompressed size of each tiled trace (default 600)
#
# Builds (once, in BUILD_DIR/bench-data) ~TARGET_MB tiles of the Qwen1.5-0.5B
# traces of ../shared/data (MI300X as trace 1, H100 as trace 2) with
# bench/tile_trace.c, then runs each command TRACELENS_BENCH_RUNS times (default
# 3) under /usr/bin/time and prints the best wall time, the largest peak RSS
# and the CPU seconds (user + system, all threads) of the best run:
#   report      tracelens report T1 -o OUT --platform MI300X
#   analysis    tracelens run orchestrator.lua T1 -o OUT --platform MI300X --no-rules
#   comparison  tracelens run orchestrator.lua T1 --compare T2 -o OUT --platform MI300X --no-rules
# and the ratios analysis/report and comparison/analysis.
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
BUILD_DIR=${1:-$REPO/build}
TARGET_MB=${2:-600}
RUNS=${TRACELENS_BENCH_RUNS:-3}
die() { echo "run_analysis_bench: $*" >&2; exit 1; }

mkdir -p "$BUILD_DIR"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)
TRACELENS=$BUILD_DIR/tracelens
[[ -x $TRACELENS ]] || die "$TRACELENS not found; build tracelens into $BUILD_DIR first"
[[ -x /usr/bin/time ]] || die "/usr/bin/time (GNU time) is required"

SRC1=$REPO/../shared/data/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
SRC2=$REPO/../shared/data/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
[[ -f $SRC1 && -f $SRC2 ]] || die "the Qwen traces of ../shared/data/traces/{mi300,h100} are needed"

TILER=$BUILD_DIR/tile_trace
if [[ ! -x $TILER || $SCRIPT_DIR/tile_trace.c -nt $TILER ]]; then
    "${CC:-cc}" -O2 -std=c11 -Wall -Wextra -Werror "$SCRIPT_DIR/tile_trace.c" -lz -o "$TILER" || die "tiler build failed"
fi
DATA=$BUILD_DIR/bench-data
mkdir -p "$DATA"
T1=$DATA/qwen_mi300_tiled.json
T2=$DATA/qwen_h100_tiled.json
for pair in "$SRC1:$T1" "$SRC2:$T2"; do
    src=${pair%%:*} dst=${pair#*:}
    stamp="$dst.stamp" want="target_mb=$TARGET_MB source_bytes=$(stat -c %s "$src")"
    if [[ ! -f $dst || ! -f $stamp || "$(cat "$stamp")" != "$want" ]]; then
        echo "# tiling $(basename "$src") to ~${TARGET_MB} MB (one-time)" >&2
        "$TILER" "$src" "$dst.tmp" "$TARGET_MB" >/dev/null || die "tiler failed"
        mv -f "$dst.tmp" "$dst"
        printf '%s\n' "$want" >"$stamp"
    fi
done

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tracelens-abench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# measure NAME CMD... -> prints "NAME best_s peak_MB cpu_s" (cpu_s: user +
# system seconds of the best run, all threads)
measure() {
    local name=$1 best='' peak=0 cpu='' i wall rss usr sys
    shift
    for ((i = 1; i <= RUNS; i++)); do
        rm -rf "$WORK/out"
        if ! /usr/bin/time -f '%e %M %U %S' -o "$WORK/time" "$@" -o "$WORK/out" >"$WORK/log" 2>&1; then
            tail -n 20 "$WORK/log" >&2
            die "$name failed"
        fi
        read -r wall rss usr sys < <(tail -n 1 "$WORK/time")
        echo "# $name run $i: ${wall} s, peak RSS ${rss} KiB, cpu ${usr} + ${sys} s" >&2
        if [[ -z $best ]] || awk -v a="$wall" -v b="$best" 'BEGIN{exit !(a < b)}'; then
            best=$wall
            cpu=$(awk -v u="$usr" -v s="$sys" 'BEGIN{printf "%.2f", u + s}')
        fi
        ((rss > peak)) && peak=$rss
    done
    echo "$name $best $((peak / 1024)) $cpu"
}

echo "# tracelens analysis benchmark: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) CPUs, $RUNS runs (best wall, max peak RSS)"
echo "# trace 1: $T1 ($(stat -c %s "$T1") bytes); trace 2: $T2 ($(stat -c %s "$T2") bytes)"
{
    measure report "$TRACELENS" report -q "$T1" --platform MI300X
    measure analysis "$TRACELENS" run orchestrator.lua "$T1" --platform MI300X --no-rules -q
    measure comparison "$TRACELENS" run orchestrator.lua "$T1" --compare "$T2" --platform MI300X --no-rules -q
} | awk '
{ name[NR] = $1; s[NR] = $2; mb[NR] = $3; c[NR] = $4; printf "%-12s %8.2f s %8d MiB %8.2f cpu s\n", $1, $2, $3, $4 }
END {
    printf "analysis / report:      %.2fx (target <= 2)\n", s[2] / s[1]
    printf "comparison / analysis:  %.2fx (target <= 1.5); cpu seconds %.2fx\n", s[3] / s[2], c[3] / c[2]
}'

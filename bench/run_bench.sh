#!/usr/bin/env bash
# run_bench.sh - end-to-end throughput / memory benchmark for `tracelens report`.
#
# Usage: bench/run_bench.sh [BUILD_DIR] [TARGET_MB]
#   BUILD_DIR  where tracelens was built (default: <repo>/build; a relative
#              path is taken relative to the current directory)
#   TARGET_MB  approximate uncompressed size of the synthetic trace, in MB of
#              10^6 bytes (default: 600)
#
# Steps:
#   1. builds bench/tile_trace.c into BUILD_DIR/tile_trace if it is missing
#      (or older than its source);
#   2. creates, once, BUILD_DIR/bench-data/owlv2_tiled.json and
#      owlv2_tiled.json.gz (~TARGET_MB uncompressed) by tiling the owlv2 H100
#      trace from ../shared/data (relative to the repo root); they are reused
#      while TARGET_MB, the source trace and the tiler source are unchanged;
#   3. runs the load stage (load + tree + timeline, bench/load_timeline.lua)
#      on each file and the report on the plain one, 3 times each under
#      /usr/bin/time -f '%e %M', keeping the best wall time and the largest
#      peak RSS, and prints a table against the targets of issue 17:
#        load >= 1500 MB/s on plain JSON, >= 1000 MB/s (of uncompressed
#        JSON) on .json.gz, peak RSS <= 0.35 x the uncompressed size;
#   4. prints the stage figures of one more load of each file
#      (bench/load_stages.lua with TRACELENS_SCAN_STAGES=1: read/inflate
#      wait and scan time per thread, join, tree, timeline).
#
# Environment: CC (compiler for the tiler, default cc),
#              TRACELENS_BENCH_TRACE (use another source trace),
#              TRACELENS_BENCH_RUNS (runs per file, default 3),
#              TRACELENS_SCAN (the scanner's byte classifier: fallback,
#              sse4.2, avx2, neon; default the CPU's best).
set -euo pipefail

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)

BUILD_DIR=${1:-$REPO/build}
TARGET_MB=${2:-600}
RUNS=${TRACELENS_BENCH_RUNS:-3}

die() { echo "run_bench: $*" >&2; exit 1; }

if ! [[ $TARGET_MB =~ ^[0-9]+([.][0-9]+)?$ ]] || ! awk -v t="$TARGET_MB" 'BEGIN{exit !(t > 0)}'; then
    die "TARGET_MB must be a positive number, got '$TARGET_MB'"
fi
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "TRACELENS_BENCH_RUNS must be a positive integer"

mkdir -p "$BUILD_DIR"
BUILD_DIR=$(cd "$BUILD_DIR" && pwd)

TRACE=${TRACELENS_BENCH_TRACE:-$REPO/../shared/data/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz}
[[ -f $TRACE ]] || die "source trace not found: $TRACE
  (expected the shared data checkout next to the repo: ../shared/data/traces/h100/;
   set TRACELENS_BENCH_TRACE=/path/to/trace.json.gz to use another trace)"
TRACE=$(cd "$(dirname "$TRACE")" && pwd)/$(basename "$TRACE")

TIME_BIN=/usr/bin/time
[[ -x $TIME_BIN ]] || die "$TIME_BIN (GNU time) is required for wall time and peak RSS"

# ---------------------------------------------------------------- 1. tiler
TILER_SRC=$SCRIPT_DIR/tile_trace.c
TILER=$BUILD_DIR/tile_trace
if [[ ! -x $TILER || $TILER_SRC -nt $TILER ]]; then
    echo "# building $TILER" >&2
    "${CC:-cc}" -O2 -std=c11 -Wall -Wextra -Werror "$TILER_SRC" -lz -o "$TILER" \
        || die "failed to build the tiler (needs a C11 compiler and zlib headers)"
fi

# ---------------------------------------------------------- 2. bench data
DATA=$BUILD_DIR/bench-data
PLAIN=$DATA/owlv2_tiled.json
GZ=$DATA/owlv2_tiled.json.gz
STAMP=$DATA/owlv2_tiled.stamp
mkdir -p "$DATA"
want_stamp="target_mb=$TARGET_MB source=$TRACE source_bytes=$(stat -c %s "$TRACE") tiler=$(cksum <"$TILER_SRC" | cut -d' ' -f1)"
if [[ ! -f $PLAIN || ! -f $GZ || ! -f $STAMP || "$(cat "$STAMP")" != "$want_stamp" ]]; then
    echo "# generating ~${TARGET_MB} MB tiled traces in $DATA (one-time)" >&2
    rm -f "$STAMP"
    "$TILER" "$TRACE" "$PLAIN.tmp" "$TARGET_MB" || die "tiler failed"
    mv -f "$PLAIN.tmp" "$PLAIN"
    "$TILER" "$TRACE" "$GZ.tmp" "$TARGET_MB" --gzip || die "tiler failed"
    mv -f "$GZ.tmp" "$GZ"
    printf '%s\n' "$want_stamp" >"$STAMP"
fi
UNC_BYTES=$(stat -c %s "$PLAIN")

# ------------------------------------------------------------ 3. measure
TRACELENS=$BUILD_DIR/tracelens
[[ -x $TRACELENS ]] || die "$TRACELENS not found or not executable; build tracelens into $BUILD_DIR first
  (e.g. cmake -S $REPO -B $BUILD_DIR -DCMAKE_BUILD_TYPE=Release && cmake --build $BUILD_DIR)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tracelens-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# measure FILE MODE -> sets BEST_S and PEAK_KB
#   MODE load:   load + tree + GPU timeline (bench/load_timeline.lua)
#   MODE report: the full report (every sheet, CSV + xlsx)
measure() {
    local file=$1 mode=$2 i wall rss
    local -a cmd
    if [[ $mode == load ]]; then
        cmd=("$TRACELENS" run "$REPO/bench/load_timeline.lua" "$file")
    else
        cmd=("$TRACELENS" report -q --platform none "$file" -o "$WORK/out")
    fi
    BEST_S=''
    PEAK_KB=0
    for ((i = 1; i <= RUNS; i++)); do
        rm -rf "$WORK/out"
        mkdir -p "$WORK/out"
        if ! "$TIME_BIN" -f '%e %M' -o "$WORK/time" "${cmd[@]}" >"$WORK/log" 2>&1; then
            echo "run_bench: '${cmd[*]}' failed; last output:" >&2
            tail -n 20 "$WORK/log" >&2
            tail -n 2 "$WORK/time" >&2 2>/dev/null || true
            exit 1
        fi
        read -r wall rss < <(tail -n 1 "$WORK/time")
        if [[ $mode == report && ! -f $WORK/out/perf_report_csvs/gpu_timeline.csv ]]; then
            echo "# warning: run $i on $(basename "$file") wrote no perf_report_csvs/gpu_timeline.csv" >&2
        fi
        echo "# $mode $(basename "$file") run $i: ${wall} s, peak RSS ${rss} KiB" >&2
        if [[ -z $BEST_S ]] || awk -v a="$wall" -v b="$BEST_S" 'BEGIN{exit !(a < b)}'; then
            BEST_S=$wall
        fi
        if ((rss > PEAK_KB)); then PEAK_KB=$rss; fi
    done
}

echo "# tracelens report benchmark: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(nproc) CPUs, $RUNS runs per file (best wall time, max peak RSS)"
echo "# binary: $TRACELENS"
echo "# source: $TRACE"
echo "# data:   $DATA (uncompressed $UNC_BYTES bytes; MB = 10^6 bytes of uncompressed JSON)"

rows=()
for entry in "$PLAIN:load:1500" "$GZ:load:1000" "$PLAIN:report:0"; do
    IFS=: read -r file mode target <<<"$entry"
    measure "$file" "$mode"
    rows+=("$mode:$(basename "$file") $BEST_S $PEAK_KB $target")
done

echo
printf '%s\n' "${rows[@]}" | awk -v unc="$UNC_BYTES" '
BEGIN {
    fmt = "%-28s %9s %8s %9s %12s %9s  %-26s %s\n"
    printf fmt, "stage:file", "unc_MB", "best_s", "MB/s", "peak_RSS_MB", "RSS/size", "target", "result"
}
{
    name = $1; s = $2 + 0; kb = $3 + 0; tgt = $4 + 0
    report = (name ~ /^report:/)
    mb = unc / 1e6
    rate = (s > 0) ? mb / s : 0
    rss_mb = kb * 1024 / 1e6
    ratio = kb * 1024 / unc
    # load: throughput and RSS <= 0.35x; report: <= 2.5 s and RSS <= 0.6x (for ~600 MB)
    ok_rate = report ? (s <= 2.5 * mb / 600) : (s <= 0 || rate >= tgt)
    ok_rss = (ratio <= (report ? 0.6 : 0.35))
    target = report ? sprintf("<=%.1f s, RSS<=0.6x", 2.5 * mb / 600) : sprintf(">=%d MB/s, RSS<=0.35x", tgt)
    res = (ok_rate && ok_rss) ? "PASS" : "FAIL"
    if (!ok_rate) res = res " (speed)"
    if (!ok_rss) res = res " (rss)"
    printf fmt, name, sprintf("%.1f", mb), sprintf("%.3f", s), (s > 0 ? sprintf("%.1f", rate) : "inf"),
        sprintf("%.1f", rss_mb), sprintf("%.3f", ratio), target, res
}'

# ------------------------------------------------------- 4. stage figures
echo
echo "# stage figures (one more load of each file; seconds of wall time per stage)"
for file in "$PLAIN" "$GZ"; do
    echo "## $(basename "$file")"
    TRACELENS_SCAN_STAGES=1 "$TRACELENS" run "$REPO/bench/load_stages.lua" "$file" 2>&1 | grep -v '^busy' || true
done

#!/usr/bin/env bash
# Quick start: installs what is missing, builds tracelens and runs it on the
# bundled example trace (a generated training step with known ground truth).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install_deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" >/dev/null
OUT=${1:-demo_output}
./build/tracelens report examples/demo_trace.json -o "$OUT"
echo
echo "== $OUT/perf_report_csvs/gpu_timeline.csv =="
column -s, -t <"$OUT/perf_report_csvs/gpu_timeline.csv"
echo
./build/tracelens run examples/summary.lua examples/demo_trace.json

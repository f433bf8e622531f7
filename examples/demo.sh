#!/usr/bin/env bash
# Quick start: installs what is missing, builds tracelens and runs it on the
# bundled example trace (a generated training step with known ground truth).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install_deps.sh --runtime
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)" >/dev/null
OUT=${1:-demo_output}
# the full analysis: perf report, analyzers in parallel, priority ranking, chart, analysis.md
./build/tracelens run orchestrator.lua examples/demo_trace.json -o "$OUT"
./build/tracelens validate "$OUT" >/dev/null && echo "tracelens validate $OUT: passed"
echo
echo "== $OUT/analysis.md (first 40 lines; the chart is embedded as base64) =="
sed -E -e 's/base64,[A-Za-z0-9+\/=]+/base64,.../' -e '40q' "$OUT/analysis.md"
echo
./build/tracelens run examples/summary.lua examples/demo_trace.json

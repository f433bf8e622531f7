#!/usr/bin/env bash
# run_fuzz.sh — builds the libFuzzer target fuzz_scan (clang, -DTL_FUZZ=ON,
# into build-fuzz/) and fuzzes for SECONDS (default 660) on one core. After a
# finding (crash, hang, mismatch abort) it saves the input under
# build-fuzz/fuzz-work/artifacts/ and goes on fuzzing until the time is up.
# The growing corpus is kept in build-fuzz/fuzz-work/corpus between runs;
# tests/fuzz/corpus/ seeds it. Usage: tests/fuzz/run_fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-660}
WORK=build-fuzz/fuzz-work
CC=clang cmake -S . -B build-fuzz -DTL_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
cmake --build build-fuzz --target fuzz_scan >/dev/null
mkdir -p "$WORK/corpus" "$WORK/artifacts"
export UBSAN_OPTIONS="suppressions=$PWD/tests/fuzz/ubsan.supp:halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS=detect_leaks=1
end=$((SECONDS + SECS))
while [ "$SECONDS" -lt "$end" ]; do
  build-fuzz/fuzz_scan -dict=tests/fuzz/kineto.dict -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -max_total_time=$((end - SECONDS)) -print_final_stats=1 -artifact_prefix="$WORK/artifacts/" \
    "$WORK/corpus" tests/fuzz/corpus ||
    echo "run_fuzz.sh: finding saved under $WORK/artifacts/ (fuzzing on)" >&2
done
ls -l "$WORK/artifacts/"

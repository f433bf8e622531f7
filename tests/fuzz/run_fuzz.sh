#!/usr/bin/env bash
# run_fuzz.sh — builds a libFuzzer target (clang, -DTL_FUZZ=ON, into
# build-fuzz/) and fuzzes for SECONDS (default 660) on one core. After a
# finding (crash, hang, mismatch abort) it saves the input under
# build-fuzz/fuzz-work*/artifacts/ and goes on fuzzing until the time is up.
# The growing corpus is kept in build-fuzz/fuzz-work*/corpus between runs.
# TL_FUZZ_BUILD in the environment names another build directory (default
# build-fuzz). TRACELENS_SCAN in the environment (fallback, sse4.2, avx2,
# neon) forces the scanner's byte classifier for the scan target; each input
# is also scanned with every other path the CPU runs and compared.
# Usage: tests/fuzz/run_fuzz.sh [SECONDS] [TARGET]
#   TARGET scan (default): fuzz_scan, the Kineto scanner (seeds tests/fuzz/corpus/)
#   TARGET xlsx: fuzz_xlsx, the workbook reader of `tracelens compare`
#                (seeds tests/fuzz/corpus_xlsx/)
#   TARGET lua_api: fuzz_lua_api, the Lua-facing C API from a sandboxed state
#                (seeds tests/fuzz/corpus_lua_api/)
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${1:-660}
TARGET=${2:-scan}
BUILD=${TL_FUZZ_BUILD:-build-fuzz}
DICT_OPT=()
case $TARGET in
  scan) WORK=$BUILD/fuzz-work DICT_OPT=(-dict=tests/fuzz/kineto.dict) SEEDS=tests/fuzz/corpus ;;
  xlsx) WORK=$BUILD/fuzz-work-xlsx DICT_OPT=(-dict=tests/fuzz/xlsx.dict) SEEDS=tests/fuzz/corpus_xlsx ;;
  lua_api) WORK=$BUILD/fuzz-work-lua-api SEEDS=tests/fuzz/corpus_lua_api ;;
  *) echo "run_fuzz.sh: TARGET is scan, xlsx or lua_api, not '$TARGET'" >&2; exit 2 ;;
esac
# TL_FUZZ_EXTRA_FLAGS in the environment (e.g. -fno-sanitize=pointer-overflow)
# goes to the CMake option of that name, to fuzz on past a known finding.
CC=clang cmake -S . -B "$BUILD" -DTL_FUZZ=ON -DCMAKE_BUILD_TYPE=Debug \
  -DTL_FUZZ_EXTRA_FLAGS="${TL_FUZZ_EXTRA_FLAGS:-}" >/dev/null
cmake --build "$BUILD" --target "fuzz_$TARGET" >/dev/null
mkdir -p "$WORK/corpus" "$WORK/artifacts"
export UBSAN_OPTIONS=print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1
end=$((SECONDS + SECS))
while [ "$SECONDS" -lt "$end" ]; do
  start=$SECONDS
  "$BUILD/fuzz_$TARGET" "${DICT_OPT[@]}" -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
    -max_total_time=$((end - SECONDS)) -print_final_stats=1 -artifact_prefix="$WORK/artifacts/" \
    "$WORK/corpus" "$SEEDS" ||
    echo "run_fuzz.sh: finding saved under $WORK/artifacts/ (fuzzing on)" >&2
  if [ $((SECONDS - start)) -lt 10 ] && [ "$SECONDS" -lt "$end" ]; then
    echo "run_fuzz.sh: it failed within 10 s (likely on the corpus itself): fix that first, or see the README" >&2
    break
  fi
done
ls -l "$WORK/artifacts/"

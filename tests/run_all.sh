#!/usr/bin/env bash
# Builds tracelens twice (release, and AddressSanitizer + UBSan) and runs the
# whole test suite (ctest) on both. Golden tests read ../shared/data and say
# SKIP when it is absent.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install_deps.sh
JOBS=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$JOBS"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTL_SANITIZE=ON >/dev/null
cmake --build build-asan -j "$JOBS"
echo "== release build =="
(cd build && ctest --output-on-failure -j "$JOBS")
echo "== AddressSanitizer + UBSan build =="
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$JOBS")

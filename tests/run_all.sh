#!/usr/bin/env bash
# Builds tracelens twice (release, and AddressSanitizer + UBSan) and runs the
# whole test suite (ctest) on both. Golden tests read ../shared/data and say
# SKIP when it is absent. A test that runs over 15 minutes fails (--timeout):
# a hang must not eat the CI budget.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tests/install_deps.sh
JOBS=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$JOBS"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTL_SANITIZE=ON >/dev/null
cmake --build build-asan -j "$JOBS"
echo "== release build =="
(cd build && ctest --output-on-failure --timeout 900 -j "$JOBS")
echo "== AddressSanitizer + UBSan build =="
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure --timeout 900 -j "$JOBS")
# the MPI build (-DTRACELENS_MPI=ON, docs/ranks.md) when an MPI is installed:
# mpirun -np 4 gives the single-process CSVs byte for byte
if command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1; then
  cmake -S . -B build-mpi -DCMAKE_BUILD_TYPE=Release -DTRACELENS_MPI=ON >/dev/null
  cmake --build build-mpi -j "$JOBS" --target tracelens
  echo "== MPI build: mpirun =="
  TL_REQUIRE_MPI=1 bash tests/cli/test_ranks_mpi.sh build-mpi/tracelens "$PWD" "$PWD/../shared/data"
fi

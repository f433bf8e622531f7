#!/usr/bin/env bash
# Installs the Debian packages tracelens needs (root or sudo); does nothing
# when they are all present. Used by the README quick start (examples/demo.sh,
# with --runtime: what building and running needs), tests/run_all.sh and
# .ci/run (everything, the test-only packages too).
#   --runtime  only the packages to build and run tracelens
set -euo pipefail
PKGS=(build-essential cmake pkg-config
      liblua5.4-dev lua-cjson-dev libxlsxwriter-dev libminizip-dev libpng-dev libisal-dev zlib1g-dev
      libedit-dev libfreetype-dev fonts-dejavu-core libpcre2-dev)
# test-only: the scanner's differential test (jansson), the fuzz targets
# (clang), the workbook checks (openpyxl; LibreOffice and pdftoppm render the
# workbook as a user sees it), peak-memory figures (time), the MPI build and
# its mpirun test (Open MPI)
TEST_PKGS=(libjansson-dev clang libclang-rt-14-dev python3 python3-openpyxl time
           libreoffice-calc-nogui poppler-utils libopenmpi-dev openmpi-bin)
[ "${1:-}" = "--runtime" ] || PKGS+=("${TEST_PKGS[@]}")
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO=sudo
echo "tracelens: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null

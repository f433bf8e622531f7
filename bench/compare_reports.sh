#!/usr/bin/env bash
# compare_reports.sh - byte-identical reports from two tracelens binaries.
#
# Usage: bench/compare_reports.sh OLD_BIN NEW_BIN [DATA_DIR] [WORK_DIR]
#   OLD_BIN, NEW_BIN  two tracelens binaries (e.g. a copy built from the tree
#                     before a loader change, and the changed build)
#   DATA_DIR          where to find traces (default: <repo>/../shared/data)
#   WORK_DIR          where the reports go (default: a temporary folder,
#                     removed at the end; a given one is kept)
#
# For every *.json and *.json.gz under DATA_DIR (perf_report_csvs folders
# left out), runs `BIN report -q --platform none --no-xlsx FILE -o DIR` with
# each binary, then compares the exit status, the error output and every
# CSV file byte for byte (diff -r). Files that are not traces fail in both
# and must fail the same way. Prints one line per file (same / DIFFERENT)
# and exits 1 when any differs.
# Environment: TRACELENS_SCAN is passed on (e.g. TRACELENS_SCAN=fallback to
# compare the new build's portable classifier against the old build).
set -uo pipefail

die() { echo "compare_reports: $*" >&2; exit 2; }
[[ $# -ge 2 ]] || die "usage: bench/compare_reports.sh OLD_BIN NEW_BIN [DATA_DIR] [WORK_DIR]"
OLD=$1
NEW=$2
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DATA=${3:-$REPO/../shared/data}
[[ -x $OLD && -x $NEW ]] || die "both binaries must be executable: $OLD, $NEW"
[[ -d $DATA ]] || die "no data folder: $DATA"
if [[ $# -ge 4 ]]; then
    WORK=$4
    mkdir -p "$WORK" || die "cannot create $WORK"
else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/tracelens-cmp.XXXXXX")
    trap 'rm -rf "$WORK"' EXIT
fi

run() { # BIN FILE OUT -> writes OUT/rc, OUT/stderr, OUT/csv/...
    local bin=$1 file=$2 out=$3
    rm -rf "$out"
    mkdir -p "$out/csv"
    "$bin" report -q --platform none --no-xlsx "$file" -o "$out/csv" >"$out/stdout" 2>"$out/stderr"
    echo $? >"$out/rc"
    # the error text names the output folder: make it the same for both
    sed -i "s#$out/csv#OUT#g" "$out/stderr" "$out/stdout"
}

n=0 bad=0 ok_reports=0
while IFS= read -r -d '' f; do
    n=$((n + 1))
    key=$(printf '%s' "${f#"$DATA"/}" | tr '/' '_')
    run "$OLD" "$f" "$WORK/$key.old"
    run "$NEW" "$f" "$WORK/$key.new"
    if cmp -s "$WORK/$key.old/rc" "$WORK/$key.new/rc" && cmp -s "$WORK/$key.old/stderr" "$WORK/$key.new/stderr" &&
        diff -r -q "$WORK/$key.old/csv" "$WORK/$key.new/csv" >/dev/null; then
        rc=$(cat "$WORK/$key.old/rc")
        [[ $rc == 0 ]] && ok_reports=$((ok_reports + 1))
        echo "same       ${f#"$DATA"/} (exit $rc, $(find "$WORK/$key.new/csv" -name '*.csv' | wc -l) CSVs)"
    else
        bad=$((bad + 1))
        echo "DIFFERENT  ${f#"$DATA"/}"
        diff "$WORK/$key.old/rc" "$WORK/$key.new/rc" | sed 's/^/    rc: /'
        diff "$WORK/$key.old/stderr" "$WORK/$key.new/stderr" | head -5 | sed 's/^/    stderr: /'
        diff -r -q "$WORK/$key.old/csv" "$WORK/$key.new/csv" | head -5 | sed 's/^/    /'
    fi
done < <(find "$DATA" \( -name '*.json' -o -name '*.json.gz' \) -not -path '*perf_report_csvs*' -print0 | sort -z)

echo "# $n files, $ok_reports reports written by both, $bad different"
[[ $n -gt 0 ]] || die "no .json or .json.gz files under $DATA"
[[ $bad == 0 ]]

#!/usr/bin/env bash
# `mpirun -np P tracelens ranks ...` (docs/ranks.md "MPI"): the CSVs are
# byte-identical to the single-process run of the same binary on both shared
# cases (P = 2, 3 and 4, and P = 3 with the gather forced into many small
# rounds), and on hand-made traces when the shared data is absent; with the
# workbook (P = 2 and 3), its parts too (every zip entry's text, the creation
# dates of docProps/core.xml left out; needs python3); a corrupt rank trace
# gives the single-process run's one-line error and exit status 1.
# Needs a binary built with -DTRACELENS_MPI=ON and mpirun: otherwise SKIP
# (exit 77), unless TL_REQUIRE_MPI=1 (tests/run_all.sh), where it fails.
set -u
BIN=$1
SHARED=${3:-}
skip() {
  if [ "${TL_REQUIRE_MPI:-0}" = 1 ]; then echo "FAIL: $*" >&2; exit 1; fi
  echo "SKIP: $*"; exit 77
}
command -v mpirun >/dev/null 2>&1 || skip "no mpirun"
case "$(ldd "$BIN" 2>/dev/null)" in *libmpi*) ;; *) skip "$BIN is not an MPI build (-DTRACELENS_MPI=ON)" ;; esac
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
MPIRUN=(mpirun --oversubscribe --allow-run-as-root)
export OMPI_MCA_btl_vader_single_copy_mechanism=none # containers without CMA
# An AddressSanitizer build: what Open MPI allocates and never frees (libmpi,
# its plugins) is not tracelens' leak. Suppressed by library name, with the
# plugins kept loaded and full stacks so that every frame has its library.
case "$(ldd "$BIN" 2>/dev/null)" in *libasan*)
  printf 'leak:%s\n' libmpi.so libopen-pal.so libopen-rte.so libpmix.so mca_ libhwloc.so libevent libucp libucs libuct >"$T/lsan.supp"
  export LSAN_OPTIONS="${LSAN_OPTIONS:+$LSAN_OPTIONS:}suppressions=$T/lsan.supp"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
  export OMPI_MCA_mca_base_component_disable_dlclose=1
  MPIRUN+=(-x LSAN_OPTIONS -x ASAN_OPTIONS) ;;
esac

# same_workbook A B: the two workbooks hold the same parts with the same
# text (docProps/core.xml's creation and modification times aside); prints
# the first difference
same_workbook() {
  python3 - "$1" "$2" <<'PY'
import re, sys, zipfile
def parts(path):
    with zipfile.ZipFile(path) as z:
        d = {n: z.read(n) for n in z.namelist()}
    if "docProps/core.xml" in d:
        d["docProps/core.xml"] = re.sub(rb"<dcterms:(created|modified)[^>]*>[^<]*</dcterms:\1>", b"", d["docProps/core.xml"])
    return d
a, b = parts(sys.argv[1]), parts(sys.argv[2])
if sorted(a) != sorted(b):
    sys.exit("parts differ: %s / %s" % (sorted(a), sorted(b)))
for n in sorted(a):
    if a[n] != b[n]:
        sys.exit("part %s differs" % n)
PY
}
HAVE_PY=0
python3 -c 'import zipfile' 2>/dev/null && HAVE_PY=1

# run_case NAME DIR NP [options]: mpirun -np NP vs one process, CSVs compared;
# with XLSX=1 in the environment the workbook is written and compared too
run_case() {
  local name=$1 dir=$2 np=$3
  shift 3
  local nx=(--no-xlsx)
  [ "${XLSX:-0}" = 1 ] && nx=()
  "$BIN" ranks -q "$dir" "${nx[@]}" "$@" -o "$T/$name.single" 2>"$T/err" || { ko "$name single: $(cat "$T/err")"; return; }
  local x=()
  [ -n "${TRACELENS_MPI_CHUNK:-}" ] && x=(-x TRACELENS_MPI_CHUNK)
  if "${MPIRUN[@]}" "${x[@]}" -np "$np" "$BIN" ranks "$dir" "${nx[@]}" "$@" -o "$T/$name.mpi" >"$T/out" 2>"$T/err"; then ok
  else ko "$name mpirun -np $np: $(tail -5 "$T/err")"; return; fi
  grep -q "MPI: [0-9]* rank traces over $np processes" "$T/err" && ok || ko "$name: not spread over $np processes: $(head -3 "$T/err")"
  if diff -r "$T/$name.single/collective_report_csvs" "$T/$name.mpi/collective_report_csvs" >"$T/diff" 2>&1; then ok
  else ko "$name: mpirun -np $np differs from the single process: $(head -5 "$T/diff")"; fi
  if [ "${XLSX:-0}" = 1 ]; then
    if [ ! -s "$T/$name.mpi/collective_report.xlsx" ]; then ko "$name: mpirun -np $np wrote no workbook"
    elif [ $HAVE_PY = 0 ]; then echo "SKIP: $name: workbook not compared (no python3)"
    elif same_workbook "$T/$name.single/collective_report.xlsx" "$T/$name.mpi/collective_report.xlsx" 2>"$T/diff"; then ok
    else ko "$name: mpirun -np $np workbook differs from the single process: $(cat "$T/diff")"; fi
  fi
}

# mk FILE RANK TS DUR: one allreduce on group "0" of 2 ranks
mk() {
  printf '{"distributedInfo":{"rank":%s,"world_size":2},"traceEvents":[' "$2" >"$1"
  printf '{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":7,"ts":%s,"dur":%s,' "$3" "$4" >>"$1"
  printf '"args":{"correlation":1,"Process Group Name":"0","Process Group Ranks":"[0, 1]","Collective name":"allreduce",' >>"$1"
  printf '"Group size":2,"dtype":"Float","In msg nelems":1048576,"Out msg nelems":1048576,"In split size":"[]",' >>"$1"
  printf '"Out split size":"[]","stream":7}}]}' >>"$1"
}
mkdir "$T/good" "$T/bad"
mk "$T/good/rank0_trace.json" 0 100 50
mk "$T/good/rank1_trace.json" 1 110 40
run_case hand "$T/good" 2
XLSX=1 run_case hand.xlsx "$T/good" 3

# a corrupt rank: the single process's message, exit 1 on every process
cp "$T/good/rank0_trace.json" "$T/bad/"
printf '{"traceEvents":[{"name":"a"' >"$T/bad/rank1_trace.json"
"$BIN" ranks -q "$T/bad" -o "$T/bad.single" 2>"$T/err_single"
"${MPIRUN[@]}" -np 2 "$BIN" ranks -q "$T/bad" -o "$T/bad.mpi" >/dev/null 2>"$T/err"
rc=$?
[ $rc -ne 0 ] && ok || ko "corrupt rank under mpirun: exit 0"
grep -qxF "$(cat "$T/err_single")" "$T/err" && ok || ko "corrupt rank message: $(cat "$T/err") / expected $(cat "$T/err_single")"
[ ! -e "$T/bad.mpi" ] && ok || ko "corrupt rank under mpirun left output"

for c in world8 tp_dp_16; do
  D=$SHARED/multirank/$c/ranks
  if [ ! -d "$D" ]; then echo "SKIP: $D absent"; continue; fi
  opt=()
  [ $c = tp_dp_16 ] && opt=(--all2allv_heatmap)
  run_case "$c" "$D" 4 "${opt[@]}"
  # with the workbook, on 2 and 3 processes (3 does not divide the ranks evenly)
  XLSX=1 run_case "$c.xlsx2" "$D" 2 "${opt[@]}"
  XLSX=1 run_case "$c.xlsx3" "$D" 3 "${opt[@]}"
done
# several gather rounds (the path of > 2 GB of summaries), 3 processes
D=$SHARED/multirank/tp_dp_16/ranks
if [ -d "$D" ]; then
  export TRACELENS_MPI_CHUNK=4096
  run_case tp_dp_16_rounds "$D" 3 --all2allv_heatmap
  unset TRACELENS_MPI_CHUNK
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# run_ranks_bench.sh — benchmark of the multi-rank report (issue 15;
# bench/README.md "Multi-rank benchmark"). Not a test: it prints figures.
#
# Usage: bench/run_ranks_bench.sh [BUILD_DIR]
#   BUILD_DIR  a tracelens build, best one configured with -DTRACELENS_MPI=ON
#              (default: <repo>/build-mpi when it has tracelens, else <repo>/build);
#              without MPI in it, part (c) is skipped.
#
# Data (generated once by bench/gen_ranks.lua into BUILD_DIR/bench-data/, reused):
#   ranks32    32 ranks, --compute 5000 --launches --gzip: ~6.4 MB of JSON per
#              rank (10,000 compute kernels with their CPU op and
#              cudaLaunchKernel, 2 ProfilerSteps, the TP/DP collectives)
#   ranks1024  TRACELENS_BENCH_BIG ranks (default 1024), --steps 20 --compute 500
#              --launches --all2allv --gzip: ~6.5 MB of JSON and 160 collective
#              kernels per rank
# Parts:
#   (a) `tracelens ranks` on ranks32: one trace at a time (-j 1) and the
#       default (one thread per core); best of TRACELENS_BENCH_RUNS (3) runs;
#       against the reference's quoted ~4 s (Python TraceLens cannot be
#       installed here: no PyPI).
#   (b) ranks1024: single process (-j 1 and default), peak RSS; the map/reduce
#       path (summarize by xargs -P <cores>, then reduce): the reduce step's
#       time and memory alone.
#   (c) `mpirun -np 2` (and -np <cores> when more) against the single process
#       (-j 1) on ranks32 and ranks1024: wall time, CPU time (user + sys of all
#       processes) and each process's peak RSS. On ranks1024 in paired runs
#       (one process, then mpirun, TRACELENS_BENCH_RUNS times; medians and the
#       median of the per-pair ratios), CSVs only and with the workbook.
#       Open MPI's UCX PML probes for InfiniBand at MPI_Init (~0.2 s on a node
#       without it): unless OMPI_MCA_pml is set, the mpirun runs get
#       OMPI_MCA_pml=ob1 (said on stderr) and are also measured without it.
#       tracelens itself sets no MCA parameter (a cluster's own settings win).
#   (d) the per-GB CPU cost of the per-rank pass and the reduce cost per
#       collective record, for the projection in bench/README.md.
# Environment: TRACELENS_BENCH_RUNS (default 3), TRACELENS_BENCH_BIG (1024).
set -euo pipefail
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/.." && pwd)
if [ $# -ge 1 ]; then BUILD=$(cd "$1" && pwd)
elif [ -x "$REPO/build-mpi/tracelens" ]; then BUILD=$REPO/build-mpi
else BUILD=$REPO/build; fi
BIN=$BUILD/tracelens
RUNS=${TRACELENS_BENCH_RUNS:-3}
BIG=${TRACELENS_BENCH_BIG:-1024}
CORES=$(nproc)
die() { echo "run_ranks_bench: $*" >&2; exit 1; }
[ -x "$BIN" ] || die "no tracelens in $BUILD (build it first)"
[ -x /usr/bin/time ] || die "needs /usr/bin/time (Debian package time)"
MPI=0
case "$(ldd "$BIN" 2>/dev/null)" in *libmpi*) command -v mpirun >/dev/null 2>&1 && MPI=1 ;; esac
DATA=$BUILD/bench-data
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$DATA"

# gen NAME ARGS...: the traces, once (a stamp file records the arguments)
gen() {
  local name=$1
  shift
  local dir=$DATA/$name stamp="$*"
  if [ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$stamp" ]; then return; fi
  rm -rf "$dir"
  echo "generating $name: gen_ranks.lua $stamp" >&2
  "$BIN" run "$REPO/bench/gen_ranks.lua" -o "$dir" "$@" >&2
  echo "$stamp" >"$dir/.stamp"
}
gen ranks32 --ranks 32 --compute 5000 --launches --gzip
gen ranks1024 --ranks "$BIG" --steps 20 --compute 500 --launches --all2allv --gzip

json_mb() { for f in "$1"/rank*_trace.json.gz; do gzip -dc "$f"; done | wc -c | awk '{printf "%.0f", $1 / 1e6}'; }
gz_mb() { du -cb "$1"/rank*_trace.json.gz | tail -1 | awk '{printf "%.1f", $1 / 1e6}'; }

# timed LABEL CMD...: best wall of RUNS runs; prints "wall cpu rss_mb"
timed() {
  local runs=$1
  shift
  local best="" line
  for _ in $(seq "$runs"); do
    rm -rf "$T/out"
    /usr/bin/time -f "%e %U %S %M" -o "$T/time" "$@" >/dev/null 2>"$T/err" || { cat "$T/err" >&2; die "failed: $*"; }
    line=$(awk '{printf "%.2f %.2f %.0f", $1, $2 + $3, $4 / 1024}' "$T/time")
    if [ -z "$best" ] || awk -v a="$line" -v b="$best" 'BEGIN{split(a,x," ");split(b,y," ");exit !(x[1]<y[1])}'; then best=$line; fi
  done
  echo "$best"
}

# Open MPI on one node: its UCX PML probes for InfiniBand devices at
# MPI_Init (~0.2 s here, where there are none); ob1 (shared memory, TCP)
# does not. Set for the mpirun runs only when the user has not chosen a PML.
PML=user
if [ $MPI = 1 ] && [ -z "${OMPI_MCA_pml+x}" ]; then
  PML=ob1
  echo "run_ranks_bench: mpirun runs with OMPI_MCA_pml=ob1 (single node, no InfiniBand: Open MPI's UCX PML probes for it, ~0.2 s at MPI_Init); the default PML is measured too" >&2
fi

# mpi_timed PML NP ARGS...: one run; "wall cpu_all max_rss_mb max_cpu"
# (per-process /usr/bin/time; max_cpu: the busiest process's user + sys, what
# the wall time would be on idle cores). PML: ob1 (OMPI_MCA_pml=ob1), default
# (OMPI_MCA_pml unset) or user (the environment as it is).
mpi_timed() {
  local pml=$1 np=$2
  shift 2
  local envv=()
  [ "$pml" = ob1 ] && envv=(OMPI_MCA_pml=ob1)
  [ "$pml" = default ] && envv=(-u OMPI_MCA_pml)
  rm -rf "$T/out" "$T"/mt.*
  local t0 t1
  t0=$(date +%s.%N)
  env "${envv[@]}" mpirun --oversubscribe --allow-run-as-root -np "$np" bash -c \
    '/usr/bin/time -f "%e %U %S %M" -o "'"$T"'/mt.$OMPI_COMM_WORLD_RANK" "$0" "$@"' "$BIN" "$@" >/dev/null 2>"$T/err" ||
    { cat "$T/err" >&2; die "mpirun failed"; }
  t1=$(date +%s.%N)
  cat "$T"/mt.* | awk -v w="$(echo "$t1 - $t0" | bc)" '{c += $2 + $3; if ($4 > m) m = $4; if ($2 + $3 > x) x = $2 + $3}
    END {printf "%.2f %.2f %.0f %.2f", w, c, m / 1024, x}'
}

row() { printf '| %s | %s | %s s | %s s | %s MB |\n' "$1" "$2" "$3" "$4" "$5"; }

echo "tracelens: $BIN ($( [ $MPI = 1 ] && echo MPI build || echo no MPI)), $CORES cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
echo
A=$DATA/ranks32 Bd=$DATA/ranks1024
A_MB=$(json_mb "$A") B_MB=$(json_mb "$Bd")
echo "ranks32: $(gz_mb "$A") MB gz, $A_MB MB JSON; ranks1024 ($BIG ranks): $(gz_mb "$Bd") MB gz, $B_MB MB JSON"
echo
echo "| run | input | wall | CPU (user+sys) | peak RSS (max of the processes) |"
echo "|---|---|---|---|---|"
read -r w1 c1 m1 <<<"$(timed "$RUNS" "$BIN" ranks -q -j 1 "$A" --no-xlsx -o "$T/out")"
row "(a) ranks -j 1" "32 ranks" "$w1" "$c1" "$m1"
read -r wa ca ma <<<"$(timed "$RUNS" "$BIN" ranks -q "$A" --no-xlsx -o "$T/out")"
row "(a) ranks (-j $CORES)" "32 ranks" "$wa" "$ca" "$ma"
# with the workbook, as the reference writes one
read -r wx cx mx <<<"$(timed "$RUNS" "$BIN" ranks -q "$A" -o "$T/out")"
row "(a) ranks (-j $CORES), xlsx too" "32 ranks" "$wx" "$cx" "$mx"
read -r bw1 bc1 bm1 <<<"$(timed 1 "$BIN" ranks -q -j 1 "$Bd" --no-xlsx -o "$T/out")"
row "(b) ranks -j 1" "$BIG ranks" "$bw1" "$bc1" "$bm1"
read -r bw bc bm <<<"$(timed 1 "$BIN" ranks -q "$Bd" --no-xlsx -o "$T/out")"
row "(b) ranks (-j $CORES)" "$BIG ranks" "$bw" "$bc" "$bm"
# map/reduce: summarize every rank (as a job array would), then reduce
mkdir -p "$T/tls"
s0=$(date +%s.%N)
ls "$Bd"/rank*_trace.json.gz | xargs -P "$CORES" -I{} sh -c '"$0" ranks summarize "$1" -o "$2/$(basename "$1").tls"' "$BIN" {} "$T/tls"
s1=$(date +%s.%N)
printf '| (b) summarize x %s (xargs -P %s) | %s ranks | %.2f s | | |\n' "$BIG" "$CORES" "$BIG" "$(echo "$s1 - $s0" | bc)"
read -r rw rc rm_ <<<"$(timed 1 "$BIN" ranks reduce -q "$T"/tls/*.tls --no-xlsx -o "$T/out")"
row "(b) reduce of the $BIG .tls" "$(du -cb "$T"/tls/*.tls | tail -1 | awk '{printf "%.1f MB .tls", $1 / 1e6}')" "$rw" "$rc" "$rm_"
NREC=$(awk 'END {print NR - 1}' "$T/out/collective_report_csvs/nccl_long.csv" 2>/dev/null || echo 0)
# med FILE COL: the median of column COL of FILE
med() { sort -g -k"$2,$2" "$1" | awk -v c="$2" '{v[NR] = $c} END {printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
if [ $MPI = 1 ]; then
  read -r mw mc mm mx <<<"$(mpi_timed "$PML" 2 ranks -q "$A" --no-xlsx -o "$T/out")"
  row "(c) mpirun -np 2 ranks (busiest process: $mx s CPU)" "32 ranks" "$mw" "$mc" "$mm"
  # paired runs on the big set: one process (-j 1), then mpirun -np 2 (and
  # without ob1 when the script chose it); CSVs only, then with the workbook
  PMLS=$PML
  : >"$T/ratios"
  [ "$PML" = ob1 ] && PMLS="ob1 default"
  for X in csv xlsx; do
    xo=()
    [ $X = csv ] && xo=(--no-xlsx)
    : >"$T/pair.single"
    for p in $PMLS; do : >"$T/pair.$p"; done
    for _ in $(seq "$RUNS"); do
      timed 1 "$BIN" ranks -q -j 1 "$Bd" "${xo[@]}" -o "$T/out" >>"$T/pair.single"
      for p in $PMLS; do
        mpi_timed "$p" 2 ranks -q "$Bd" "${xo[@]}" -o "$T/out" >>"$T/pair.$p"
        echo >>"$T/pair.$p"
      done
    done
    lbl=$([ $X = csv ] && echo "--no-xlsx" || echo "with the xlsx")
    row "(c) ranks -j 1, $lbl (median of $RUNS)" "$BIG ranks" "$(med "$T/pair.single" 1)" "$(med "$T/pair.single" 2)" \
      "$(sort -g -k3,3 "$T/pair.single" | tail -1 | cut -d' ' -f3)"
    for p in $PMLS; do
      pl=$([ "$p" = ob1 ] && echo "OMPI_MCA_pml=ob1" || { [ "$p" = default ] && echo "default PML" || echo "OMPI_MCA_pml=${OMPI_MCA_pml:-unset}"; })
      row "(c) mpirun -np 2 ranks, $lbl, $pl (median of $RUNS; busiest process $(med "$T/pair.$p" 4) s CPU)" "$BIG ranks" \
        "$(med "$T/pair.$p" 1)" "$(med "$T/pair.$p" 2)" "$(sort -g -k3,3 "$T/pair.$p" | tail -1 | cut -d' ' -f3)"
      paste -d' ' "$T/pair.single" "$T/pair.$p" | awk '{print $1 / $4, $2 / $5}' >"$T/ratio.$X.$p"
      echo "    $lbl, $pl: $(med "$T/ratio.$X.$p" 1)x (best $(sort -g "$T/ratio.$X.$p" | tail -1 | cut -d' ' -f1 | xargs printf '%.2f')x); CPU $(med "$T/ratio.$X.$p" 2)x" >>"$T/ratios"
    done
  done
  if [ "$CORES" -gt 2 ]; then
    read -r mpw mpc mpm mpx <<<"$(mpi_timed "$PML" "$CORES" ranks -q "$Bd" --no-xlsx -o "$T/out")"
    row "(c) mpirun -np $CORES ranks (busiest process: $mpx s CPU)" "$BIG ranks" "$mpw" "$mpc" "$mpm"
  fi
fi
echo
awk -v w="$wa" -v w1="$w1" 'BEGIN {printf "(a) vs the reference (~4 s, quoted; not runnable here): %.1fx (default), %.1fx (-j 1)\n", 4 / w, 4 / w1}'
if [ $MPI = 1 ]; then
  awk -v s="$w1" -v m="$mw" -v cs="$c1" -v cm="$mx" 'BEGIN {
    printf "(c) mpirun -np 2 vs one process (-j 1) on 32 ranks: %.2fx wall; on idle cores (single CPU time / busiest MPI process CPU time) %.2fx\n", s / m, cs / cm }'
  echo "(c) mpirun -np 2 vs one process (-j 1) on $BIG ranks, paired runs (wall single / wall mpirun: median, best; CPU single / CPU of every MPI process: median):"
  cat "$T/ratios"
fi
awk -v c="$bc1" -v mb="$B_MB" -v rc="$rc" -v n="$NREC" 'BEGIN {
  printf "(d) per-rank pass: %.2f CPU s per GB of JSON (%.0f MB/s per core); reduce: %.0f CPU ns per collective record (%d records)\n",
    c / (mb / 1000), mb / c, (n > 0 ? rc * 1e9 / n : 0), n }'

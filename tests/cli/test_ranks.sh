#!/usr/bin/env bash
# `tracelens ranks` (docs/ranks.md): the formulas of the collective report on
# two hand-made rank traces, and the input errors — no traces, a corrupt
# rank trace, a file whose distributedInfo.rank disagrees with its name, a
# missing rank, a duplicate rank, a metadata mismatch — each one line on
# stderr naming the file (or the collective), exit 1, no output left behind.
set -u
BIN=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# mk FILE RANK DIST_RANK TS DUR DTYPE: one allreduce of 1Mi elements on group "0"
mk() {
  printf '{"distributedInfo":{"rank":%s,"world_size":2},"deviceProperties":[{},{}],"traceEvents":[' "$3" >"$1"
  printf '{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":7,"ts":%s,"dur":%s,' "$4" "$5" >>"$1"
  printf '"args":{"correlation":1,"Process Group Name":"0","Process Group Ranks":"[0, 1]","Collective name":"allreduce",' >>"$1"
  printf '"Group size":2,"dtype":"%s","In msg nelems":1048576,"Out msg nelems":1048576,"In split size":"[]",' "$6" >>"$1"
  printf '"Out split size":"[]","stream":7}},' >>"$1"
  printf '{"ph":"X","cat":"kernel","name":"ncclDevKernel_Broadcast_RING_LL","pid":0,"tid":7,"ts":1000,"dur":5,' >>"$1"
  printf '"args":{"correlation":2,"Process Group Name":"0","Collective name":"broadcast","Group size":2}}]}' >>"$1"
}

# ---- formulas: rank 0 arrives at 100 us (50 us), rank 1 at 110 us (40 us)
mkdir "$T/good"
mk "$T/good/rank0_trace.json" 0 0 100 50 Float
mk "$T/good/rank1_trace.json" 1 1 110 40 Float
if "$BIN" ranks -q "$T/good" -o "$T/out" 2>"$T/err"; then ok; else ko "good: $(cat "$T/err")"; fi
C=$T/out/collective_report_csvs
[ -f "$T/out/collective_report.xlsx" ] && ok || ko "good: no xlsx"
for s in nccl_summary_implicit_sync nccl_summary_long nccl_long nccl_implicit_sync straggler_summary; do
  [ -f "$C/$s.csv" ] && ok || ko "good: sheet $s missing"
done
[ ! -e "$C/nccl_all2allv.csv" ] && ok || ko "good: an all2allv sheet without all_to_allv"
# collective_id ... comm_latency, skew in start time, earliest arrival rank, avg_wait_time,
# skew in end time, algo bw = (4 MiB / 1024) / (40 us / 1e6) as Python computes it, bus bw = algo * 2 (n-1) / n
row=$(sed -n 2p "$C/nccl_implicit_sync.csv")
case "$row" in
  '0_0,0,"[0, 1]",allreduce,2,Float,1048576,1048576,4.0,4.0,4.0,40.0,10.0,0,5.0,0.0,97.65624999999999,97.65624999999999,100.0,50.0,110.0,40.0,10.0,0.0,intra_node') ok ;;
  *) ko "nccl_implicit_sync row: $row" ;;
esac
grep -q '^1,0.0,0.0,1,0,100.0,1,45.0,0$' "$C/straggler_summary.csv" && ok || ko "straggler rank 1: $(cat "$C/straggler_summary.csv")"
grep -q '^0,10.0,10.0,0,1,0.0,1,55.0,0$' "$C/straggler_summary.csv" && ok || ko "straggler rank 0: $(cat "$C/straggler_summary.csv")"
[ "$(sed -n 2p "$C/straggler_summary.csv" | cut -d, -f1)" = 1 ] && ok || ko "straggler not sorted by total wait"
# nccl_long: rank-major, the broadcast (no Process Group Ranks) kept with node_span unknown
[ "$(wc -l <"$C/nccl_long.csv")" -eq 5 ] && ok || ko "nccl_long rows: $(cat "$C/nccl_long.csv")"
grep -q '^0_1,1,1,0,,broadcast,2,.*,1000.0,5.0,0,unknown$' "$C/nccl_long.csv" && ok || ko "nccl_long broadcast: $(cat "$C/nccl_long.csv")"
# [FIX D1] the broadcast row (None keys) stays in nccl_summary_long
grep -q ',broadcast,' "$C/nccl_summary_long.csv" && ok || ko "summary_long lost the None-key rows"
# the same through --trace_glob and --trace_pattern
"$BIN" ranks -q --trace_glob "$T/good/*.json" -o "$T/out_glob" 2>"$T/err" && cmp -s "$C/nccl_implicit_sync.csv" "$T/out_glob/collective_report_csvs/nccl_implicit_sync.csv" && ok || ko "glob: $(cat "$T/err")"
"$BIN" ranks -q --trace_pattern "$T/good/rank*_trace.json" --world_size 2 --no-xlsx -o "$T/out_pat" 2>"$T/err" && cmp -s "$C/nccl_long.csv" "$T/out_pat/collective_report_csvs/nccl_long.csv" && ok || ko "pattern: $(cat "$T/err")"


# ---- simplified mode (no process-group metadata, one stream per rank):
# collectives matched by position; ids 0, 1; group "all"; node_span unknown
mkdir "$T/simple"
for r in 0 1; do
  printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"cross_device_reduce_1stage","pid":0,"tid":7,"ts":%s,"dur":10,"args":{"correlation":1,"stream":7}},' $((100 + r)) >"$T/simple/rank${r}_trace.json"
  printf '{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllGather_RING_LL","pid":0,"tid":7,"ts":%s,"dur":10,"args":{"correlation":2,"stream":7}}]}' $((200 + 3 * r)) >>"$T/simple/rank${r}_trace.json"
done
"$BIN" ranks -q "$T/simple" -o "$T/out_simple" 2>"$T/err" && ok || ko "simplified: $(cat "$T/err")"
S=$T/out_simple/collective_report_csvs
grep -q '^0,all,,allreduce,,,,,,,,10.0,1.0,0,0.5,1.0,,,' "$S/nccl_implicit_sync.csv" && ok || ko "simplified allreduce: $(cat "$S/nccl_implicit_sync.csv")"
grep -q '^1,all,,,,,,,,,,10.0,3.0,0,1.5,3.0,,,' "$S/nccl_implicit_sync.csv" && ok || ko "simplified unnamed: $(cat "$S/nccl_implicit_sync.csv")"
# no bandwidth columns without sizes: 20 columns
[ "$(head -1 "$S/nccl_summary_implicit_sync.csv" | tr ',' '\n' | wc -l)" -eq 20 ] && ok || ko "simplified summary header: $(head -1 "$S/nccl_summary_implicit_sync.csv")"

# ---- no collective kernel at all: the four always-written sheets, empty, and a warning
mkdir "$T/nocoll"
for r in 0 1; do
  printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1,"dur":2,"args":{"correlation":1}}]}' >"$T/nocoll/rank${r}_trace.json"
done
"$BIN" ranks -q "$T/nocoll" -o "$T/out_nocoll" 2>"$T/err" && grep -q "warning: no NCCL collective" "$T/err" && ok || ko "no collectives: $(cat "$T/err")"
# (the per-rank sheets beyond the reference, docs/ranks.md, come on top)
[ "$(ls "$T/out_nocoll/collective_report_csvs" | grep -v -E '^(rank_|collective_skew_outliers|node_bandwidth|missing_ranks)' | tr '\n' ' ')" = "nccl_implicit_sync.csv nccl_long.csv nccl_summary_implicit_sync.csv nccl_summary_long.csv " ] && ok || ko "no collectives: $(ls "$T/out_nocoll/collective_report_csvs")"

# ---- a rank without the collective its group says it took part in: a warning
mkdir "$T/member"
for r in 0 1; do sed 's/"\[0, 1\]"/"[0, 1, 2]"/' "$T/good/rank${r}_trace.json" >"$T/member/rank${r}_trace.json"; done
printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":1,"dur":2,"args":{"correlation":1}}]}' >"$T/member/rank2_trace.json"
"$BIN" ranks -q --no-xlsx "$T/member" -o "$T/out_member" 2>"$T/err" && ok || ko "membership: $(cat "$T/err")"
grep -q "warning: 1 collective(s) whose ranks are not their Process Group Ranks (first: 0_0 has ranks 0,1 of \[0, 1, 2\])" "$T/err" && ok || ko "membership warning: $(cat "$T/err")"

expect_error() { # name pattern args...
  local name=$1 pat=$2 out="$T/out_$1"
  shift 2
  "$BIN" ranks -q "$@" -o "$out" 2>"$T/err" >/dev/null
  local rc=$?
  [ "$rc" -eq 1 ] && ok || ko "$name: exit $rc, expected 1"
  [ "$(wc -l <"$T/err")" -eq 1 ] && ok || ko "$name: stderr is not one line: $(cat "$T/err")"
  grep -q -- "$pat" "$T/err" && ok || ko "$name: stderr lacks '$pat': $(cat "$T/err")"
  [ ! -e "$out" ] && ok || ko "$name: output left behind"
}

mkdir "$T/empty"
expect_error none "no rank traces found: $T/empty/rank0_trace.json.gz does not exist" "$T/empty"
expect_error noglob "no files matched --trace_glob" --trace_glob "$T/empty/*.json"

mkdir "$T/bad"
cp "$T/good/rank0_trace.json" "$T/bad/"
printf '{"traceEvents":[{"name":"a"' >"$T/bad/rank1_trace.json"
expect_error corrupt "$T/bad/rank1_trace.json: byte" "$T/bad"

mkdir "$T/mismatch"
cp "$T/good/rank0_trace.json" "$T/mismatch/"
mk "$T/mismatch/rank1_trace.json" 1 0 110 40 Float
expect_error rank_mismatch "file $T/mismatch/rank1_trace.json says rank 0, name says 1" "$T/mismatch"

expect_error missing "expected trace file not found: $T/good/rank2_trace.json" "$T/good" --world_size 3

mkdir "$T/dup"
mk "$T/dup/a_trace.json" 0 0 100 50 Float
mk "$T/dup/b_trace.json" 0 0 110 40 Float
expect_error duplicate "b_trace.json: rank 0 given twice" --trace_glob "$T/dup/*.json" --rank-from distinfo

mkdir "$T/meta"
cp "$T/good/rank0_trace.json" "$T/meta/"
mk "$T/meta/rank1_trace.json" 1 1 110 40 Half
expect_error metadata "metadata mismatch in 'dtype' for collective 0_0: Float (rank 0), Half (rank 1)" "$T/meta"
# --no-strict-metadata: a warning, the lowest rank's values
"$BIN" ranks -q --no-strict-metadata "$T/meta" -o "$T/out_meta" 2>"$T/err" && grep -q "warning: metadata mismatch" "$T/err" && ok || ko "no-strict-metadata: $(cat "$T/err")"

"$BIN" ranks "$T/good" >/dev/null 2>&1
[ $? -eq 2 ] && ok || ko "no -o: expected usage error"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# `tracelens ranks`: how the rank traces are resolved when something is wrong
# (docs/ranks.md "Inputs"): a missing rank (DIR, pattern, glob), a duplicate
# rank, a corrupt rank trace (truncated JSON, bad gzip, empty file), an empty
# folder — each one line `tracelens: ...` on stderr, exit 1, nothing written —
# and --allow-missing-ranks, which writes the report without those ranks and
# names them (stderr and the sheet missing_ranks).
set -u
BIN=$1 ROOT=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# mk FILE RANK TS [WORLD]: one allreduce on the world group of 3 ranks, one gemm before it
mk() {
  printf '{"distributedInfo":{"rank":%s,"world_size":%s},"traceEvents":[' "$2" "${4:-3}" >"$1"
  printf '{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":10,"dur":50,"args":{"correlation":9,"stream":7}},' >>"$1"
  printf '{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":7,"ts":%s,"dur":40,' "$3" >>"$1"
  printf '"args":{"correlation":1,"Process Group Name":"0","Process Group Ranks":"[0, 1, 2]","Collective name":"allreduce",' >>"$1"
  printf '"Group size":3,"dtype":"Float","In msg nelems":1024,"Out msg nelems":1024,"stream":7}}]}' >>"$1"
}

expect_error() { # name pattern args...
  local name=$1 pat=$2 out="$T/out_$1"
  shift 2
  "$BIN" ranks -q "$@" -o "$out" 2>"$T/err" >/dev/null
  local rc=$?
  [ "$rc" -eq 1 ] && ok || ko "$name: exit $rc, expected 1"
  [ "$(wc -l <"$T/err")" -eq 1 ] && ok || ko "$name: stderr is not one line: $(cat "$T/err")"
  head -c 11 "$T/err" | grep -q '^tracelens: ' && ok || ko "$name: stderr does not start with 'tracelens: '"
  grep -q -- "$pat" "$T/err" && ok || ko "$name: stderr lacks '$pat': $(cat "$T/err")"
  [ ! -e "$out" ] && ok || ko "$name: output left behind"
}

mkdir "$T/gap"
mk "$T/gap/rank0_trace.json" 0 100
mk "$T/gap/rank2_trace.json" 2 130

# ---- a missing rank
expect_error missing_dir "expected trace file not found: $T/gap/rank1_trace.json.gz" "$T/gap" --world_size 3
expect_error missing_pattern "expected trace file not found: $T/gap/rank1_trace.json" --trace_pattern "$T/gap/rank*_trace.json" --world_size 3
expect_error missing_glob "missing ranks after resolution: \[1\] (a complete rank set 0..2 is required)" --trace_glob "$T/gap/*.json"

# ---- a duplicate rank: by distributedInfo, and a name that disagrees with its trace
mkdir "$T/dup" "$T/dup2"
mk "$T/dup/a.json" 1 100
mk "$T/dup/b.json" 1 110
mk "$T/dup/c.json" 0 120
expect_error duplicate "$T/dup/b.json: rank 1 given twice" --trace_glob "$T/dup/*.json" --rank-from distinfo
mk "$T/dup2/rank0_trace.json" 0 100 2
mk "$T/dup2/rank1_trace.json" 0 110 2
expect_error duplicate_name "file $T/dup2/rank1_trace.json says rank 0, name says 1" "$T/dup2"
# two files named for one rank: the first in path order is used, and said
mkdir "$T/twice"
mk "$T/twice/rank0_a.json" 0 100
mk "$T/twice/rank0_b.json" 0 105
mk "$T/twice/rank1_a.json" 1 110
mk "$T/twice/rank2_a.json" 2 120
"$BIN" ranks -q --no-xlsx --trace_glob "$T/twice/*.json" -o "$T/out_twice" 2>"$T/err" && ok || ko "twice: $(cat "$T/err")"
grep -q "warning: $T/twice/rank0_b.json ignored: rank 0 is already $T/twice/rank0_a.json" "$T/err" && ok || ko "twice: $(cat "$T/err")"

# ---- a corrupt rank trace: truncated JSON, a broken gzip, an empty file
for kind in json gz empty; do
  d="$T/corrupt_$kind"
  mkdir "$d"
  mk "$d/rank0_trace.json" 0 100
  mk "$d/rank2_trace.json" 2 130
  case $kind in
    json) printf '{"traceEvents":[{"ph":"X","name":"a"' >"$d/rank1_trace.json"; f="$d/rank1_trace.json" ;;
    gz) mk "$T/r1.json" 1 110; gzip -c "$T/r1.json" | head -c 40 >"$d/rank1_trace.json.gz"; f="$d/rank1_trace.json.gz" ;;
    empty) : >"$d/rank1_trace.json"; f="$d/rank1_trace.json" ;;
  esac
  expect_error "corrupt_$kind" "$f" "$d" --world_size 3
done

# ---- an empty folder
mkdir "$T/empty"
expect_error empty "no rank traces found: $T/empty/rank0_trace.json.gz does not exist" "$T/empty"
expect_error empty_world "expected trace file not found: $T/empty/rank0_trace.json.gz" "$T/empty" --world_size 2
expect_error empty_glob "no files matched --trace_glob: $T/empty/\*.json" --trace_glob "$T/empty/*.json"
# ---- traces named otherwise (HTA's sampled_rank-0.json.gz): the error says how to give them, and that works
mkdir "$T/other_names"
for r in 0 1 2; do mk "$T/other_names/job7_rank-$r.json" $r $((100 + r)); done
expect_error other_names "no rank traces found: $T/other_names/rank0_trace.json.gz does not exist ($T/other_names holds 3 trace files named otherwise, e.g. job7_rank-0.json: give them with --trace_glob '$T/other_names/\*.json', the rank from --rank_regex)" "$T/other_names"
"$BIN" ranks -q --no-xlsx --trace_glob "$T/other_names/*.json" -o "$T/out_other_names" 2>"$T/err" && ok || ko "other names by the glob the error gives: $(cat "$T/err")"
# the orchestrator's --ranks says the same, and takes the same --trace_glob
"$BIN" run "$ROOT/lua/orchestrator.lua" --ranks "$T/other_names" -q -o "$T/out_other_orch" 2>"$T/err" >/dev/null
rc=$?
if [ $rc -eq 1 ] && grep -q "holds 3 trace files named otherwise, e.g. job7_rank-0.json: give them with --trace_glob '$T/other_names/\\*.json', the rank from --rank_regex)" "$T/err"; then ok
else ko "orchestrator --ranks, other names: exit $rc, $(cat "$T/err")"; fi
"$BIN" run "$ROOT/lua/orchestrator.lua" --trace_glob "$T/other_names/*.json" -q -o "$T/out_other_orch" 2>"$T/err" >/dev/null &&
  cmp -s "$T/out_other_names/collective_report_csvs/nccl_long.csv" "$T/out_other_orch/collective_report_csvs/nccl_long.csv" &&
  ok || ko "orchestrator --trace_glob, other names: $(cat "$T/err")"

# ---- --allow-missing-ranks: the report without rank 1, which is named
"$BIN" ranks -q --no-xlsx --allow-missing-ranks "$T/gap" --world_size 3 -o "$T/out_allow" 2>"$T/err"
[ $? -eq 0 ] && ok || ko "allow: $(cat "$T/err")"
grep -q "warning: 1 missing rank(s) left out: \[1\] (sheet missing_ranks)" "$T/err" && ok || ko "allow warning: $(cat "$T/err")"
A=$T/out_allow/collective_report_csvs
[ "$(cat "$A/missing_ranks.csv")" = "rank,reason
1,no trace file" ] && ok || ko "allow missing_ranks: $(cat "$A/missing_ranks.csv" 2>&1)"
[ "$(cut -d, -f1 "$A/straggler_summary.csv" | tail -n +2 | sort | tr '\n' ' ')" = "0 2 " ] && ok || ko "allow straggler ranks: $(cat "$A/straggler_summary.csv")"
[ "$(cut -d, -f1 "$A/rank_temporal_breakdown.csv" | tail -n +2 | tr '\n' ' ')" = "0 2 " ] && ok || ko "allow breakdown ranks: $(cat "$A/rank_temporal_breakdown.csv")"
# the same through a glob (world size from the highest rank) and a pattern
"$BIN" ranks -q --no-xlsx --allow-missing-ranks --trace_glob "$T/gap/*.json" -o "$T/out_allow_glob" 2>"$T/err" &&
  cmp -s "$A/missing_ranks.csv" "$T/out_allow_glob/collective_report_csvs/missing_ranks.csv" && ok || ko "allow glob: $(cat "$T/err")"
"$BIN" ranks -q --no-xlsx --allow-missing-ranks --trace_pattern "$T/gap/rank*_trace.json" --world_size 3 -o "$T/out_allow_pat" 2>"$T/err" &&
  cmp -s "$A/nccl_long.csv" "$T/out_allow_pat/collective_report_csvs/nccl_long.csv" && ok || ko "allow pattern: $(cat "$T/err")"
# a corrupt rank is left out too, with its error
"$BIN" ranks -q --no-xlsx --allow-missing-ranks "$T/corrupt_json" --world_size 3 -o "$T/out_allow_bad" 2>"$T/err"
[ $? -eq 0 ] && ok || ko "allow corrupt: $(cat "$T/err")"
grep -q "warning: rank 1 left out (--allow-missing-ranks): $T/corrupt_json/rank1_trace.json" "$T/err" && ok || ko "allow corrupt warning: $(cat "$T/err")"
grep -q '^1,trace unreadable$' "$T/out_allow_bad/collective_report_csvs/missing_ranks.csv" && ok || ko "allow corrupt sheet"
# without a complete report nothing to name: no missing_ranks sheet
"$BIN" ranks -q --no-xlsx --allow-missing-ranks "$T/dup2" --world_size 1 -o "$T/out_allow_full" 2>"$T/err" && ok || ko "allow full: $(cat "$T/err")"
[ ! -e "$T/out_allow_full/collective_report_csvs/missing_ranks.csv" ] && ok || ko "allow full: missing_ranks written"
# DIR and pattern need --world_size (usage, exit 2); no rank readable at all is an error
"$BIN" ranks -q --allow-missing-ranks "$T/gap" -o "$T/out_allow_nows" 2>"$T/err"
[ $? -eq 2 ] && grep -q "allow-missing-ranks needs --world_size" "$T/err" && ok || ko "allow without world size: $(cat "$T/err")"
mkdir "$T/allbad"
for r in 0 1; do printf '{' >"$T/allbad/rank${r}_trace.json"; done
"$BIN" ranks -q --allow-missing-ranks "$T/allbad" --world_size 2 -o "$T/out_allow_none" 2>"$T/err"
[ $? -eq 1 ] && ok || ko "allow none: exit status"
[ "$(tail -1 "$T/err")" = "tracelens: no rank trace could be read (--allow-missing-ranks needs at least one)" ] && ok || ko "allow none: $(cat "$T/err")"
[ ! -e "$T/out_allow_none" ] && ok || ko "allow none: output left behind"

# a glob for part of the job: the world group lists ranks 0..3, only 0 and 1
# are given; the membership warning names the ranks without a trace instead
# of blaming a missed collective
mkdir -p "$T/part"
for r in 0 1; do mk "$T/part/r$r.json" $r 100 4; sed -i 's/\[0, 1, 2\]/[0, 1, 2, 3]/; s/"Group size":3/"Group size":4/' "$T/part/r$r.json"; done
"$BIN" ranks -q --no-xlsx --world_size 2 --trace_glob "$T/part/*.json" --rank-from distinfo -o "$T/out_part" 2>"$T/err" >/dev/null
grep -q "list ranks beyond the 2 rank traces given (first: .* has ranks 0,1 of \\[0, 1, 2, 3\\]; ranks not given: 2,3): these collectives are matched over the ranks given only" "$T/err" && ok || ko "part of the job: $(cat "$T/err")"
grep -q "probably missed a collective" "$T/err" && ko "part of the job: blamed a missed collective" || ok

# usage errors: one line pointing at --help, as every command's
for args in "$T/gap --trace_glob G" "$T/gap --agg_metrics mean bogus"; do
  # shellcheck disable=SC2086
  "$BIN" ranks $args -o "$T/out_usage" 2>"$T/err" >/dev/null
  rc=$?
  [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q '(see `tracelens ranks --help`)$' "$T/err" && ok \
    || ko "usage error '$args': exit $rc, $(cat "$T/err")"
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

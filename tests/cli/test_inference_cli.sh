#!/usr/bin/env bash
# `tracelens report --inference`: the inference options' usage errors exit 2
# and write nothing; bad capture folders (no traces, a corrupt
# execution_details.json, another run's captures) exit 1 with one line on
# stderr and write nothing; without a capture folder a replay trace gets one
# warning about its graph launches and the report's inference defaults.
# Capture folders are always copies: ../shared is never written.
set -u
BIN=$1 DATA=${3:-}
INF=$DATA/inference
if [ -z "$DATA" ] || [ ! -d "$INF/vllm_decode_full" ] || [ ! -d "$INF/sglang_decode" ]; then
  echo "../shared/data/inference not found: inference CLI test skipped"
  exit 77
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

run() { # expected-rc description args...
  local want=$1 what=$2; shift 2
  (cd "$T" && "$BIN" report "$@") >"$T/out" 2>"$T/err"
  local rc=$?
  [ "$rc" -eq "$want" ] && ok || ko "$what: exit $rc, expected $want ($(head -c 400 "$T/err"))"
}
one_line() { [ "$(wc -l <"$T/err")" -eq 1 ] && ok || ko "$1: not one line: $(cat "$T/err")"; }

VLLM=$INF/vllm_decode_full/graph_execution.json.gz
SGL=$INF/sglang_decode/sglang_Qwen3-8B_decode.json.gz
cp -r "$INF/vllm_decode_full/capture_traces" "$T/vcap"
cp -r "$INF/sglang_decode/capture_traces" "$T/scap"
chmod -R u+w "$T/vcap" "$T/scap"

# help
run 0 "--help" --help
grep -q -- '--capture_folder' "$T/out" && ok || ko "--help lists --capture_folder"
grep -q 'never modified' "$T/out" && ok || ko "--help says the capture folder is never modified"
grep -q 'execution_details.json' "$T/out" && ok || ko "--help names execution_details.json"

# usage errors: exit 2, nothing written
run 2 "--comparison_capture_folder without --comparison_json_path" "$VLLM" --inference \
  --comparison_capture_folder "$T/vcap" -o o1
grep -q -- '--comparison_capture_folder requires --comparison_json_path' "$T/err" && ok || ko "comparison capture: message"
run 2 "--group_by_parent_module without --inference" "$VLLM" --group_by_parent_module -o o1
run 2 "--capture_folder without --inference" "$VLLM" --capture_folder "$T/vcap" -o o1
run 2 "--capture_folder without a value" "$VLLM" --inference --capture_folder
[ ! -e "$T/o1" ] && ok || ko "usage errors wrote something"

# input errors: exit 1, one line, nothing written
mkdir -p "$T/empty"
run 1 "capture folder without traces" "$VLLM" --inference -q --capture_folder "$T/empty" -o o2
one_line "no traces"
grep -q 'empty' "$T/err" && ok || ko "no traces: names the folder: $(cat "$T/err")"
run 1 "missing capture folder" "$VLLM" --inference -q --capture_folder "$T/nope" -o o2
one_line "missing folder"
cp -r "$T/vcap" "$T/bad"
printf '[{"file": "x.json.gz", "batch_size": ' >"$T/bad/execution_details.json"
run 1 "corrupt execution_details.json" "$VLLM" --inference -q --capture_folder "$T/bad" -o o2
one_line "corrupt execution_details.json"
grep -q 'execution_details.json' "$T/err" && ok || ko "corrupt details: names the file: $(cat "$T/err")"
run 1 "another run's capture folder" "$VLLM" --inference -q --capture_folder "$T/scap" -o o2
one_line "another run's captures"
grep -q 'graph launch' "$T/err" && ok || ko "another run's captures: message: $(cat "$T/err")"
[ ! -e "$T/o2" ] && ok || ko "input errors wrote something"
cmp -s "$T/vcap/execution_details.json" "$INF/vllm_decode_full/capture_traces/execution_details.json" && ok \
  || ko "the capture folder's execution_details.json was changed"

# no capture folder: one warning, the inference defaults
run 0 "no capture folder" "$VLLM" --inference --group_by_parent_module --no-xlsx -o o3
[ "$(grep -c 'graph launches but no --capture_folder' "$T/err")" -eq 1 ] && ok || ko "graph-launch warning: $(cat "$T/err")"
grep -q 'has 1 graph launches' "$T/err" && ok || ko "warning counts the launches"
S=$T/o3/perf_report_csvs
[ -f "$S/ops_summary.csv" ] && [ -f "$S/unified_perf_summary.csv" ] && ok || ko "sheets written"
[ ! -e "$S/kernel_summary.csv" ] && [ ! -e "$S/short_kernel_histogram.csv" ] && ok || ko "kernel sheets off by default"
head -1 "$S/ops_summary.csv" | grep -q '^name,parent_module,total_direct_kernel_time_sum,total_subtree_kernel_time_sum,total_subtree_kernel_time_count,total_direct_kernel_time_ms,Count,Categories,call_stack_first,' \
  && ok || ko "ops_summary module header: $(head -1 "$S/ops_summary.csv")"
run 0 "kernel sheets asked for" "$VLLM" --inference --enable_kernel_summary --short_kernel_study -q --no-xlsx -o o4
[ -f "$T/o4/perf_report_csvs/kernel_summary.csv" ] && [ -f "$T/o4/perf_report_csvs/short_kernel_histogram.csv" ] \
  && ok || ko "--enable_kernel_summary --short_kernel_study"
head -1 "$T/o4/perf_report_csvs/ops_summary.csv" | grep -q '^name,total_direct_kernel_time_sum,total_subtree_kernel_time_sum,total_subtree_kernel_time_count,total_direct_kernel_time_ms,Count,Categories,Percentage' \
  && ok || ko "ops_summary without modules: $(head -1 "$T/o4/perf_report_csvs/ops_summary.csv")"
# the dashed spellings
run 0 "dashed aliases" "$SGL" --inference --group-by-parent-module --capture-folder "$T/scap" -q --no-xlsx -o o5
grep -q 'parent_module' "$T/o5/perf_report_csvs/ops_unique_args.csv" && ok || ko "dashed: ops_unique_args parent_module"
[ -z "$(cat "$T/err")" ] && ok || ko "-q with a capture folder printed: $(cat "$T/err")"

# a comparison with both traces merged
run 0 "--comparison_capture_folder" "$VLLM" --inference -q --no-xlsx --capture_folder "$T/vcap" \
  --comparison_json_path "$VLLM" --comparison_capture_folder "$T/vcap" -o o6
head -1 "$T/o6/perf_report_csvs/unified_perf_summary.csv" | grep -q 'speedup (trace2/trace1)' && ok \
  || ko "comparison: the TraceDiff columns"
grep -q '^vllm::unified_attention_with_output,' "$T/o6/perf_report_csvs/ops_summary.csv" && ok \
  || ko "comparison: the merged ops in ops_summary"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

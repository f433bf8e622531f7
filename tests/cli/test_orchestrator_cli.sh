#!/usr/bin/env bash
# The orchestrator's everyday command line: the default output directory is
# one per trace (<trace dir>/<trace name>_analysis, <t1>_vs_<t2>_analysis
# with --compare); a normal run prints progress and a summary, not the
# analyzers' checks or the timing block (those with -v); -q leaves stdout
# to the summary; --extension-file reaches the perf report.
# Usage: test_orchestrator_cli.sh TRACELENS REPO_ROOT [SHARED_DATA]
set -u
BIN=$1 ROOT=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

cp "$ROOT/examples/demo_trace.json" "$T/a.json"
cp "$ROOT/examples/demo_trace.json" "$T/b.json"
(cd "$T" && "$BIN" run orchestrator.lua a.json >out1 2>err1)
[ $? -eq 0 ] && ok || ko "default run: $(tail -3 "$T/err1")"
[ -f "$T/a_analysis/analysis.md" ] && ok || ko "default output directory a_analysis/: $(ls "$T")"
grep -q "^analysis: a_analysis/analysis.md" "$T/out1" && ok || ko "summary names the directory: $(cat "$T/out1")"
grep -q "running [0-9]* analyzers" "$T/err1" && ok || ko "progress printed: $(cat "$T/err1")"
grep -Eq "^  (load|total) +[0-9.]+ s" "$T/err1" && ko "timing block printed without -v" || ok
grep -q "check coverage_check" "$T/err1" && ko "analyzer checks printed without -v" || ok
(cd "$T" && "$BIN" run orchestrator.lua a.json --compare b.json -q >out2 2>err2)
[ $? -eq 0 ] && ok || ko "comparative run: $(tail -3 "$T/err2")"
[ -f "$T/a_vs_b_analysis/analysis.md" ] && ok || ko "default comparative directory a_vs_b_analysis/: $(ls "$T")"
[ ! -s "$T/err2" ] && ok || ko "-q: nothing on stderr: $(cat "$T/err2")"
[ "$(wc -l <"$T/out2")" -eq 3 ] && ok || ko "-q: stdout holds the three summary lines: $(cat "$T/out2")"
(cd "$T" && "$BIN" run orchestrator.lua a.json -v -o v >out3 2>err3)
grep -Eq "^  total +[0-9.]+ s" "$T/err3" && ok || ko "-v: the timing block: $(tail -5 "$T/err3")"
(cd "$T" && "$BIN" run orchestrator.lua a.json -q -v >/dev/null 2>err4)
[ $? -eq 2 ] && grep -q "mutually exclusive" "$T/err4" && ok || ko "-q -v: usage error: $(cat "$T/err4")"
# the extension's category override reaches the report the analysis reads
(cd "$T" && "$BIN" run orchestrator.lua a.json --extension-file "$ROOT/examples/extension.lua" -o e -q >/dev/null 2>err5)
[ $? -eq 0 ] && ok || ko "--extension-file run: $(cat "$T/err5")"
grep -q "aten::gelu_backward,activation" "$T/e/perf_report_csvs/ops_summary_by_category.csv" "$T/e/perf_report_csvs/unified_perf_summary.csv" 2>/dev/null ||
  grep -q "activation" "$T/e/perf_report_csvs/ops_summary_by_category.csv" && ok || ko "--extension-file: the override is in the report"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

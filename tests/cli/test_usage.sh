#!/usr/bin/env bash
# Usage errors exit 2 with one line pointing to the command's --help;
# --help and --version exit 0.
set -u
BIN=$1 ROOT=$2
pass=0 fail=0
check() { # expected-rc description cmd...
  local want=$1 what=$2; shift 2
  "$@" >/tmp/tl_usage_out.$$ 2>&1
  local rc=$?
  if [ "$rc" -eq "$want" ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $what: exit $rc, expected $want" >&2; fi
}
check 0 "--version" "$BIN" --version
grep -q '^tracelens [0-9]' /tmp/tl_usage_out.$$ || { fail=$((fail + 1)); echo "FAIL: version text" >&2; }
check 0 "--help" "$BIN" --help
grep -q 'report TRACE -o DIR' /tmp/tl_usage_out.$$ || { fail=$((fail + 1)); echo "FAIL: help text" >&2; }
for sub in run report repl validate; do check 0 "$sub --help" "$BIN" "$sub" --help; done
check 2 "no command" "$BIN"
check 2 "unknown command" "$BIN" frobnicate
check 2 "report without trace" "$BIN" report -o /tmp/x
check 2 "report without -o" "$BIN" report "$ROOT/examples/demo_trace.json"
check 2 "report unknown option" "$BIN" report --bogus "$ROOT/examples/demo_trace.json" -o /tmp/x
grep -q "^tracelens: report: unknown option '--bogus' (see \`tracelens report --help\`)$" /tmp/tl_usage_out.$$ &&
  [ "$(wc -l </tmp/tl_usage_out.$$)" -eq 1 ] || { fail=$((fail + 1)); echo "FAIL: a usage error is one line: $(cat /tmp/tl_usage_out.$$)" >&2; }
check 2 "report unknown platform (before loading)" "$BIN" report /nonexistent.json --platform XYZ -o /tmp/x
grep -q "unknown GPU platform 'XYZ'" /tmp/tl_usage_out.$$ && [ "$(wc -l </tmp/tl_usage_out.$$)" -eq 1 ] ||
  { fail=$((fail + 1)); echo "FAIL: unknown platform: $(cat /tmp/tl_usage_out.$$)" >&2; }
check 1 "report unreadable --arch" "$BIN" report "$ROOT/examples/demo_trace.json" --arch /nonexistent.json -o /tmp/x
check 2 "run without script" "$BIN" run
check 2 "run bad -j" "$BIN" run -j zero x.lua
check 1 "run missing script" "$BIN" run /nonexistent/script.lua
check 1 "run failing script" "$BIN" run "$ROOT/tests/cli/failing.lua"
grep -q 'failing.lua:3: deliberate' /tmp/tl_usage_out.$$ || { fail=$((fail + 1)); echo "FAIL: script error location" >&2; }
# the reference's flag names are accepted
check 0 "reference flag names" "$BIN" report -q "$ROOT/examples/demo_trace.json" -o /tmp/tl_usage_dir.$$ --micro_idle_thresh_us 20 --include_unlinked_kernels
grep -q '^micro_idle_time' /tmp/tl_usage_dir.$$/perf_report_csvs/gpu_timeline.csv || { fail=$((fail + 1)); echo "FAIL: micro idle rows" >&2; }
rm -rf /tmp/tl_usage_out.$$ /tmp/tl_usage_dir.$$
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

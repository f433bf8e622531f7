#!/usr/bin/env bash
# `tracelens repl TRACE` with piped statements: results printed, errors on
# stderr with exit status 1, multi-line statements.
set -u
BIN=$1 ROOT=$2
pass=0 fail=0
check() { if eval "$1"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $2" >&2; fi; }
out=$(printf '#trace\nn = 0\nfor e in trace:events{cat="kernel"} do\n  n = n + 1\nend\ntrace:node(0).name\n{1, 2, x = "y"}\n' |
  "$BIN" repl "$ROOT/examples/demo_trace.json" 2>/dev/null)
rc=$?
check '[ $rc -eq 0 ]' "repl exit status $rc"
check '[ "$(echo "$out" | sed -n 1p)" = 1530 ]' "event count line: $out"
check 'echo "$out" | grep -q "{1, 2, x = \"y\"}"' "table printing: $out"
# a Table prints as a preview; a record as one aligned line per field
out=$(printf 'trace:table("gpu_timeline")\n{alpha = 1, b = "x", cc = true, d = 2.5}\n' |
  COLUMNS=100 "$BIN" repl "$ROOT/examples/demo_trace.json" 2>/dev/null)
check 'echo "$out" | grep -q "^table gpu_timeline (8 rows x 3 columns)$"' "table preview title: $out"
check 'echo "$out" | grep -Eq "^type +time ms +percent$"' "table preview header: $out"
check 'echo "$out" | grep -Eq "^computation_time +[0-9.]+ +[0-9.]+$"' "table preview row: $out"
check 'echo "$out" | grep -qx "alpha  1"' "record block line: $out"
check 'echo "$out" | grep -qx "cc     true"' "record block alignment: $out"
err=$(printf 'error("boom")\n1+1\n' | "$BIN" repl 2>&1 >/dev/null)
rc=$?
check '[ $rc -eq 1 ]' "error exit status"
check 'echo "$err" | grep -q boom' "error message"
out=$(printf ':help\n' | "$BIN" repl 2>&1)
check 'echo "$out" | grep -qi "trace"' "help text"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

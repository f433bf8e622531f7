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
# a list of records (what trace:memcpy_summary() and friends return) prints
# as an aligned table: sorted keys as columns, long cells cut, the first 10 rows
out=$(printf '{{n = 1, name = "a"}, {n = 22, name = string.rep("k", 40), t = {}}}\nlocal r = {} for i = 1, 12 do r[i] = {i = i, sq = i * i} end return r\n' |
  COLUMNS=100 "$BIN" repl 2>/dev/null)
check 'echo "$out" | grep -Eqx "n +name +t"' "record list header: $out"
check 'echo "$out" | grep -Eqx "22 +k{29}\.\.\. +\{\.\.\.\}"' "record list row, cell cut to 32 columns: $out"
check 'echo "$out" | grep -Eqx "10 +100"' "record list: 10th row: $out"
check '! echo "$out" | grep -Eqx "11 +121"' "record list: no 11th row: $out"
check 'echo "$out" | grep -qx "(12 records, the first 10 shown)"' "record list: the count of rows: $out"
err=$(printf 'error("boom")\n1+1\n' | "$BIN" repl 2>&1 >/dev/null)
rc=$?
check '[ $rc -eq 1 ]' "error exit status"
check 'echo "$err" | grep -q boom' "error message"
out=$(printf ':help\n' | "$BIN" repl 2>&1)
check 'echo "$out" | grep -qi "trace"' "help text"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

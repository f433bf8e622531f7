#!/usr/bin/env bash
# `tracelens critical-path` (docs/critical-path.md): usage errors (no trace,
# no -o, a bad --step, --step with --all, an unknown option) exit 2; input
# errors (a missing trace, no such step, nothing to analyse) exit 1 with one
# line on stderr and write nothing. A good run exits 0, prints the summary
# and writes a gzip JSON trace that parses, with the critical events and
# flow events counted here; on HTA's simple_add trace 1,008 events carry
# "critical" (HTA's overlay).
set -u
BIN=$1
DATA=${3:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

run() { # expected-rc description args...
  local want=$1 what=$2; shift 2
  "$BIN" critical-path "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  [ "$rc" -eq "$want" ] && ok || ko "$what: exit $rc, expected $want ($(head -c 400 "$T/err"))"
  if [ "$want" -ne 0 ]; then
    [ "$(wc -l <"$T/err")" -eq 1 ] && ok || ko "$what: not one line: $(cat "$T/err")"
    grep -q '^tracelens: ' "$T/err" && ok || ko "$what: no 'tracelens: ' prefix: $(cat "$T/err")"
    [ ! -e "$T/o.json.gz" ] && ok || ko "$what: output written"
  fi
  rm -f "$T/o.json.gz"
}

# a step: an op launching a kernel and waiting for it
cat >"$T/good.json" <<'J'
{"schemaVersion":1,"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#3","pid":1,"tid":1,"ts":0,"dur":1000},
{"ph":"X","cat":"cpu_op","name":"aten::step","pid":1,"tid":1,"ts":0,"dur":1000},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":100,"dur":10,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":150,"dur":600,"args":{"correlation":1,"stream":7,"device":0}},
{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":200,"dur":560,"args":{"correlation":2}},
{"ph":"X","cat":"cuda_sync","name":"Context Sync","pid":0,"tid":99,"ts":745,"dur":15,"args":{"correlation":2,"stream":-1,"device":0}}]}
J
# nothing but metadata
echo '{"traceEvents":[{"ph":"M","name":"process_name","pid":1,"tid":0,"args":{"name":"x"}}]}' >"$T/empty.json"

run 2 "no trace" -o "$T/o.json.gz"
run 2 "no -o" "$T/good.json"
run 2 "bad --step" "$T/good.json" -o "$T/o.json.gz" --step x
run 2 "negative --step" "$T/good.json" -o "$T/o.json.gz" --step -1
run 2 "--step and --all" "$T/good.json" -o "$T/o.json.gz" --step 3 --all
run 2 "unknown option" "$T/good.json" -o "$T/o.json.gz" --frobnicate
run 1 "missing trace" "$T/missing.json" -o "$T/o.json.gz"
run 1 "no such step" "$T/good.json" -o "$T/o.json.gz" --step 4
run 1 "nothing to analyse" "$T/empty.json" -o "$T/o.json.gz"

"$BIN" critical-path --help >"$T/help" 2>&1 && grep -q 'usage: tracelens critical-path' "$T/help" && ok || ko "--help"
"$BIN" --help | grep -q 'critical-path' && ok || ko "top-level help names critical-path"

# count the critical events and flows of an overlay: "EVENTS FLOWS TOTAL"
count() {
  gzip -dc "$1" | python3 -c '
import json, sys
ev = json.load(sys.stdin)["traceEvents"]
c = [e for e in ev if "critical" in (e.get("args") or {})]
fl = [e for e in c if e.get("ph") in ("s", "f")]
print(len(c) - len(fl), len(fl), len(ev))'
}

"$BIN" critical-path "$T/good.json" -o "$T/o.json.gz" >"$T/out" 2>"$T/err"
[ $? -eq 0 ] && ok || ko "good run: $(cat "$T/err")"
grep -q 'critical path of ProfilerStep#3: 0.990 ms of 1.000 ms wall time, 4 events' "$T/out" && ok \
  || ko "summary: $(cat "$T/out")"
[ "$(count "$T/o.json.gz")" = "4 4 10" ] && ok || ko "overlay counts: $(count "$T/o.json.gz")"
! grep -q 'no synchronisation events' "$T/out" && ok || ko "a trace with cuda_sync: no blind-path note"
# the same step without its cuda_sync event: the path cannot come back to the host, and says so
grep -v '"cuda_sync"' "$T/good.json" | sed '$ s/,$/]}/' >"$T/nosync.json"
"$BIN" critical-path "$T/nosync.json" -o "$T/o.json.gz" >"$T/out" 2>"$T/err"
[ $? -eq 0 ] && grep -q '^note: the trace records no synchronisation events' "$T/out" \
  && grep -q 'the path covers 75% of the window' "$T/out" && ok || ko "no cuda_sync: the note: $(cat "$T/out" "$T/err")"
# HTA's path shorter than one stream's work (tests/lua/test_critical_path.lua works it out): k2 -> k3 is
# 190 us, stream 7 runs 90 + 90 + 100 = 280 us of the step's work in order: not the critical path, no bound
cat >"$T/below.json" <<'J'
{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":500},
{"ph":"X","cat":"cpu_op","name":"aten::a","pid":1,"tid":1,"ts":0,"dur":20},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":4,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":10,"dur":90,"args":{"correlation":1,"stream":7,"device":0}},
{"ph":"X","cat":"cpu_op","name":"aten::b","pid":1,"tid":1,"ts":195,"dur":20},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":200,"dur":5,"args":{"correlation":2}},
{"ph":"X","cat":"kernel","name":"k2","pid":0,"tid":7,"ts":210,"dur":90,"args":{"correlation":2,"stream":7,"device":0}},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":205,"dur":5,"args":{"correlation":3}},
{"ph":"X","cat":"kernel","name":"k3","pid":0,"tid":7,"ts":300,"dur":100,"args":{"correlation":3,"stream":7,"device":0}},
{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":220,"dur":185,"args":{"correlation":4}}]}
J
"$BIN" critical-path "$T/below.json" -o "$T/o.json.gz" >"$T/out" 2>"$T/err"
[ $? -eq 0 ] && grep -q "^HTA's longest path of ProfilerStep#1: 0.190 ms of 0.500 ms wall time, 2 events" "$T/out" \
  && grep -q '^not the critical path: stream 7 is busy 0.280 ms with the GPU events launched in the window, in$' "$T/out" \
  && ! grep -q '^critical path of' "$T/out" && grep -q 'the path covers 38% of the window' "$T/out" && ok \
  || ko "a path shorter than its stream's work: $(cat "$T/out" "$T/err")"
# a blind path that covers the whole window (the host waited, but the path is the window): no note
cat >"$T/covered.json" <<'J'
{"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":200},
{"ph":"X","cat":"cpu_op","name":"aten::a","pid":1,"tid":1,"ts":0,"dur":30},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":1,"dur":5,"args":{"correlation":1}},
{"ph":"X","cat":"kernel","name":"k1","pid":0,"tid":7,"ts":10,"dur":190,"args":{"correlation":1,"stream":7,"device":0}},
{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":40,"dur":159,"args":{"correlation":2}}]}
J
"$BIN" critical-path "$T/covered.json" -o "$T/o.json.gz" >"$T/out" 2>"$T/err"
[ $? -eq 0 ] && grep -q '^critical path of ProfilerStep#1: 0.200 ms of 0.200 ms wall time' "$T/out" \
  && ! grep -q 'no synchronisation events' "$T/out" && ok || ko "a path covering the window: no note: $(cat "$T/out" "$T/err")"
"$BIN" critical-path "$T/good.json" -o "$T/o.json.gz" --all -q >"$T/out" 2>&1
[ $? -eq 0 ] && [ ! -s "$T/out" ] && ok || ko "--all -q: $(cat "$T/out")"

if [ -n "$DATA" ] && [ -d "$DATA/hta/critical_path/simple_add" ]; then
  "$BIN" critical-path "$DATA/hta/critical_path/simple_add/benchmark_result_493459_1694039959_trace.json.gz" \
    -o "$T/sa.json.gz" -q 2>"$T/err"
  [ $? -eq 0 ] && ok || ko "simple_add: $(cat "$T/err")"
  [ "$(count "$T/sa.json.gz")" = "624 384 1732" ] && ok || ko "simple_add overlay counts: $(count "$T/sa.json.gz")"
else
  echo "SKIP (shared data): simple_add not found"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

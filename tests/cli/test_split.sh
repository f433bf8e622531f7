#!/usr/bin/env bash
# `tracelens split` (docs/split.md): usage errors (missing -o, a bad -i, a
# bad --num-steps, an unknown option) exit 2; input errors (a missing or
# corrupt trace, a .zip, a trace with no annotation and no repeating block
# of GPU work, a range past the last iteration) exit 1 with one line on
# stderr; none of them writes anything. A good split exits 0.
set -u
BIN=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

run() { # expected-rc description args...
  local want=$1 what=$2; shift 2
  "$BIN" split "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  [ "$rc" -eq "$want" ] && ok || ko "$what: exit $rc, expected $want ($(head -c 400 "$T/err"))"
  if [ "$want" -ne 0 ]; then
    [ "$(wc -l <"$T/err")" -eq 1 ] && ok || ko "$what: not one line: $(cat "$T/err")"
    grep -q '^tracelens: ' "$T/err" && ok || ko "$what: no 'tracelens: ' prefix: $(cat "$T/err")"
    [ ! -e "$T/o" ] && ok || ko "$what: output written"
  fi
  rm -rf "$T/o"
}

# one vLLM native iteration with a launch and its kernel
cat >"$T/good.json" <<'J'
{"schemaVersion":1,"traceEvents":[
{"ph":"X","cat":"user_annotation","name":"execute_context_0(0)_generation_4(4)","pid":1,"tid":1,"ts":100,"dur":500},
{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":110,"dur":5,"args":{"correlation":1}},
{"ph":"s","cat":"ac2g","name":"ac2g","id":1,"pid":1,"tid":1,"ts":110},
{"ph":"f","cat":"ac2g","name":"ac2g","id":1,"pid":0,"tid":7,"ts":130,"bp":"e"},
{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":130,"dur":20,"args":{"correlation":1}}]}
J
# host work only: no annotation, nothing launched
cat >"$T/none.json" <<'J'
{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":100,"dur":50},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":200,"dur":50},
{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":300,"dur":50}]}
J
printf '\037\213garbage' >"$T/corrupt.json.gz"
cp "$T/good.json" "$T/t.zip"

run 0 "good" "$T/good.json" -o "$T/o"
run 0 "good, -i 0" "$T/good.json" -o "$T/o" -i 0 -q
run 2 "no -o" "$T/good.json"
run 2 "no trace" -o "$T/o"
run 2 "-i abc" "$T/good.json" -o "$T/o" -i abc
run 2 "-i 5:2" "$T/good.json" -o "$T/o" -i 5:2
run 2 "-i -1" "$T/good.json" -o "$T/o" -i -1
run 2 "-i 3:" "$T/good.json" -o "$T/o" -i 3:
run 2 "-i without a value" "$T/good.json" -o "$T/o" -i
run 2 "--num-steps 0" "$T/good.json" -o "$T/o" --num-steps 0
run 2 "--OSL x" "$T/good.json" -o "$T/o" --OSL x
run 2 "unknown option" "$T/good.json" -o "$T/o" --frobnicate
run 1 "-i 1 on one iteration" "$T/good.json" -o "$T/o" -i 1
run 1 "-i 5:9 on one iteration" "$T/good.json" -o "$T/o" -i 5:9
run 1 "missing trace" "$T/missing.json" -o "$T/o"
run 1 "corrupt gzip" "$T/corrupt.json.gz" -o "$T/o"
run 1 "zip" "$T/t.zip" -o "$T/o"
run 1 "no annotation, no GPU work" "$T/none.json" -o "$T/o"
grep -q 'nothing to split' "$T/err" && ok || ko "no roots: message: $(cat "$T/err")"
run 1 "CONC/OSL/R without a ratio" "$T/good.json" -o "$T/o" --find-steady-state --CONC 0 --OSL 10 --R 0.5

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

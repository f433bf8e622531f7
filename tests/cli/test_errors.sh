#!/usr/bin/env bash
# Bad input: `tracelens report` exits 1 with one line on stderr of the form
# "tracelens: FILE: byte N ...: what was expected" (or a clear reason for
# files that cannot be read) and leaves no output behind. Awkward but valid
# containers (a .json.gz that is plain JSON and a .json that is gzip,
# multi-member gzip) load.
set -u
BIN=$1 ROOT=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

expect_error() { # name file pattern
  local name=$1 file=$2 pat=$3 out="$T/out_$1"
  "$BIN" report -q "$file" -o "$out" 2>"$T/err" >/dev/null
  local rc=$?
  [ "$rc" -eq 1 ] && ok || ko "$name: exit $rc, expected 1"
  [ "$(wc -l <"$T/err")" -eq 1 ] && ok || ko "$name: stderr is not one line: $(cat "$T/err")"
  grep -q -- "$pat" "$T/err" && ok || ko "$name: stderr lacks '$pat': $(cat "$T/err")"
  [ ! -e "$out" ] && ok || ko "$name: output left behind"
}

good='{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2,"args":{"correlation":1}},{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0.5,"dur":0.2,"args":{"correlation":1}},{"ph":"s","id":1,"pid":1,"tid":1,"ts":0.5,"cat":"ac2g","name":"ac2g"},{"ph":"f","id":1,"pid":0,"tid":7,"ts":1,"cat":"ac2g","name":"ac2g","bp":"e"}]}'

: >"$T/empty.json"
printf '%s' "${good:0:60}" >"$T/truncated.json"
printf '%s' "$good" | gzip -c | head -c 60 >"$T/truncated.json.gz"
head -c 300 /dev/urandom | tr -d '\000' | sed 's/^[{[ ]*/x/' >"$T/garbage.json"
printf '[1,2]x' >"$T/garbage2.json"
printf '"just a string"' >"$T/notobject.json"
printf '{"schemaVersion":1}' >"$T/noevents.json"
printf '{"traceEvents":{"a":1}}' >"$T/notarray.json"
printf '{"traceEvents":[{"name":"abc' >"$T/unterminated.json"
printf '{"traceEvents":[{"name":"a"}, {"name":"b\001"}]}' >"$T/control.json"
printf '%s' "$good" | gzip -c >"$T/corrupt.json.gz"
printf 'XXXX' | dd of="$T/corrupt.json.gz" bs=1 seek=20 conv=notrunc 2>/dev/null
mkdir "$T/adir"

expect_error empty "$T/empty.json" "empty.json: byte 0: the file is empty"
expect_error truncated "$T/truncated.json" "truncated.json: byte 60 (event 0): unexpected end of data"
expect_error truncated_gz "$T/truncated.json.gz" "truncated.json.gz: truncated gzip stream"
expect_error garbage "$T/garbage.json" "garbage.json: byte 0: the top level is not a JSON object"
expect_error garbage2 "$T/garbage2.json" "garbage2.json: byte 1 (event 0): expected an event object"
expect_error notobject "$T/notobject.json" "byte 0: the top level is not a JSON object"
expect_error noevents "$T/noevents.json" "byte 19: no traceEvents array"
expect_error notarray "$T/notarray.json" "byte 15: traceEvents is not an array"
expect_error unterminated "$T/unterminated.json" "(event 0): unexpected end of data"
expect_error control "$T/control.json" "(event 1): control character inside a string"
expect_error corrupt_gz "$T/corrupt.json.gz" "corrupt gzip stream"
expect_error directory "$T/adir" "is a directory"
expect_error missing "$T/nope.json" "nope.json: cannot open: No such file or directory"
# an output path that is a file: said before the trace is read
printf '%s' "$good" >"$T/g.json"
: >"$T/afile"
"$BIN" report "$T/g.json" -o "$T/afile" 2>"$T/err" >/dev/null
rc=$?
[ $rc -eq 1 ] && [ "$(cat "$T/err")" = "tracelens: $T/afile: exists and is not a directory" ] && ok \
  || ko "-o a file: exit $rc, $(cat "$T/err")"

# no GPU event at all: a one-line error; GPU events no launch links to are
# reported (issue 11 item 2: the gpu_timeline over every GPU event)
printf '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::add","pid":1,"tid":1,"ts":1,"dur":2}]}' >"$T/nogpu.json"
expect_error nogpu "$T/nogpu.json" "no GPU events found in the trace"
# without -q too, a failing report prints its error alone (no progress line before it)
"$BIN" report "$T/nogpu.json" -o "$T/out_loud" 2>"$T/err" >/dev/null
[ "$(wc -l <"$T/err")" -eq 1 ] && ok || ko "report without -q: not one line: $(cat "$T/err")"
# what the trace holds instead, and how to record the GPU; a category's
# control bytes are not echoed
printf '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","pid":1,"tid":1,"ts":1,"dur":2},{"ph":"X","cat":"cpu_op","name":"b","pid":1,"tid":1,"ts":3,"dur":2},{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":9},{"ph":"X","cat":"x\\u001b[31m","name":"c","pid":1,"tid":1,"ts":4,"dur":1},{"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"p"}}]}' >"$T/cpuonly.json"
expect_error cpuonly "$T/cpuonly.json" "none of its 5 events (2 cpu_op, 1 user_annotation, 1 x?\[31m, 1 metadata) is a kernel, memory copy or memset; the profiler recorded no GPU activity (profile with activities=\[ProfilerActivity.CPU, ProfilerActivity.CUDA\] to record it)"
"$BIN" run "$ROOT/lua/orchestrator.lua" "$T/cpuonly.json" -q -o "$T/out_cpuonly_analysis" 2>"$T/err" >/dev/null
rc=$?
if [ $rc -eq 1 ] && grep -q "none of its 5 events (2 cpu_op" "$T/err" && [ ! -e "$T/out_cpuonly_analysis/analysis.md" ]; then ok
else ko "orchestrator on a CPU-only trace: exit $rc, $(cat "$T/err")"; fi
printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","pid":0,"tid":7,"ts":1,"dur":2}]}' >"$T/unlinked.json"
"$BIN" report -q "$T/unlinked.json" -o "$T/out_unlinked" 2>"$T/err" >/dev/null && ok || ko "unlinked: report failed: $(cat "$T/err")"
grep -q '^busy_time,0.002,' "$T/out_unlinked/perf_report_csvs/gpu_timeline.csv" 2>/dev/null && ok ||
  ko "unlinked: gpu_timeline without the unlinked kernel's 2 us"

# valid containers whatever their names say
printf '%s' "$good" >"$T/plain.json.gz"
printf '%s' "$good" | gzip -c >"$T/gz.json"
{ printf '%s' "${good:0:100}" | gzip -c; printf '%s' "${good:100}" | gzip -c; } >"$T/multi.json.gz"
printf '\xef\xbb\xbf%s' "$good" >"$T/bom.json"
for f in plain.json.gz gz.json multi.json.gz bom.json; do
  if "$BIN" report -q "$T/$f" -o "$T/ok_$f" 2>"$T/err"; then
    grep -q '^busy_time,0.002,' "$T/ok_$f/perf_report_csvs/gpu_timeline.csv" && ok || ko "$f: wrong timeline"
  else
    ko "$f: failed: $(cat "$T/err")"
  fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

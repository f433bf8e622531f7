#!/usr/bin/env bash
# Hostile traces and hostile output directories (issue 10, items 9, 11, 13
# and 14), each attack made here, as written in the issue:
#   - gzip bombs: 4 MB of .gz holding one 4 GB string, a 4 GB number, 4 GB of
#     whitespace inside an event: exit 1 with the one-line error naming the
#     64 MB limit of one JSON value, at a bounded peak memory; 1 GB of
#     whitespace between events loads in constant memory; max_value_mb raises
#     (or lowers) the limit;
#   - "ts": -9223372036854775 (and a ts + dur past int64) is an input error;
#   - a \u0000 escape in a name is refused, in an args value kept;
#   - planted links: at the old predictable temporary names (PATH.tmp-PID)
#     and inside an output directory; the link targets stay untouched.
# Needs python3 (the bombs are written as multi-member gzip from one
# compressed 64 MiB block, so nothing large touches the disk).
set -u
BIN=$1
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# Under ASan the address space is reserved up front and memory is counted
# differently: no address-space cap there, and looser RSS bounds.
ASAN=0
ldd "$BIN" 2>/dev/null | grep -q libasan && ASAN=1
TIME=/usr/bin/time
[ -x "$TIME" ] || TIME=

# runs CMD... with a 3 GB address-space cap (a build that buffers a bomb
# aborts instead of taking the machine's memory), recording the exit status
# in $T/rc, stderr in $T/err and the peak RSS (KB) in $T/rss
run_capped() {
  (
    [ "$ASAN" -eq 0 ] && ulimit -v 3000000
    if [ -n "$TIME" ]; then
      "$TIME" -f '%M' -o "$T/rss" "$@" 2>"$T/err" >"$T/out"
    else
      echo 0 >"$T/rss"
      "$@" 2>"$T/err" >"$T/out"
    fi
    echo $? >"$T/rc"
  )
}
rss_below() { # name limit_mb
  local kb limit=$2
  [ "$ASAN" -eq 1 ] && limit=$((limit * 4))
  kb=$(tail -n 1 "$T/rss")
  [ "$kb" -lt $((limit * 1024)) ] && ok || ko "$1: peak RSS $((kb / 1024)) MB, expected below $limit MB"
}

bomb() { # out kind MB
  python3 - "$@" <<'EOF'
import sys, zlib
out, kind, mb = sys.argv[1], sys.argv[2], int(sys.argv[3])
pre, ch, post = {
    "string": (b'{"traceEvents":[{"ph":"X","name":"', b"a", b'"}]}'),
    "number": (b'{"traceEvents":[{"ph":"X","ts":', b"1", b"}]}"),
    "space_inside": (b'{"traceEvents":[{"ph":"X",', b" ", b'"ts":1}]}'),
    "space_between": (b'{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"op","pid":1,"tid":1,"ts":1,"dur":1}',
                      b" ", b',{"ph":"X","name":"op2","ts":2}]}'),
}[kind]
def member(data):
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    return c.compress(data) + c.flush()
block = member(ch * (64 << 20))
with open(out, "wb") as f:
    f.write(member(pre))
    for _ in range(mb // 64):
        f.write(block)
    f.write(member(post))
EOF
}

LIMIT='(the limit for one JSON value; max_value_mb raises it)'
expect_bomb() { # name file message
  local out="$T/out_$1"
  run_capped "$BIN" report -q "$2" -o "$out"
  [ "$(cat "$T/rc")" = 1 ] && ok || ko "$1: exit $(cat "$T/rc"), expected 1: $(head -c 300 "$T/err")"
  [ "$(cat "$T/err")" = "tracelens: $2: $3 $LIMIT" ] && ok || ko "$1: stderr: $(head -c 300 "$T/err")"
  [ ! -e "$out" ] && ok || ko "$1: output left behind"
  rss_below "$1" 300
}

# ---------------------------------------------------------- gzip bombs
bomb "$T/string.json.gz" string 4096
size=$(wc -c <"$T/string.json.gz")
[ "$size" -lt 5000000 ] && ok || ko "the string bomb is $size bytes of gzip"
expect_bomb string "$T/string.json.gz" "byte 33 (event 0): a string of more than 64 MB"
bomb "$T/number.json.gz" number 4096
expect_bomb number "$T/number.json.gz" "byte 31 (event 0): a number of more than 64 MB"
bomb "$T/space.json.gz" space_inside 4096
expect_bomb space_inside "$T/space.json.gz" "byte 26 (event 0): a run of whitespace of more than 64 MB"

# whitespace between values is read as a stream: 1 GB of it loads in a few MB
bomb "$T/between.json.gz" space_between 1024
printf 'local t = tl.load(arg[1], arg[2] and {max_value_mb = tonumber(arg[2])} or nil)\nprint(#t)\n' >"$T/load.lua"
run_capped "$BIN" run "$T/load.lua" "$T/between.json.gz"
[ "$(cat "$T/rc")" = 0 ] && [ "$(cat "$T/out")" = 2 ] && ok || ko "whitespace between events: exit $(cat "$T/rc"): $(cat "$T/out" "$T/err")"
rss_below space_between 100

# the limit is an option of tl.load (max_value_mb, 1..4095)
bomb "$T/s128.json.gz" string 128
run_capped "$BIN" run "$T/load.lua" "$T/s128.json.gz" 256
[ "$(cat "$T/rc")" = 0 ] && [ "$(cat "$T/out")" = 1 ] && ok || ko "max_value_mb = 256: $(cat "$T/err")"
run_capped "$BIN" run "$T/load.lua" "$T/s128.json.gz" 1
grep -q "byte 33 (event 0): a string of more than 1 MB" "$T/err" && ok || ko "max_value_mb = 1: $(cat "$T/err")"
rss_below max_value_mb_1 100
run_capped "$BIN" run "$T/load.lua" "$T/s128.json.gz" 0
grep -q "max_value_mb must be an integer from 1 to 4095" "$T/err" && ok || ko "max_value_mb = 0: $(cat "$T/err")"
# ... and of the command line: `report --max-value-mb`, the orchestrator's too
run_capped "$BIN" report "$T/s128.json.gz" --max-value-mb 1 -o "$T/rep1"
[ "$(cat "$T/rc")" = 1 ] && grep -q "a string of more than 1 MB" "$T/err" && [ ! -e "$T/rep1" ] && ok ||
  ko "report --max-value-mb 1: exit $(cat "$T/rc"): $(cat "$T/err")"
run_capped "$BIN" report "$T/s128.json.gz" --max-value-mb 0 -o "$T/rep0"
[ "$(cat "$T/rc")" = 2 ] && grep -q "max-value-mb needs a whole number" "$T/err" && ok ||
  ko "report --max-value-mb 0: exit $(cat "$T/rc"): $(cat "$T/err")"
run_capped "$BIN" run orchestrator.lua "$T/s128.json.gz" --max-value-mb 1 -o "$T/orc1" -q
[ "$(cat "$T/rc")" = 1 ] && grep -q "a string of more than 1 MB" "$T/err" && [ ! -e "$T/orc1" ] && ok ||
  ko "orchestrator --max-value-mb 1: exit $(cat "$T/rc"): $(cat "$T/err")"
run_capped "$BIN" run orchestrator.lua "$T/s128.json.gz" --max-value-mb 4096 -o "$T/orc2" -q
[ "$(cat "$T/rc")" = 2 ] && ok || ko "orchestrator --max-value-mb 4096: exit $(cat "$T/rc"): $(cat "$T/err")"

# the machine's own memory running out (not a cap of ours) is the one-line
# error and exit 1 too, never abort(): a 512 MB string allowed by the value
# limit, under a 400 MB address-space limit (not under ASan, which reserves
# its shadow memory up front)
if [ "$ASAN" -eq 0 ]; then
  bomb "$T/s512.json.gz" string 512
  (ulimit -v 400000; "$BIN" report "$T/s512.json.gz" --max-value-mb 1024 -o "$T/rep512" -q >/dev/null 2>"$T/err"
   echo $? >"$T/rc")
  [ "$(cat "$T/rc")" = 1 ] && grep -q "^tracelens: out of memory (allocating [0-9]* bytes)$" "$T/err" &&
    [ "$(wc -l <"$T/err")" = 1 ] && [ ! -e "$T/rep512" ] && ok ||
    ko "out of memory: exit $(cat "$T/rc"): $(cat "$T/err")"
fi

# ------------------------------------------------ timestamps out of range
# a kernel, the launch that links to it (correlation C) and the flow events
linked() { # C ts dur
  printf '{"ph":"X","cat":"kernel","name":"k%s","pid":0,"tid":7,"ts":%s,"dur":%s,"args":{"correlation":%s}},' "$1" "$2" "$3" "$1"
  printf '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0.5,"dur":0.2,"args":{"correlation":%s}},' "$1"
  printf '{"ph":"s","id":%s,"pid":1,"tid":1,"ts":0.5,"cat":"ac2g","name":"ac2g"},' "$1"
  printf '{"ph":"f","id":%s,"pid":0,"tid":7,"ts":1,"cat":"ac2g","name":"ac2g","bp":"e"}' "$1"
}
printf '{"traceEvents":[%s,%s]}' "$(linked 1 1 2)" "$(linked 2 -9223372036854775 1)" >"$T/negts.json"
printf '{"traceEvents":[%s,%s]}' "$(linked 1 1 2)" "$(linked 2 1 1000000000000001)" >"$T/bigdur.json"
printf '{"traceEvents":[%s,%s]}' "$(linked 1 1 600000000000000)" "$(linked 2 2 600000000000000)" >"$T/sumdur.json"
for t in negts:"byte 433 (event 4): ts out of range" bigdur:"byte 441 (event 4): dur out of range" \
  sumdur:"event 4: the durations of the events add up to more than 1e15 us"; do
  name=${t%%:*} want=${t#*:}
  "$BIN" report -q "$T/$name.json" -o "$T/out_$name" 2>"$T/err" >/dev/null
  rc=$?
  [ $rc -eq 1 ] && ok || ko "$name: exit $rc, expected 1"
  [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "$name.json: $want" "$T/err" && ok || ko "$name: stderr: $(cat "$T/err")"
  [ ! -e "$T/out_$name" ] && ok || ko "$name: output left behind"
done

# ------------------------------------------------------- \u0000 in names
launch='{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":0.5,"dur":0.2,"args":{"correlation":1}}'
printf '{"traceEvents":[%s,{"ph":"X","cat":"cpu_op","name":"aten::mm\\u0000<hidden>","pid":1,"tid":1,"ts":0,"dur":3}]}' \
  "$launch" >"$T/nul.json"
"$BIN" report -q "$T/nul.json" -o "$T/out_nul" 2>"$T/err" >/dev/null
rc=$?
[ $rc -eq 1 ] && ok || ko "nul name: exit $rc, expected 1"
grep -q 'nul.json: byte 166 (event 1): a \\u0000 escape in an event name' "$T/err" && ok || ko "nul name: $(cat "$T/err")"
printf '{"traceEvents":[{"ph":"X","name":"n","ts":1,"args":{"v":"a\\u0000b"}}]}' >"$T/nularg.json"
printf 'local t = tl.load(arg[1])\nfor e in t:events() do io.write(#e.args.v, " ", e.args.v == "a\\0b" and "kept" or "lost") end\n' >"$T/nularg.lua"
out=$("$BIN" run "$T/nularg.lua" "$T/nularg.json" 2>&1)
[ "$out" = "3 kept" ] && ok || ko "a \\u0000 in an args value: '$out'"

# ----------------------------------------------------- planted links
printf '{"traceEvents":[%s]}' "$(linked 1 1 2)" >"$T/good.json"
victim_reset() {
  rm -rf "$T/victim"
  mkdir -p "$T/victim/dir"
  echo precious >"$T/victim/file"
  echo a >"$T/victim/dir/a"
  echo b >"$T/victim/dir/b"
}
victim_intact() { # name
  [ "$(cat "$T/victim/file")" = precious ] && [ "$(cat "$T/victim/dir/a")" = a ] &&
    [ "$(cat "$T/victim/dir/b")" = b ] && [ "$(ls "$T/victim/dir" | wc -l)" -eq 2 ] && ok ||
    ko "$1: the link target was changed: $(ls -l "$T/victim" "$T/victim/dir" 2>&1 | tr '\n' ' ')"
}
# Links at NAME.tmp-PID for the process ids the next command can get: the
# 500 after the last one used (every one when that is unknown).
plant_pid_links() { # dir prefix target
  python3 - "$@" <<'EOF'
import os, sys
d, prefix, target = sys.argv[1:4]
pid_max = int(open("/proc/sys/kernel/pid_max").read())
try:
    last = int(open("/proc/sys/kernel/ns_last_pid").read())
except OSError:
    last = None
pids = range(1, pid_max + 1) if last is None else [(last + k) % pid_max + 1 for k in range(500)]
for p in pids:
    os.symlink(target, os.path.join(d, "%s.tmp-%d" % (prefix, p)))
EOF
}

# the CSV directory's old temporary name, linked to a directory
victim_reset
mkdir -p "$T/o1"
plant_pid_links "$T/o1" .perf_report_csvs "$T/victim/dir"
"$BIN" report -q "$T/good.json" -o "$T/o1" --no-xlsx 2>"$T/err" >/dev/null && ok || ko "report beside planted links: $(cat "$T/err")"
victim_intact "planted .perf_report_csvs.tmp-PID"
[ -f "$T/o1/perf_report_csvs/gpu_timeline.csv" ] && ok || ko "no CSVs written beside planted links"

# the workbook's old temporary name, linked to a file
victim_reset
mkdir -p "$T/o2"
plant_pid_links "$T/o2" perf_report.xlsx "$T/victim/file"
"$BIN" report -q "$T/good.json" -o "$T/o2" --no-csv 2>"$T/err" >/dev/null && ok || ko "report beside planted links: $(cat "$T/err")"
victim_intact "planted perf_report.xlsx.tmp-PID"
[ -f "$T/o2/perf_report.xlsx" ] && [ ! -L "$T/o2/perf_report.xlsx" ] && ok || ko "no workbook written"

# a file written from a script (tl.fs.write_file: one output file)
victim_reset
mkdir -p "$T/o3"
plant_pid_links "$T/o3" note.txt "$T/victim/file"
printf 'tl.fs.write_file(arg[1], "note")\n' >"$T/write.lua"
"$BIN" run "$T/write.lua" "$T/o3/note.txt" 2>"$T/err" && ok || ko "write_file beside planted links: $(cat "$T/err")"
victim_intact "planted note.txt.tmp-PID"
[ "$(cat "$T/o3/note.txt")" = note ] && [ ! -L "$T/o3/note.txt" ] && ok || ko "note.txt not written"

# links inside the output directory: the CSV directory itself, the workbook,
# and an entry of a previous CSV directory; none is followed
victim_reset
mkdir -p "$T/o4"
ln -s "$T/victim/dir" "$T/o4/perf_report_csvs"
ln -s "$T/victim/file" "$T/o4/perf_report.xlsx"
"$BIN" report -q "$T/good.json" -o "$T/o4" 2>"$T/err" >/dev/null && ok || ko "report over links: $(cat "$T/err")"
victim_intact "perf_report_csvs linked to a directory"
[ -d "$T/o4/perf_report_csvs" ] && [ ! -L "$T/o4/perf_report_csvs" ] && [ -f "$T/o4/perf_report_csvs/gpu_timeline.csv" ] &&
  ok || ko "the linked CSV directory was not replaced by a real one"
[ -f "$T/o4/perf_report.xlsx" ] && [ ! -L "$T/o4/perf_report.xlsx" ] && ok || ko "the linked workbook was not replaced"
ln -s "$T/victim/dir" "$T/o4/perf_report_csvs/sub"
ln -s "$T/victim/file" "$T/o4/perf_report_csvs/gpu_timeline.csv.old"
"$BIN" report -q "$T/good.json" -o "$T/o4" 2>"$T/err" >/dev/null && ok || ko "report over a directory with links: $(cat "$T/err")"
victim_intact "links inside the previous CSV directory"
[ ! -e "$T/o4/perf_report_csvs/sub" ] && ok || ko "the previous CSV directory's contents were kept"
# nothing of the staging is left behind
[ -z "$(ls -A "$T/o4" | grep -v '^perf_report')" ] && ok || ko "left in the output directory: $(ls -A "$T/o4")"

# `tracelens compare`: its old temporaries (DIR/comparison_csvs.tmp-PID and
# DIR/comparison.xlsx.tmp-PID) linked to a directory and a file
for r in r1 r2; do "$BIN" report -q "$T/good.json" -o "$T/$r" --no-xlsx 2>"$T/err" >/dev/null || ko "report $r: $(cat "$T/err")"; done
victim_reset
mkdir -p "$T/o5"
plant_pid_links "$T/o5" comparison_csvs "$T/victim/dir"
plant_pid_links "$T/o5" comparison.xlsx "$T/victim/file"
"$BIN" compare "$T/r1/perf_report_csvs" "$T/r2/perf_report_csvs" --names a b --sheets gpu_timeline -o "$T/o5" 2>"$T/err" >/dev/null && ok ||
  ko "compare beside planted links: $(cat "$T/err")"
victim_intact "planted comparison temporaries"
[ -f "$T/o5/comparison.xlsx" ] && [ -d "$T/o5/comparison_csvs" ] && ok || ko "compare wrote nothing: $(ls "$T/o5" | head -3 | tr '\n' ' ')"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# `tracelens ranks summarize` / `tracelens ranks reduce` (docs/ranks.md "Map
# and reduce"): summarize of every rank + reduce gives the same CSVs as the
# direct `tracelens ranks` (both shared cases, and hand-made traces; the
# order of the .tls arguments does not matter; -j 1 and -j 3, the per-rank
# pass in threads, give the same bytes too); a corrupt rank trace is
# recorded as that rank's failure (exit 3, the .tls written) and reduce
# reports it as the direct run does; a .tls with a bad magic, another format
# version, another statistics version, a truncated or damaged body gives a
# one-line error naming the file.
set -u
BIN=$1
SHARED=${3:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

# mk FILE RANK TS DUR: one allreduce on group "0" of 2 ranks, then a broadcast
mk() {
  printf '{"distributedInfo":{"rank":%s,"world_size":2},"deviceProperties":[{},{}],"traceEvents":[' "$2" >"$1"
  printf '{"ph":"X","cat":"kernel","name":"ncclDevKernel_AllReduce_Sum_f32_RING_LL","pid":0,"tid":7,"ts":%s,"dur":%s,' "$3" "$4" >>"$1"
  printf '"args":{"correlation":1,"Process Group Name":"0","Process Group Ranks":"[0, 1]","Collective name":"allreduce",' >>"$1"
  printf '"Group size":2,"dtype":"Float","In msg nelems":1048576,"Out msg nelems":1048576,"In split size":"[]",' >>"$1"
  printf '"Out split size":"[]","stream":7}},' >>"$1"
  printf '{"ph":"X","cat":"kernel","name":"gemm","pid":0,"tid":7,"ts":%s,"dur":30,"args":{"correlation":3}},' "$3" >>"$1"
  printf '{"ph":"X","cat":"kernel","name":"ncclDevKernel_Broadcast_RING_LL","pid":0,"tid":7,"ts":1000,"dur":5,' >>"$1"
  printf '"args":{"correlation":2,"Process Group Name":"0","Collective name":"broadcast","Group size":2}}]}' >>"$1"
}

# same_csvs NAME DIR_A DIR_B: the two reports' CSV folders are identical
same_csvs() {
  if diff -r "$2/collective_report_csvs" "$3/collective_report_csvs" >"$T/diff" 2>&1; then ok
  else ko "$1: reduce differs from the direct run: $(head -5 "$T/diff")"; fi
}

# summarize_all DIR TLSDIR: one .tls per rank trace of DIR
summarize_all() {
  mkdir -p "$2"
  for f in "$1"/rank*_trace.json*; do
    "$BIN" ranks summarize "$f" -o "$2/$(basename "$f").tls" 2>>"$T/sum_err" || ko "summarize $f: $(tail -1 "$T/sum_err")"
  done
}

# ---- hand-made traces: direct vs summarize + reduce
mkdir "$T/good"
mk "$T/good/rank0_trace.json" 0 100 50
mk "$T/good/rank1_trace.json" 1 110 40
"$BIN" ranks -q "$T/good" -o "$T/direct" 2>"$T/err" && ok || ko "direct: $(cat "$T/err")"
summarize_all "$T/good" "$T/tls"
[ "$(head -c 4 "$T/tls/rank0_trace.json.tls" | tail -c 3)" = TLS ] && ok || ko "no .tls magic"
"$BIN" ranks reduce -q "$T/tls/rank1_trace.json.tls" "$T/tls/rank0_trace.json.tls" -o "$T/red" 2>"$T/err" && ok || ko "reduce: $(cat "$T/err")"
same_csvs hand "$T/direct" "$T/red"
# the rank from --rank, and from distributedInfo when the name has none
cp "$T/good/rank1_trace.json" "$T/noname.json"
"$BIN" ranks summarize "$T/noname.json" -o "$T/tls_b/x.tls" 2>"$T/err" && ok || ko "summarize (rank from distinfo): $(cat "$T/err")"
"$BIN" ranks summarize "$T/good/rank0_trace.json" --rank 0 -o "$T/tls_b/y.tls" 2>"$T/err" && ok || ko "summarize --rank: $(cat "$T/err")"
"$BIN" ranks reduce -q "$T/tls_b/x.tls" "$T/tls_b/y.tls" -o "$T/red_b" 2>"$T/err" && ok || ko "reduce b: $(cat "$T/err")"
same_csvs rank_sources "$T/direct" "$T/red_b"

# ---- a corrupt rank trace: recorded as the rank's failure, reduce reports it
mkdir "$T/bad"
cp "$T/good/rank0_trace.json" "$T/bad/"
printf '{"traceEvents":[{"name":"a"' >"$T/bad/rank1_trace.json"
"$BIN" ranks summarize "$T/bad/rank1_trace.json" -o "$T/tls_bad/r1.tls" 2>"$T/err"
rc=$?
[ $rc -eq 3 ] && ok || ko "summarize of a corrupt trace: exit $rc, expected 3"
[ -s "$T/tls_bad/r1.tls" ] && ok || ko "summarize of a corrupt trace wrote no .tls"
grep -q "rank1_trace.json: byte .*(recorded in $T/tls_bad/r1.tls)" "$T/err" && ok || ko "summarize failure message: $(cat "$T/err")"
"$BIN" ranks summarize "$T/bad/rank0_trace.json" -o "$T/tls_bad/r0.tls" 2>/dev/null || ko "summarize rank 0"
"$BIN" ranks -q -j 2 "$T/bad" -o "$T/out_bad_direct" 2>"$T/err_direct"  # threads: the error path too
"$BIN" ranks reduce -q "$T/tls_bad/r0.tls" "$T/tls_bad/r1.tls" -o "$T/out_bad" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && ok || ko "reduce with a failed rank: exit $rc, expected 1"
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "^tracelens: $T/bad/rank1_trace.json: byte" "$T/err" && ok || ko "reduce failed-rank message: $(cat "$T/err")"
cmp -s "$T/err" "$T/err_direct" && ok || ko "reduce and direct messages differ: $(cat "$T/err") / $(cat "$T/err_direct")"
[ ! -e "$T/out_bad" ] && ok || ko "reduce with a failed rank left output"
# --allow-missing-ranks: the same report as the direct run
if "$BIN" ranks -q --allow-missing-ranks --world_size 2 "$T/bad" -o "$T/out_bad_direct2" 2>/dev/null; then
  "$BIN" ranks reduce -q --allow-missing-ranks --world_size 2 "$T/tls_bad/r0.tls" "$T/tls_bad/r1.tls" -o "$T/out_bad2" 2>"$T/err" && ok || ko "reduce --allow-missing-ranks: $(cat "$T/err")"
  same_csvs allow_missing "$T/out_bad_direct2" "$T/out_bad2"
  grep -q '^1,' "$T/out_bad2/collective_report_csvs/missing_ranks.csv" && ok || ko "reduce --allow-missing-ranks does not name rank 1"
else
  ko "direct --allow-missing-ranks with a corrupt rank failed"
fi
# a name/distributedInfo disagreement is recorded too, with the direct run's message
"$BIN" ranks summarize "$T/good/rank1_trace.json" --rank 0 -o "$T/tls_mis/r.tls" 2>/dev/null
[ $? -eq 3 ] && ok || ko "summarize rank mismatch: not recorded as a failure"
"$BIN" ranks reduce -q "$T/tls_mis/r.tls" -o "$T/out_mis" 2>"$T/err"
grep -q "^tracelens: file $T/good/rank1_trace.json says rank 1, name says 0$" "$T/err" && ok || ko "mismatch message: $(cat "$T/err")"

# ---- damaged .tls files: one line naming the file, exit 1
# bad_tls NAME EXPECTED FILE
bad_tls() {
  "$BIN" ranks reduce -q "$3" -o "$T/out_$1" 2>"$T/err"
  local rc=$?
  if [ $rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "^tracelens: $3: $2" "$T/err"; then ok
  else ko "$1: exit $rc, stderr: $(cat "$T/err")"; fi
}
G=$T/tls/rank0_trace.json.tls
printf 'not a summary at all, but long enough to be one...........................' >"$T/magic.tls"
bad_tls magic "not a tracelens rank summary (.tls): bad magic" "$T/magic.tls"
# patch BYTE_OFFSET VALUE SRC DST: one byte changed
patch() { cp "$3" "$4"; printf "\\x$(printf %02x "$2")" | dd of="$4" bs=1 seek="$1" conv=notrunc status=none; }
patch 8 99 "$G" "$T/version.tls"
bad_tls version "rank summary format version 99, this tracelens reads version 1" "$T/version.tls"
patch 20 77 "$G" "$T/stats.tls"
bad_tls stats_version "rank statistics version 77" "$T/stats.tls"
patch 70 255 "$G" "$T/crc.tls"
bad_tls checksum "corrupt rank summary (checksum mismatch)" "$T/crc.tls"
head -c 100 "$G" >"$T/short.tls"
bad_tls truncated "truncated rank summary" "$T/short.tls"
head -c 20 "$G" >"$T/tiny.tls"
bad_tls truncated_header "truncated rank summary" "$T/tiny.tls"

# ---- usage
"$BIN" ranks summarize "$T/good/rank0_trace.json" >/dev/null 2>&1
[ $? -eq 2 ] && ok || ko "summarize without -o: expected exit 2"
"$BIN" ranks reduce -o "$T/x" >/dev/null 2>&1
[ $? -eq 2 ] && ok || ko "reduce without inputs: expected exit 2"

# ---- the shared cases: every CSV byte-identical to the direct run
for c in world8 tp_dp_16; do
  D=$SHARED/multirank/$c/ranks
  if [ ! -d "$D" ]; then echo "SKIP: $D absent"; continue; fi
  opt=""
  [ $c = tp_dp_16 ] && opt=--all2allv_heatmap
  "$BIN" ranks -q "$D" $opt --no-xlsx -o "$T/$c.direct" 2>"$T/err" || ko "$c direct: $(cat "$T/err")"
  summarize_all "$D" "$T/$c.tls"
  # the .tls in reverse order: the report does not depend on it
  "$BIN" ranks reduce -q $(ls "$T/$c.tls"/*.tls | sort -r) $opt --no-xlsx -o "$T/$c.red" 2>"$T/err" || ko "$c reduce: $(cat "$T/err")"
  same_csvs "$c" "$T/$c.direct" "$T/$c.red"
  # one trace at a time and three in threads: the same bytes
  for j in 1 3; do
    "$BIN" ranks -q -j $j "$D" $opt --no-xlsx -o "$T/$c.j$j" 2>"$T/err" || ko "$c -j $j: $(cat "$T/err")"
    same_csvs "$c -j $j" "$T/$c.red" "$T/$c.j$j"
  done
done

# ---- the per-rank pass skips the args of host events (cpu_op, python
# functions, annotations, instant events): the summaries are the same bytes
# as with every event's args kept (TRACELENS_RANKS_HOST_ARGS=1), on real
# traces of every kind (sampled ranks, old and new PyTorch, ROCm, NCCL
# metadata, the synthetic ranks)
n_same=0
for f in "$SHARED"/multirank/world8/ranks/rank0_trace.json.gz "$SHARED"/hta/trace_filter/sampled_rank-*.json.gz \
         "$SHARED"/hta/nccl_parser_config/nccl_data.json.gz "$SHARED"/hta/amd_trace/*.json.gz \
         "$SHARED"/hta/critical_path/alexnet/*.json.gz "$SHARED"/hta/call_stack/backward_thread.json \
         "$SHARED"/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz \
         "$SHARED"/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz; do
  [ -f "$f" ] || continue
  r="--rank 0"
  case $f in *sampled_rank-*) r="--rank-from distinfo" ;; esac
  "$BIN" ranks summarize "$f" $r -o "$T/skip.tls" 2>"$T/err" || ko "summarize $f: $(cat "$T/err")"
  TRACELENS_RANKS_HOST_ARGS=1 "$BIN" ranks summarize "$f" $r -o "$T/full.tls" 2>"$T/err" ||
    ko "summarize (host args kept) $f: $(cat "$T/err")"
  if cmp -s "$T/skip.tls" "$T/full.tls"; then ok; n_same=$((n_same + 1))
  else ko "$f: the summary differs when the host events' args are skipped"; fi
done
[ -n "$SHARED" ] && [ -d "$SHARED/hta" ] && { [ $n_same -ge 8 ] && ok || ko "only $n_same traces compared"; }

# a trace with no rank in its name nor in distributedInfo: the error says how to give it
printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"ncclKernel_AllReduce","pid":0,"tid":7,"ts":1,"dur":2,"args":{"correlation":1}}]}' >"$T/norank.json"
"$BIN" ranks summarize "$T/norank.json" -o "$T/norank.tls" 2>"$T/err"
rc=$?
if [ $rc -eq 3 ] && grep -q "no distributedInfo.rank to take the rank from (give it with --rank R" "$T/err"; then ok
else ko "no rank anywhere: exit $rc, $(cat "$T/err")"; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

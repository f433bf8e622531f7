#!/usr/bin/env bash
# `tracelens compare`: --help exits 0; usage errors exit 2 with the help and
# write nothing; input errors exit 1 with one line on stderr naming the file
# and write nothing; a good run exits 0 and writes the workbook and the CSVs
# where -o / --output_csvs_dir say, replacing an earlier run's outputs.
set -u
BIN=$1 ROOT=$2 # $3: the shared data (optional)
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

run() { # expected-rc description args...
  local want=$1 what=$2; shift 2
  (cd "$T" && "$BIN" compare "$@") >"$T/out" 2>"$T/err"
  local rc=$?
  [ "$rc" -eq "$want" ] && ok || ko "$what: exit $rc, expected $want ($(head -c 300 "$T/err"))"
}

mkdir -p "$T/a" "$T/b"
printf 'type,time ms,percent\nbusy_time,2.0,50.0\ntotal_time,4.0,100.0\n' >"$T/a/gpu_timeline.csv"
printf 'type,time ms,percent\nbusy_time,3.0,60.0\ntotal_time,5.0,100.0\n' >"$T/b/gpu_timeline.csv"

# help
run 0 "--help" --help
grep -q '^usage: tracelens compare REPORT1 REPORT2' "$T/out" && ok || ko "--help text"
grep -q -- '--output_csvs_dir' "$T/out" && ok || ko "--help lists --output_csvs_dir"
"$BIN" --help | grep -q '  compare ' && ok || ko "the main help lists compare"

# usage errors: exit 2, one line on stderr, nothing written
run 2 "no reports" -o o1
run 2 "one report" a -o o1
grep -q 'at least two reports' "$T/err" && ok || ko "one report: message"
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q 'see `tracelens compare --help`' "$T/err" && ok ||
  ko "a usage error is one line pointing to --help: $(cat "$T/err")"
run 2 "unknown option" a b --bogus -o o1
grep -q "unknown option '--bogus'" "$T/err" && ok || ko "unknown option: message"
run 2 "unknown sheet" a b --sheets gpu_timeline bogus -o o1
grep -q "unknown sheet 'bogus'" "$T/err" && ok || ko "unknown sheet: message"
run 2 "names count" a b --names x -o o1
grep -q -- '--names gives 1 tags for 2 reports' "$T/err" && ok || ko "names count: message"
run 2 "-o without a value" a b -o
run 2 "--no-xlsx with nothing else" a b --no-xlsx
[ ! -e "$T/o1" ] && [ ! -e "$T/comparison.xlsx" ] && ok || ko "usage errors wrote something"

# input errors: exit 1, one line, nothing written
run 1 "missing report" a nope --sheets gpu_timeline -o o2
[ "$(wc -l <"$T/err")" -eq 1 ] && ok || ko "missing report: one line: $(cat "$T/err")"
grep -q 'nope: cannot open: No such file or directory' "$T/err" && ok || ko "missing report: message"
run 1 "sheet absent" a b -o o2
grep -q 'no ops_summary.csv in this report' "$T/err" && ok || ko "sheet absent: message"
printf 'type,time ms\n"open,1\n' >"$T/a/gpu_timeline.csv.bad"
mkdir -p "$T/c" && cp "$T/a/gpu_timeline.csv.bad" "$T/c/gpu_timeline.csv"
run 1 "bad csv" a c --sheets gpu_timeline -o o2
grep -q 'c/gpu_timeline.csv: line 2: the quoted field opened here never ends' "$T/err" && ok || ko "bad csv: message: $(cat "$T/err")"
[ ! -e "$T/o2" ] && ok || ko "input errors wrote something"

# good runs
run 0 "-o DIR" a b --sheets gpu_timeline -q -o o3
[ -s "$T/o3/comparison.xlsx" ] && [ -f "$T/o3/comparison_csvs/gpu_timeline.csv" ] && ok || ko "-o DIR outputs"
[ ! -s "$T/err" ] && ok || ko "-q: stderr not empty"
head -1 "$T/o3/comparison_csvs/gpu_timeline.csv" | grep -q '^type,time ms__b_diff,time ms__b_pct,a::time ms' && ok || ko "-o DIR header"
ls "$T/o3" | grep -q tmp && ko "temporary files left in o3" || ok
# a second run replaces the owned CSV directory whole
touch "$T/o3/comparison_csvs/stale.csv"
run 0 "-o DIR again" a b --sheets gpu_timeline -q -o o3
[ ! -e "$T/o3/comparison_csvs/stale.csv" ] && ok || ko "the owned CSV directory is replaced"
# the reference spelling: default comparison.xlsx in the working directory
run 0 "default output" a b --sheets gpu_timeline
[ -s "$T/comparison.xlsx" ] && ok || ko "default comparison.xlsx"
grep -q 'tracelens: compare: 1 sheet in comparison.xlsx' "$T/err" && ok || ko "progress line: $(cat "$T/err")"
# --output_csvs_dir adds to an existing directory without removing its files
mkdir -p "$T/mine" && touch "$T/mine/keep.txt"
run 0 "--output_csvs_dir" a b --sheets gpu_timeline -q -o "$T/x.xlsx" --output_csvs_dir mine
[ -f "$T/mine/gpu_timeline.csv" ] && [ -f "$T/mine/keep.txt" ] && [ -s "$T/x.xlsx" ] && ok || ko "--output_csvs_dir outputs"
ls -a "$T/mine" "$T" | grep -q 'tmp-' && ko "temporary files left" || ok
# a report's -o DIR is accepted for its perf_report_csvs/
mkdir -p "$T/rep/perf_report_csvs" && cp "$T/b/gpu_timeline.csv" "$T/rep/perf_report_csvs/"
run 0 "report -o DIR as input" a rep --sheets gpu_timeline --no-xlsx -q -o o4
head -1 "$T/o4/comparison_csvs/gpu_timeline.csv" | grep -q 'time ms__rep_diff' && ok || ko "report dir input"
# xlsx sheet names are cut to 31 characters and kept unique
for d in a b; do
  printf 'name,Input type,Input Dims,Input Strides,Concrete Inputs,operation_count,total_direct_kernel_time_mean,total_direct_kernel_time_sum\nop,t,d,s,c,1,2.0,2.0\n' >"$T/$d/ops_unique_args.csv"
done
run 0 "long tags" a b b --names base a_long_variant_tag_1 a_long_variant_tag_2 --sheets ops_all -q -o o5
[ -s "$T/o5/comparison.xlsx" ] && [ -f "$T/o5/comparison_csvs/ops_unique_args_only_variant_a_long_variant_tag_2.csv" ] && ok || ko "long tags outputs"
if command -v unzip >/dev/null; then
  names=$(unzip -p "$T/o5/comparison.xlsx" xl/workbook.xml | grep -o '<sheet name="[^"]*"' | sed 's/.*name="//; s/"$//')
  [ "$(echo "$names" | wc -l)" -eq 6 ] && [ "$(echo "$names" | sort -u | wc -l)" -eq 6 ] && ok || ko "6 unique sheet names: $names"
  echo "$names" | grep -qx 'ops_unique_args_intersect_a_l~1' && ok || ko "a cut name that is taken ends in ~1: $names"
fi

# .xlsx reports: bad workbooks are input errors naming the file and what was expected
printf 'type,time ms\n' >"$T/notzip.xlsx"
run 1 "xlsx that is not a zip" notzip.xlsx b --sheets gpu_timeline -o o6
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -q 'notzip.xlsx: not a zip archive: expected an .xlsx workbook' "$T/err" && ok ||
  ko "not a zip: message: $(cat "$T/err")"
if python3 -c 'import zipfile' 2>/dev/null; then
  python3 -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1], 'w').writestr('docProps/app.xml', '<a/>')" "$T/nowb.xlsx"
  run 1 "zip without a workbook" a nowb.xlsx --sheets gpu_timeline -o o6
  grep -q 'nowb.xlsx: no part xl/workbook.xml: expected an .xlsx workbook' "$T/err" && ok ||
    ko "zip without a workbook: message: $(cat "$T/err")"
fi
[ ! -e "$T/o6" ] && ok || ko "bad workbooks wrote something"
# a workbook tracelens wrote is read back: its sheets by name, a missing one named
run 0 "comparison workbook" a b --sheets gpu_timeline -q -o o7
run 1 "workbook without the sheet" o7/comparison.xlsx b --sheets ops_summary -o o8
grep -q 'o7/comparison.xlsx: no sheet ops_summary in this workbook (leave the sheet out with --sheets)' "$T/err" && ok ||
  ko "workbook without the sheet: message: $(cat "$T/err")"
run 1 "workbook sheet without the column" o7/comparison.xlsx b --sheets gpu_timeline -o o8
grep -q "o7/comparison.xlsx: sheet gpu_timeline: no column 'time ms'" "$T/err" && ok ||
  ko "workbook sheet without the column: message: $(cat "$T/err")"
[ ! -e "$T/o8" ] && ok || ko "input errors wrote something (xlsx)"

# two reports with the same file name are tagged by their directories
mkdir -p "$T/r1" "$T/r2" "$T/x/r1"
"$BIN" report "$ROOT/examples/demo_trace.json" -o "$T/r1" -q && cp "$T/r1/perf_report.xlsx" "$T/r2/" &&
  cp "$T/r1/perf_report.xlsx" "$T/x/r1/" || ko "reports for the same-name case"
run 0 "same file names" r1/perf_report.xlsx r2/perf_report.xlsx --sheets gpu_timeline -q -o o9
head -1 "$T/o9/comparison_csvs/gpu_timeline.csv" | grep -q 'time ms__r2_diff' && ok ||
  ko "same file names: tags from the directories: $(head -1 "$T/o9/comparison_csvs/gpu_timeline.csv")"
run 1 "same file and directory names" r1/perf_report.xlsx x/r1/perf_report.xlsx --sheets gpu_timeline -o o10
grep -q "have the same tag 'perf_report': pass unique --names" "$T/err" && ok || ko "same names: message: $(cat "$T/err")"

# a directory's tag is its whole name (a dot in it is no extension); a file's
# tag is its name cut at the last dot, as the reference's splitext
mkdir -p "$T/Qwen_Qwen1.5-0.5B-Chat_h100" "$T/Qwen_Qwen1.5-0.5B-Chat_mi300" "$T/rep/mi300_Qwen_Qwen1.5"
cp "$T/a/gpu_timeline.csv" "$T/Qwen_Qwen1.5-0.5B-Chat_h100/"
cp "$T/b/gpu_timeline.csv" "$T/Qwen_Qwen1.5-0.5B-Chat_mi300/"
cp "$T/b/gpu_timeline.csv" "$T/rep/mi300_Qwen_Qwen1.5/"
run 0 "dotted directory names" Qwen_Qwen1.5-0.5B-Chat_h100 Qwen_Qwen1.5-0.5B-Chat_mi300/ --sheets gpu_timeline -q -o o11
[ "$(head -1 "$T/o11/comparison_csvs/gpu_timeline.csv")" = \
  'type,time ms__Qwen_Qwen1.5-0.5B-Chat_mi300_diff,time ms__Qwen_Qwen1.5-0.5B-Chat_mi300_pct,Qwen_Qwen1.5-0.5B-Chat_h100::time ms,Qwen_Qwen1.5-0.5B-Chat_h100::percent,Qwen_Qwen1.5-0.5B-Chat_mi300::time ms,Qwen_Qwen1.5-0.5B-Chat_mi300::percent' ] &&
  ok || ko "dotted directory names: whole names as tags: $(head -1 "$T/o11/comparison_csvs/gpu_timeline.csv") $(cat "$T/err")"
cp "$T/r1/perf_report.xlsx" "$T/rep/h100_Qwen_Qwen1.5.xlsx"
run 0 "dotted file and directory" rep/h100_Qwen_Qwen1.5.xlsx rep/mi300_Qwen_Qwen1.5 --sheets gpu_timeline -q -o o12
head -1 "$T/o12/comparison_csvs/gpu_timeline.csv" | grep -q '^type,time ms__mi300_Qwen_Qwen1.5_diff,.*,h100_Qwen_Qwen1.5::time ms,' &&
  ok || ko "dotted file and directory: $(head -1 "$T/o12/comparison_csvs/gpu_timeline.csv") $(cat "$T/err")"
ROOT_DATA="${3:-$ROOT/../shared/data}/traces"
if [ -d "$ROOT_DATA/h100/Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs" ]; then
  run 0 "dataset report directories" "$ROOT_DATA/h100/Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs" \
    "$ROOT_DATA/h100/gaunernst_bert-small-uncased__1016001_perf_report_csvs" --sheets gpu_timeline -q -o o13
  head -1 "$T/o13/comparison_csvs/gpu_timeline.csv" | grep -q ',Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs::time ms,' &&
    ok || ko "dataset report directories: $(head -1 "$T/o13/comparison_csvs/gpu_timeline.csv") $(cat "$T/err")"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# The XLSX workbook of `tracelens report` holds the same tables as the CSVs:
# reads DIR/perf_report.xlsx back with openpyxl and checks, per workbook, that
# the sheets are the CSV files in report order, and per sheet that the header
# row and every cell equal the CSV (numbers to rel 1e-12, text exactly, empty
# = empty), the header row is frozen and an autofilter covers the table.
# Usage: test_xlsx.sh TRACELENS REPO_ROOT SHARED_DATA_DIR
# Exit 0 on success, 1 on failure, 77 (skip) without python3 + openpyxl.
set -u
TL=$1 ROOT=$2 DATA=${3:-$2/../shared/data}

PY=
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import openpyxl' 2>/dev/null; then PY=$p; break; fi
done
if [ -z "$PY" ]; then
  echo "SKIP: no python3 with openpyxl (apt-get install python3-openpyxl; tests/install_deps.sh does it)"
  echo "0 passed, 0 failed"
  exit 77
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0 fail=0

# check NAME TRACE [report options...]: one report, then the workbook checks.
check() {
  local name=$1 trace=$2 out=$TMP/$1
  shift 2
  "$TL" report "$trace" -o "$out" -q "$@" 2>"$TMP/$name.err"
  local rc=$? res
  if [ $rc -ne 0 ]; then
    echo "FAIL $name: tracelens report exited $rc: $(head -c 500 "$TMP/$name.err")"
    fail=$((fail + 1))
    return
  fi
  "$PY" - "$out" "$name" >"$TMP/$name.log" 2>&1 <<'EOF'
import csv, math, os, re, sys
import openpyxl
from openpyxl.utils import get_column_letter

out, name = sys.argv[1], sys.argv[2]
csvdir = os.path.join(out, "perf_report_csvs")
npass = nfail = 0

def ok(cond, what):
    global npass, nfail
    if cond:
        npass += 1
    else:
        nfail += 1
        print(f"FAIL {name}: {what}")

# Report order (perf-report.md §1, §7.5): fixed sheets around the perf sheets,
# which follow the sheet-family order, each family as X or X_fwd, X_bwd.
FAMILIES = ("GEMM SDPA CONV InferenceAttention BinaryElementwise GroupedGEMM MoE_comm SSM RoPE "
            "CrossEntropy UnaryElementwise MoE_fused MoE_unfused MoE_aux RMSNorm elementwise "
            "GroupQuant FusedRoPE CustomCollective mHC Normalization Reduce").split()
ORDER = ["gpu_timeline", "ops_summary_by_category", "ops_summary", "ops_unique_args",
         "unified_perf_summary"]
ORDER += [f + s for f in FAMILIES for s in ("", "_fwd", "_bwd")]
ORDER += ["kernel_summary", "short_kernel_histogram", "short_kernels_summary", "coll_analysis", "step_breakdown",
          "idle_breakdown", "launch_stats", "user_annotations", "kernel_sequences", "memcpy_summary", "memory_peak",
          "memory_timeline"]

csv.field_size_limit(1 << 30)
wb = openpyxl.load_workbook(os.path.join(out, "perf_report.xlsx"))
stems = sorted(f[:-4] for f in os.listdir(csvdir) if f.endswith(".csv"))
ok(sorted(wb.sheetnames) == stems, f"sheets {wb.sheetnames} != CSV files {stems}")
rank = [ORDER.index(s) if s in ORDER else -1 for s in wb.sheetnames]
ok(wb.sheetnames[:1] == ["gpu_timeline"] and -1 not in rank and rank == sorted(rank),
   f"sheet order {wb.sheetnames} is not the report order")

def same(x, text):
    """xlsx value x equals CSV cell text?"""
    if x is None:
        return text == ""
    if isinstance(x, bool):
        return text == str(x)
    if isinstance(x, (int, float)):
        try:
            y = float(text)
        except ValueError:
            return False
        return x == y or abs(x - y) <= 1e-12 * max(abs(x), abs(y))
    if isinstance(x, str):
        if len(text.encode()) > 32767:   # Excel's cell limit: cut, marked "..."
            return x.endswith("...") and text.startswith(x[:-3])
        return x == text
    return False                         # dates, formulas: never written

for sheet in wb.sheetnames:
    if sheet + ".csv" not in os.listdir(csvdir):
        continue
    ws = wb[sheet]
    with open(os.path.join(csvdir, sheet + ".csv"), encoding="utf-8", newline="") as f:
        rows = [r for r in csv.reader(f) if r]
    cells = [list(r) for r in ws.iter_rows(values_only=True)]
    while cells and all(v is None for v in cells[-1]):
        cells.pop()
    if not rows:   # an empty table's CSV is a lone "\n"; the sheet may keep a header
        ok(len(cells) <= 1, f"{sheet}: CSV is empty but the sheet has {len(cells)} rows")
        continue
    ok(cells and cells[0] == rows[0], f"{sheet}: header {cells[:1]} != CSV {rows[0]}")
    bad = []
    if len(cells) != len(rows):
        bad.append(f"{len(cells)} rows, CSV {len(rows)}")
    for i, (xr, cr) in enumerate(zip(cells[1:], rows[1:]), start=2):
        if len(cr) != len(rows[0]):
            bad.append(f"CSV row {i} has {len(cr)} fields")
        for j, text in enumerate(cr):
            x = xr[j] if j < len(xr) else None
            if not same(x, text):
                bad.append(f"{get_column_letter(j + 1)}{i} ({rows[0][j]}): {x!r} != CSV {text!r}")
    ok(not bad, f"{sheet}: {len(bad)} cells differ: " + "; ".join(bad[:5]))
    # wide sheets keep the name column in view too
    want = "B2" if len(rows[0]) >= 6 and rows[0][0] == "name" else "A2"
    ok(ws.freeze_panes == want, f"{sheet}: freeze_panes {ws.freeze_panes!r} != {want!r}")
    # number formats by column: times 0.000, percentages and TFLOPS/s 0.00,
    # integers (and all-integer text such as param: M) as integers
    h = rows[0]
    fmts = {}
    for j, col in enumerate(h):
        for xr in cells[1:]:
            if j < len(xr) and isinstance(xr[j], (int, float)) and not isinstance(xr[j], bool):
                fmts[col] = ws.cell(row=cells.index(xr) + 1, column=j + 1).number_format
                break
    def expect(col):
        low = col.lower()
        if any(w in low for w in ("%", "percent")): return "0.00"
        if "TFLOPS" in col: return "0.00"
        if any(w in low for w in ("time", "duration", "_us", "(us", "\u00b5s", "_ms", " ms", "(ms")): return "#,##0.000"
        return None
    badf = []
    for col, f in fmts.items():
        e = expect(col)
        vals = [xr[h.index(col)] for xr in cells[1:] if h.index(col) < len(xr)]
        allint = all(isinstance(v, int) or v is None for v in vals)
        if e and not allint and f != e: badf.append(f"{col}: {f!r} != {e!r}")
        if allint and f not in ("0", e): badf.append(f"{col}: integers shown as {f!r}")
        if f == "General": badf.append(f"{col}: General format")
    ok(not badf, f"{sheet}: number formats: " + "; ".join(badf[:5]))
    if sheet == "GEMM" and "param: M" in h:
        vals = [xr[h.index("param: M")] for xr in cells[1:]]
        ok(all(isinstance(v, int) for v in vals if v is not None), f"GEMM param: M not stored as numbers: {vals[:3]}")
    hdr = ws.cell(row=1, column=1)
    ok(hdr.font.b and hdr.fill.fgColor.rgb not in (None, "00000000"), f"{sheet}: header not bold on a fill")
    ref = f"A1:{get_column_letter(len(rows[0]))}{len(rows)}"
    ok(ws.auto_filter.ref == ref, f"{sheet}: autofilter {ws.auto_filter.ref!r} != {ref!r}")

print(f"{name}: {len(wb.sheetnames)} sheets, {npass} passed, {nfail} failed")
print(f"RESULT {npass} {nfail}")
EOF
  rc=$?
  res=$(sed -n 's/^RESULT //p' "$TMP/$name.log")
  grep -v '^RESULT ' "$TMP/$name.log"
  if [ $rc -ne 0 ] || [ -z "$res" ]; then
    echo "FAIL $name: the checker failed (exit $rc)"
    fail=$((fail + 1))
    return
  fi
  pass=$((pass + ${res% *})) fail=$((fail + ${res#* }))
}

check demo "$ROOT/examples/demo_trace.json"
# No roofline, no short kernels (header-only histogram, empty summary), num_kernels keys.
check demo_plain "$ROOT/examples/demo_trace.json" --platform none --short-kernel-threshold-us 0 --group-by-num-kernels
QWEN=$DATA/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz
if [ -f "$QWEN" ]; then
  check mi300_qwen "$QWEN" --platform MI300X
else
  echo "note: $QWEN not found: shared-trace check skipped"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

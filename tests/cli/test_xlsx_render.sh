#!/usr/bin/env bash
# The workbook as a user sees it: LibreOffice (headless) opens the
# perf_report.xlsx of `tracelens report` and saves every sheet as text "as
# shown" (the cells formatted by their number formats), and each shown cell
# is checked against the CSV of the same sheet: texts equal; numbers equal
# to the CSV value rounded as the column's format says (times 3 decimals,
# percentages and TFLOPS/s 2, integers none, other floats 3 to 6), never an
# unformatted 15-digit float, never "###" or an exponent for a value Excel
# could show. It also renders the first sheets to PNG (pdftoppm) and checks
# that the header row is drawn on its fill.
# Usage: test_xlsx_render.sh TRACELENS REPO_ROOT SHARED_DATA_DIR
# Exit 0 on success, 1 on failure, 77 (skip) without soffice.
set -u
TL=$1 ROOT=$2
if ! command -v soffice >/dev/null 2>&1; then
  echo "SKIP: no soffice (apt-get install libreoffice-calc-nogui; tests/install_deps.sh does it)"
  exit 77
fi
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export HOME=$TMP/home   # LibreOffice's profile
mkdir -p "$HOME"

"$TL" report "$ROOT/examples/demo_trace.json" -o "$TMP/r" -q || { echo "FAIL: tracelens report"; exit 1; }
cp "$TMP/r/perf_report.xlsx" "$TMP/shown.xlsx"
(cd "$TMP" && timeout 300 soffice --headless --norestore \
  --convert-to 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false,false,-1' shown.xlsx \
  >/dev/null 2>&1)
ls "$TMP"/shown-*.csv >/dev/null 2>&1 || { echo "FAIL: LibreOffice wrote no sheets"; exit 1; }

"$PY" - "$TMP" <<'EOF'
import csv, math, os, re, sys
tmp = sys.argv[1]
csvdir = os.path.join(tmp, "r", "perf_report_csvs")
csv.field_size_limit(1 << 30)
npass = nfail = 0
def ok(cond, what):
    global npass, nfail
    if cond: npass += 1
    else:
        nfail += 1
        print("FAIL " + what)

def decimals_of(col, true_is_int):
    low = col.lower()
    if true_is_int: return (0, 0)
    if "%" in low or "percent" in low: return (2, 2)
    if "TFLOPS" in col: return (2, 2)
    if any(w in low for w in ("time", "duration", "_us", "(us", "\u00b5s", "_ms", " ms", "(ms")): return (3, 3)
    return (3, 6)

def read(path):
    with open(path, encoding="utf-8", newline="") as f:
        return [r for r in csv.reader(f)]

sheets = sorted(f[len("shown-"):-4] for f in os.listdir(tmp) if f.startswith("shown-") and f.endswith(".csv"))
ok(len(sheets) >= 10, f"only {len(sheets)} sheets shown")
for sheet in sheets:
    src = os.path.join(csvdir, sheet + ".csv")
    if not os.path.exists(src): continue
    want = [r for r in read(src) if r]
    shown = [r for r in read(os.path.join(tmp, f"shown-{sheet}.csv")) if any(r)]
    if not want: continue
    ok(shown[0] == want[0], f"{sheet}: header {shown[0][:4]} != {want[0][:4]}")
    h = want[0]
    # an integer column: every value an integer
    intcol = []
    for j in range(len(h)):
        vals = [r[j] for r in want[1:] if j < len(r) and r[j] != ""]
        intcol.append(bool(vals) and all(re.fullmatch(r"-?\d+", v) for v in vals))
    bad = []
    for i, (wr, sr) in enumerate(zip(want[1:], shown[1:]), start=2):
        for j, text in enumerate(wr):
            s = sr[j] if j < len(sr) else ""
            try:
                v = float(text)
                isnum = text.strip() != "" and not text.strip().lower() in ("nan", "inf", "-inf", "true", "false")
            except ValueError:
                isnum = False
            if text in ("True", "False") and s == text.upper():
                continue                     # a boolean cell
            if s == text:                    # a text cell (or an integer) shown as it is
                if isnum and "." in text and len(text.split(".")[1].rstrip("0")) > 6:
                    bad.append(f"{h[j]} row {i}: {s!r} shown unformatted")
                continue
            if not isnum:
                if s != text and not (len(text.encode()) > 32767 and s.endswith("...")):
                    bad.append(f"{h[j]} row {i}: shown {s[:40]!r} != {text[:40]!r}")
                continue
            if "#" in s or "E" in s.upper():
                bad.append(f"{h[j]} row {i}: shown {s!r} for {text}")
                continue
            lo, hi = decimals_of(h[j], intcol[j])
            frac = s.split(".")[1] if "." in s else ""
            if not (lo <= len(frac) <= hi):
                bad.append(f"{h[j]} row {i}: {s!r} has {len(frac)} decimals, want {lo}..{hi}")
                continue
            sv = float(s.replace(",", ""))
            if abs(sv - v) > 0.5 * 10 ** -len(frac) * (1 + 1e-9) + 1e-12:
                bad.append(f"{h[j]} row {i}: shown {s!r} is not {text} rounded")
    ok(not bad, f"{sheet}: {len(bad)} cells shown wrong: " + "; ".join(bad[:4]))
print(f"{npass} passed, {nfail} failed")
sys.exit(1 if nfail else 0)
EOF
rc=$?
[ $rc -eq 0 ] || exit 1

# The first page as an image: the header row is on its fill (#DDE4EE).
if command -v pdftoppm >/dev/null 2>&1; then
  (cd "$TMP" && timeout 300 soffice --headless --norestore --convert-to pdf shown.xlsx >/dev/null 2>&1) &&
    pdftoppm -r 50 -f 1 -l 1 -png "$TMP/shown.pdf" "$TMP/page" || { echo "FAIL: render to PNG"; exit 1; }
  page=$(ls "$TMP"/page*.png | head -1)
  cat >"$TMP/fill.lua" <<'EOF'
local root, page = ...
package.path = root .. "/tests/lib/?.lua;" .. package.path
local img = assert(require("pngread").read(page))
-- pixels of the header fill #DDE4EE (within anti-aliasing) in the top quarter
local n = 0
for y = 0, img.height // 4 do
  for x = 0, img.width - 1, 2 do
    local r, g, b = img.pixel(x, y)
    if math.abs(r - 0xDD) <= 3 and math.abs(g - 0xE4) <= 3 and math.abs(b - 0xEE) <= 3 then n = n + 1 end
  end
end
if n < 50 then print("FAIL: no header fill drawn on the first page (" .. n .. " pixels)"); os.exit(1) end
print("header fill: " .. n .. " pixels")
EOF
  "$TL" run "$TMP/fill.lua" "$ROOT" "$page" || exit 1
fi
echo "render checks passed"

"""Reads the workbook test_xlsx_cells wrote and checks every cell (see there)."""
import sys
import zipfile

import openpyxl

path = sys.argv[1]
fails = []


def ok(cond, what):
    if not cond:
        fails.append(what)


wb = openpyxl.load_workbook(path)
ok(wb.sheetnames == ["cells", "empty", "nocols"], f"sheets {wb.sheetnames}")
ws = wb["cells"]
rows = list(ws.iter_rows(values_only=True))
ok(rows[0] == ("text & <more>", "f", "i", "b"), f"header {rows[0]}")
ok(ws["A1"].font.b and not ws["A2"].font.b, "header bold, data not")
ok(ws.freeze_panes == "A2", f"freeze {ws.freeze_panes}")
ok(ws.auto_filter.ref == "A1:D11", f"autofilter {ws.auto_filter.ref}")
ok(ws.dimensions == "A1:D11", f"dimension {ws.dimensions}")
long = "".join(chr(ord("a") + i % 26) for i in range(32764)) + "..."
# control characters travel as Excel's _xHHHH_ escapes (openpyxl leaves them so)
texts = ["a&b<c>\"d'", "ctl_x0001_x_x001F_", "_x0041_", " padded ", "naïve – ✓", None, long, "a&b<c>\"d'", None,
         "line\nbreak"]
floats = [1.5, None, "inf", "-inf", 21.008, 0.30000000000000004, 0, 1e300, 3, 123456789.125]
ints = [0, 1000, 2000, None, 4000, -9007199254740993, 6000, 7000, 8000, 9000]
bools = [True, False] + [None] * 8
for r in range(10):
    got = rows[r + 1]
    ok(got[0] == texts[r], f"row {r + 2} text {got[0]!r:.60} != {texts[r]!r:.60}")
    ok(got[1] == floats[r] and type(got[1]) == type(floats[r]) or (isinstance(floats[r], (int, float))
       and isinstance(got[1], (int, float)) and got[1] == floats[r]), f"row {r + 2} float {got[1]!r} != {floats[r]!r}")
    ok(got[2] == ints[r], f"row {r + 2} int {got[2]!r} != {ints[r]!r}")
    ok(got[3] is bools[r], f"row {r + 2} bool {got[3]!r} != {bools[r]!r}")
e = wb["empty"]
ok([c.value for c in e[1]] == ["x", "y"] and e.max_row == 1, "empty sheet: the header only")
ok(wb["nocols"].max_row == 1 and wb["nocols"]["A1"].value is None, "sheet without columns is empty")
with zipfile.ZipFile(path) as z:
    ok(z.testzip() is None, "zip CRCs")
    sst = z.read("xl/sharedStrings.xml").decode()
    # 7 distinct texts (the empty one is an empty cell), 4 + 2 headers, inf, -inf
    ok(sst.count("<si>") == 15,
       f"each distinct text once ({sst.count('<si>')} strings)")
    ok('count="' in sst and "&amp;b&lt;c&gt;" in sst and "_x005F_x0041_" in sst and "_x0001_" in sst,
       "escapes in sharedStrings.xml")
for f in fails:
    print("FAIL", f)
print(f"{0 if fails else 1} passed, {1 if fails else 0} failed")
sys.exit(1 if fails else 0)

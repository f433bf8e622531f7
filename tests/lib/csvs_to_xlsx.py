"""Writes a report directory of <sheet>.csv files as one .xlsx workbook, the
way pandas would: each CSV read with pandas.read_csv's column types (int,
float, bool, text; see src/compare/pandas_cells.h), then written with
DataFrame.to_excel (openpyxl engine): numbers as numbers, booleans as
booleans, missing cells empty, text as strings. Needs only openpyxl.

usage: csvs_to_xlsx.py CSV_DIR OUT.xlsx
"""
import csv
import math
import os
import re
import sys

import openpyxl

NA = {"", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN", "<NA>", "N/A",
      "NA", "NULL", "NaN", "None", "n/a", "nan", "null"}
INT = re.compile(r"^\s*[+-]?\d+\s*$")
FLOAT = re.compile(r"^\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\s*$|^\s*[+-]?inf(inity)?\s*$", re.I)
BOOL = {"True": True, "TRUE": True, "true": True, "False": False, "FALSE": False, "false": False}


def column(values):
    """The column's cells as pandas.read_csv types them."""
    vals = [None if v in NA else v for v in values]
    present = [v for v in vals if v is not None]
    if not present:
        return [None] * len(vals)
    if all(INT.match(v) and -2**63 <= int(v) < 2**63 for v in present):
        if len(present) == len(vals):
            return [int(v) for v in vals]
        return [None if v is None else float(int(v)) for v in vals]
    if all(INT.match(v) or FLOAT.match(v) for v in present):
        return [None if v is None else float(v) for v in vals]
    if all(v in BOOL for v in present):
        return [None if v is None else BOOL[v] for v in vals]
    return vals


def mangle(header):
    """pandas' names: "Unnamed: i", then "x.1", "x.2" for repeats."""
    names = [h if h != "" else f"Unnamed: {i}" for i, h in enumerate(header)]
    counts = {}
    order = [i for i, h in enumerate(header) if h != ""] + [i for i, h in enumerate(header) if h == ""]
    for i in order:
        col = old = names[i]
        cur = counts.get(old, 0)
        while cur > 0:
            counts[old] = cur + 1
            col = f"{old}.{cur}"
            cur = cur + 1 if col in names else counts.get(col, 0)
        names[i] = col
        counts[col] = cur + 1
    return names


def main():
    src, out = sys.argv[1], sys.argv[2]
    wb = openpyxl.Workbook()
    wb.remove(wb.active)
    for f in sorted(os.listdir(src)):
        if not f.endswith(".csv"):
            continue
        with open(os.path.join(src, f), newline="", encoding="utf-8") as fh:
            # pandas skips blank and whitespace-only lines
            rows = [r for r in csv.reader(fh) if len(r) > 1 or (r and r[0].strip())]
        ws = wb.create_sheet(f[:-4][:31])
        if not rows:
            continue
        width = len(rows[0])
        body = [r + [""] * (width - len(r)) for r in rows[1:]]
        cols = [column([r[c] for r in body]) for c in range(width)]
        ws.append(mangle(rows[0]))
        for r in range(len(body)):
            cells = []
            for c in range(width):
                v = cols[c][r]
                if isinstance(v, float) and math.isnan(v):
                    v = None
                cells.append(v)
            ws.append(cells)
    wb.save(out)


if __name__ == "__main__":
    main()

"""Builds the workbook test_xlsx_read reads (see there), with openpyxl:

  typed    every kind of value openpyxl writes (numbers, booleans, text,
           empty cells) in columns whose pandas type the test checks
  raw      a hand-written worksheet: shared strings (plain, rich text,
           phonetic runs, _xHHHH_ escapes, entities), inline strings (rich,
           CDATA, spaces), t="str" / "e" / "b", formulas, cells without r,
           a missing header cell, a repeated header, a missing row, trailing
           empty cells and rows
  empty    no cells at all
  header   a header only

usage: xlsx_read_make.py OUT.xlsx            build the workbook
       xlsx_read_make.py --pandas IN.xlsx DIR   pandas.read_excel(sheet_name=None)
                                                of it as DIR/<sheet>.csv
"""
import os
import re
import sys
import zipfile

RAW_SHEET = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<!-- written by hand -->
<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"
 xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><dimension ref="A1:H8"/>
<sheetData>
<row r="1" spans="1:8"><c r="A1" t="s"><v>0</v></c><c r="B1" t="inlineStr"><is><t>inline</t></is></c><c r="C1" t="s"><v>1</v></c><c r="E1" t="str"><v>f</v></c><c t="s"><v>1</v></c><c r="G1" t="inlineStr"><is><t>err</t></is></c><c r="H1" t="inlineStr"><is><t xml:space="preserve">mixed</t></is></c></row>
<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2" t="inlineStr"><is><r><t>a</t></r><r><rPr><b/></rPr><t>b</t></r></is></c><c r="C2"><v>1</v></c><c r="D2"><v>2.5</v></c><c r="E2"><f>1+1</f><v>2</v></c><c r="F2" t="b"><v>1</v></c><c r="G2" t="e"><v>#N/A</v></c><c r="H2"><v>7</v></c><c r="K2"><v></v></c><c r="Z2" s="1"/></row>
<row r="3"><c r="A3" t="s"><v>3</v></c><c r="B3" t="inlineStr"><is><t><![CDATA[<cdata> & ]]></t></is></c><c r="D3"><v>1.5E3</v></c><c r="E3"><v>3</v></c><c r="F3" t="b"><v>0</v></c><c r="G3"><v>4</v></c><c r="H3" t="s"><v>4</v></c></row>
<row r="5"><c r="A5" t="s"><v>5</v></c><c r="B5" t="inlineStr"><is><t xml:space="preserve">  spaced  </t></is></c><c r="C5"><v>3</v></c><c r="D5"><v>-0.125</v></c><c r="E5"><v>4.0</v></c><c r="F5" t="b"><v>1</v></c><c r="G5"><v>5</v></c><c r="H5"><v>0.5</v></c></row>
<row><c t="s"><v>6</v></c><c t="str"><v>&#x263A; &amp; &lt;&gt;&quot;&apos;</v></c><c><v>4</v></c><c><v>1e-3</v></c><c><v>5</v></c><c t="b"><v>0</v></c><c><v>6</v></c><c t="b"><v>1</v></c></row>
<row r="8"><c r="A8" t="s"><v>7</v></c></row>
</sheetData><pageMargins left="0.7" right="0.7" top="0.75" bottom="0.75" header="0.3" footer="0.3"/></worksheet>"""

SHARED = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="9" uniqueCount="8">
<si><t>text</t></si>
<si><t>dup</t></si>
<si><r><t xml:space="preserve">rich </t></r><r><rPr><b/><sz val="11"/></rPr><t>text</t></r></si>
<si><t>_x005F_x0041_ a&amp;b &lt;c&gt; &#233;</t></si>
<si><t>x</t></si>
<si><t>ctl_x0001_</t></si>
<si><t>kanji</t><rPh sb="0" eb="1"><t>KANA</t></rPh><phoneticPr fontId="1"/></si>
<si><t></t></si>
</sst>"""


def build(out):
    import openpyxl

    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "typed"
    cols = {
        "int": [1, 2, 3, 4],
        "int_missing": [1, None, 3, 4],
        "float": [0.5, 1e-5, 1e20, -2.25],
        "integral_floats": [1.0, 2.0, 3.0, 4.0],
        "bool": [True, False, True, False],
        "bool_missing": [True, None, False, True],
        "bool_int": [True, 5, False, 0],
        "text": ["a", "b", "c", "d"],
        "text_numbers": ["5", "6", " 7 ", "8"],
        "text_bools": ["True", "false", None, "TRUE"],
        "text_bool_cells": ["True", True, False, "False"],
        "na_text": ["NaN", 4, "", 5],
        "mixed": [1, "abc", 2.5, 1e20],
        "bool_text": [True, "x", False, None],
        "empty": [None, None, None, None],
        "": [1, 2, 3, 4],
        "text.1": ["u", "v", "w", "z"],
    }
    ws.append([c if c else None for c in cols] + ["text"])
    for r in range(4):
        ws.append([cols[c][r] for c in cols] + [r])
    wb.create_sheet("raw")
    wb.create_sheet("empty")
    h = wb.create_sheet("header")
    h.append(["a", "b", None, "a"])
    tmp = out + ".tmp"
    wb.save(tmp)
    # the raw sheet and the shared strings, by hand
    with zipfile.ZipFile(tmp) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        rels = zin.read("xl/_rels/workbook.xml.rels").decode()
        raw_part = None
        wbxml = zin.read("xl/workbook.xml").decode()
        rid = re.search(r'<sheet[^>]*name="raw"[^>]*id="(rId\d+)"', wbxml).group(1)
        raw_part = re.search(r'Target="/?(?:xl/)?([^"]+)"[^>]*Id="%s"|Id="%s"[^>]*Target="/?(?:xl/)?([^"]+)"'
                             % (rid, rid), rels)
        raw_part = "xl/" + (raw_part.group(1) or raw_part.group(2))
        for item in zin.infolist():
            data = zin.read(item.filename)
            if item.filename == raw_part:
                data = RAW_SHEET.encode()
            elif item.filename == "xl/_rels/workbook.xml.rels" and "sharedStrings" not in rels:
                data = rels.replace("</Relationships>",
                                    '<Relationship Id="rIdSst" Type="http://schemas.openxmlformats.org/'
                                    'officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/>'
                                    "</Relationships>").encode()
            elif item.filename == "[Content_Types].xml" and b"sharedStrings" not in data:
                data = data.replace(b"</Types>", b'<Override PartName="/xl/sharedStrings.xml" ContentType="'
                                    b'application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>'
                                    b"</Types>")
            if item.filename != "xl/sharedStrings.xml":
                zout.writestr(item, data)
        zout.writestr("xl/sharedStrings.xml", SHARED)
    os.unlink(tmp)


def dump_pandas(path, out_dir):
    import pandas as pd

    for name, df in pd.read_excel(path, sheet_name=None).items():
        df.to_csv(os.path.join(out_dir, name + ".csv"), index=False)


if __name__ == "__main__":
    if sys.argv[1] == "--pandas":
        dump_pandas(sys.argv[2], sys.argv[3])
    else:
        build(sys.argv[1])

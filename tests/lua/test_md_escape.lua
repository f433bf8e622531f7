-- Names from the trace in Markdown (tracelens.md; issue 10 item 12): op,
-- kernel, module and device names holding `|`, newlines, `#`, backticks and
-- `<script>` must not break the tables and cards of the findings files and
-- analysis.md. A trace made here from examples/demo_trace.json carries such
-- names; the orchestrator must run every analyzer without a failure, the
-- output must pass `tracelens validate`, every table row must have its
-- header's number of cells, no name may start a line or open raw HTML. Cells
-- of the CSV and xlsx reports that begin with `= + - @` follow the policy of
-- docs/compat.md: the CSV keeps the text as is (pandas reads it back
-- exactly), the workbook holds it as a string cell, never a formula.
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. root .. "/lua/?.lua;" .. package.path
local T = require "testlib"
local md = require "tracelens.md"

-- The escaping itself --------------------------------------------------------------------

T.eq(md.text("aten::mm"), "aten::mm", "plain names are unchanged")
T.eq(md.cell("(4,1024) bf16<br>(1024,) bf16"), "(4,1024) bf16<br>(1024,) bf16", "<br> between args is kept")
T.eq(md.cell("void k<4, float>(int)"), "void k<4, float>(int)", "a template argument list is kept")
T.eq(md.cell("k<c10::Half, float>"), "k<c10::Half, float>", "a namespaced template argument is kept")
T.eq(md.text("a<script>b</script>"), "a&lt;script>b&lt;/script>", "tags are entities")
T.eq(md.text("<!-- impact-begin kind=p_item -->"), "&lt;!-- impact-begin kind=p_item -->", "no marker from a name")
T.eq(md.text("x\n# y\r\tz"), "x # y  z", "line breaks and tabs are spaces")
T.eq(md.text("a`b\\c"), "a\\`b\\\\c", "backticks and backslashes escaped")
T.eq(md.text("&lt; & b"), "&amp;lt; & b", "an entity in a name is shown as written")
T.eq(md.text("bell\7"), "bell\u{FFFD}", "other control characters are U+FFFD")
T.eq(md.cell("a|b"), "a\\|b", "pipes escaped in cells")
T.eq(md.code("a`b"), "``a`b``", "a code span's fence is longer than any backtick run")
T.eq(md.code("`a"), "`` `a ``", "a leading backtick gets a space inside the fence")
T.eq(md.code("a|b", true), "`a\\|b`", "a code span in a cell escapes pipes")
-- our own sentences keep their code spans; the text around them is escaped
T.eq(md.prose("run `tracelens report T --inference` with <the> traces"),
  "run `tracelens report T --inference` with &lt;the> traces", "prose: a code span kept, the rest escaped")
T.eq(md.prose("`a` and `b|c`, not a\\b"), "`a` and `b|c`, not a\\\\b", "prose: two spans, a backslash outside")
T.eq(md.prose("no span here, a lone ` stays escaped"), "no span here, a lone \\` stays escaped",
  "prose: an unpaired backtick is text")
T.eq(md.heading("C#"), "C\\#", "a trailing # is not a closing sequence")
local parts = md.split_pipes(" a\\|b | c ")
T.eq(#parts, 2, "split_pipes keeps an escaped pipe in its cell")
T.eq(parts[1], " a\\|b ", "split_pipes: first cell")

-- A trace with hostile names -------------------------------------------------------------------

local BAD = "|x\\n# h `tick` <script>alert(1)</script> | y" -- as JSON text (\n escaped)
local src = assert(T.read_file(root .. "/examples/demo_trace.json"))
local function rename(from, to)
  local n
  src, n = src:gsub('"name": "' .. from:gsub("%p", "%%%0") .. '"', function() return '"name": "' .. to .. '"' end)
  T.check(n > 0, "the demo trace has " .. from)
end
for _, op in ipairs({ "aten::mm", "aten::gelu", "aten::sum", "aten::add", "aten::native_layer_norm",
  "aten::_flash_attention_forward" }) do
  rename(op, op .. BAD)
end
rename("nvjet_tst_128x256_64x4_1x2_h_bz_coopA_NNT", "nvjet_tst_128x256" .. BAD)
rename("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3 |x\\n# d <script>")
for i = 0, 3 do rename("nn.Module: GELU_" .. i, "nn.Module: GE|L`U<script>_" .. i) end
-- a spreadsheet formula as an op name (the CSV/xlsx policy)
local FORMULA = "=HYPERLINK(\\\"http://example.invalid\\\",\\\"x\\\")"
rename("aten::copy_", FORMULA)

local tmp = T.tmpdir()
local trace = tmp .. "/hostile.json"
tl.fs.write_file(trace, src)
local out = tmp .. "/out"
local ok, code, stdout, stderr = T.run(string.format("%s run orchestrator.lua %s -o %s --no-rules -q", T.q(bin),
  T.q(trace), T.q(out)))
T.check(ok, "the orchestrator completes on hostile names (exit " .. tostring(code) .. ")\n" .. stderr)
T.check(stdout:find("0 analyzers failed, report checks passed", 1, true),
  "no analyzer failed its own checks and the report passes: " .. stdout)
local vok, vcode, vout = T.run(string.format("%s validate %s", T.q(bin), T.q(out)))
T.check(vok, "tracelens validate passes (exit " .. tostring(vcode) .. ")\n" .. vout)

-- Text outside code spans (CommonMark: a run of n backticks to the next run of exactly n).
local function outside_code(line)
  local outside, i = {}, 1
  while true do
    local s, e = line:find("`+", i)
    if not s then break end
    if s > 1 and line:sub(s - 1, s - 1) == "\\" then
      outside[#outside + 1] = line:sub(i, e)
      i = e + 1
    else
      local fence = line:sub(s, e)
      local close, j = nil, e + 1
      while true do
        local cs, ce = line:find("`+", j)
        if not cs then break end
        if ce - cs + 1 == #fence then close = ce break end
        j = ce + 1
      end
      outside[#outside + 1] = line:sub(i, s - 1)
      if close then i = close + 1 else
        outside[#outside + 1] = fence
        i = e + 1
      end
    end
  end
  outside[#outside + 1] = line:sub(i)
  return table.concat(outside)
end

-- The cells of a table row (a trailing marker comment after the last pipe,
-- as the Top Operations rows carry, is not a cell).
local function cells(line)
  local s = line:gsub("%s*<!%-%-.-%-%->%s*$", ""):match("^%s*(.-)%s*$")
  return #md.split_pipes(s:sub(2, s:sub(-2, -2) == "\\" and -1 or -2))
end

-- Well-formed Markdown: table rows as wide as their header, no line begun by
-- a name, no raw HTML from a name outside code spans.
local function check_markdown(path, rel)
  local text = T.read_file(path)
  if not T.check(text, rel .. " written") then return end
  local lines, header_cells = {}, nil
  for line in (text .. "\n"):gmatch("(.-)\n") do lines[#lines + 1] = line end
  for n, line in ipairs(lines) do
    local where = rel .. ":" .. n
    if line:find("^%s*|") then
      local c = cells(line)
      if not header_cells then header_cells = c
      else T.check(c == header_cells, string.format("%s: %d cells, header has %d: %s", where, c, header_cells, line)) end
    else
      header_cells = nil
    end
    T.check(not line:find("^%s*#+%s*[hd] "), where .. ": a name started a heading: " .. line)
    T.check(not line:find("^%s*| y"), where .. ": a name started a line: " .. line)
    local plain = outside_code(line):lower()
    T.check(not plain:find("<script", 1, true), where .. ": raw <script> outside a code span: " .. line)
  end
  return text
end

local report = check_markdown(out .. "/analysis.md", "analysis.md") or ""
local all = report
for _, sub in ipairs({ "category_findings", "system_findings" }) do
  for _, f in ipairs(tl.fs.listdir(out .. "/" .. sub) or {}) do
    all = all .. (check_markdown(out .. "/" .. sub .. "/" .. f, sub .. "/" .. f) or "")
    T.check(not (T.read_file(out .. "/" .. sub .. "/" .. f) or ""):find("Status: ERROR", 1, true), f .. ": no error")
  end
end
-- the names did reach the documents, escaped
T.check(all:find("aten::mm\\|x # h \\`tick\\` &lt;script>", 1, true), "an escaped op name in a table cell")
T.check(all:find("``aten::mm|x # h `tick` <script>alert(1)</script> | y``", 1, true), "an op name in a code span")
T.check(all:find("nvjet_tst_128x256\\|x", 1, true), "an escaped kernel name in a table cell")
T.check(report:find("HBM3 |x # d &lt;script>", 1, true), "the device name in the report, escaped")

-- CSV and xlsx cells that begin with "=": the CSV as written, the workbook a string
local csv = T.read_file(out .. "/perf_report_csvs/ops_summary.csv") or ""
T.check(csv:find('\n"=HYPERLINK(""http://example.invalid"",""x"")",', 1, true)
  or csv:find('\n=HYPERLINK', 1, true), "the CSV holds the name as written")
local zok, _, sheets = T.run("unzip -p " .. T.q(out .. "/perf_report.xlsx") .. " 'xl/worksheets/*.xml'")
if zok then
  T.check(sheets ~= "" and not sheets:find("<f>", 1, true) and not sheets:find("<f ", 1, true),
    "the workbook has no formula cells")
  local _, _, strings = T.run("unzip -p " .. T.q(out .. "/perf_report.xlsx") .. " xl/sharedStrings.xml")
  T.check(strings:find("=HYPERLINK(", 1, true), "the name is a shared string of the workbook")
end

T.rmrf(tmp)
T.finish()

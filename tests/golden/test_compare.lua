-- Golden test: `tracelens compare` on the reference's two input reports
-- (../shared/data/compare/qwen_h100_vs_mi300/{h100,mi300}_perf_report_csvs,
-- names h100 mi300, all sheets) equals the reference comparison
-- compare_h100_mi300_qwen_csvs/: the same files, headers, row counts and row
-- order; numbers within 1e-6 * max(1, |ref|), text exact. Rows whose sort
-- value ties are compared as a set (spec inference-and-comparative §2.1: the
-- reference sorts with an unstable quicksort, [DROP]). Also: the reference
-- spelling of the outputs (-o X.xlsx --output_csvs_dir D) writes the same
-- CSVs, and compare runs on reports our own `tracelens report` wrote.
local root, data = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local case = data and data .. "/compare/qwen_h100_vs_mi300"
if not case or not T.dir_exists(case .. "/compare_h100_mi300_qwen_csvs") then
  T.skip("../shared/data/compare not found: golden compare test skipped")
end
local bin = arg[3] or T.tracelens_bin()
local ref_dir = case .. "/compare_h100_mi300_qwen_csvs"

local slurp = T.read_file

local function basenames(dir)
  local out = {}
  for _, p in ipairs(T.glob(T.q(dir) .. "/*.csv")) do out[#out + 1] = p:match("([^/]+)$") end
  return out
end

-- The column each sheet is sorted by (descending), nil when the rows keep
-- the merged key order.
local OPS_SORT = {ops_unique_args = "total_direct_kernel_time_sum", ops_all = "total_direct_kernel_time_sum"}
local function sort_col(file)
  local sheet = file:gsub("%.csv$", "")
  if sheet == "gpu_timeline" then return nil end
  if sheet == "ops_summary" then return "h100::total_direct_kernel_time_ms" end
  if sheet == "kernel_summary" then return "h100::Kernel duration (µs)_sum" end
  local base, part = sheet:match("^(.-)_(intersect)_mi300$")
  if not base then base, part = sheet:match("^(.-)_(only_baseline)_mi300$") end
  if not base then base, part = sheet:match("^(.-)_(only_variant)_mi300$") end
  assert(base, "unexpected sheet " .. sheet)
  local col = OPS_SORT[base] or "Kernel Time (µs)_sum"
  return (part == "only_variant" and "mi300::" or "h100::") .. col
end

local function cell_ok(got, want)
  if got == want then return true end
  local a, b = tonumber(got), tonumber(want)
  return a ~= nil and b ~= nil and math.abs(a - b) <= 1e-6 * math.max(1, math.abs(b))
end

local function row_ok(got, want)
  if #got ~= #want then return false end
  for j = 1, #want do
    if not cell_ok(got[j], want[j]) then return false, j end
  end
  return true
end

-- Compares the rows of one sheet: in order, except runs of reference rows
-- with the same (non-empty) sort value, which match as a set.
local function compare_rows(name, header, ours, ref, scol)
  local si
  for j, h in ipairs(header) do if h == scol then si = j end end
  if scol then T.check(si ~= nil, name .. ": sort column " .. scol .. " in the header") end
  local i, bad = 1, 0
  while i <= #ref do
    local e = i
    if si and ref[i][si] ~= "" then
      while e < #ref and ref[e + 1][si] == ref[i][si] do e = e + 1 end
    end
    local used = {}
    for r = i, e do
      local found = false
      for o = i, e do
        if not used[o] and ours[o] and row_ok(ours[o], ref[r]) then
          used[o], found = true, true
          break
        end
      end
      if not found then
        bad = bad + 1
        if bad <= 3 then
          local _, j = row_ok(ours[r] or {}, ref[r])
          io.stderr:write(string.format("%s row %d: column %s: got %s, expected %s\n", name, r,
            tostring(j and header[j]), tostring(j and ours[r] and ours[r][j]), tostring(j and ref[r][j])))
        end
      end
    end
    i = e + 1
  end
  T.eq(bad, 0, name .. ": rows that differ from the reference")
end

local function check_against_reference(out_csvs, what)
  local want, got = basenames(ref_dir), basenames(out_csvs)
  T.eq(table.concat(got, " "), table.concat(want, " "), what .. ": the set of output files")
  for _, f in ipairs(want) do
    local ref_text, our_text = slurp(ref_dir .. "/" .. f), slurp(out_csvs .. "/" .. f)
    local name = what .. " " .. f
    if T.check(our_text ~= nil, name .. " written") then
      if ref_text == "\n" then
        T.eq(our_text, "\n", name .. ": an empty frame is one newline")
      else
        local h1, r1 = T.read_csv(out_csvs .. "/" .. f)
        local h2, r2 = T.read_csv(ref_dir .. "/" .. f)
        T.eq(table.concat(h1, ","), table.concat(h2, ","), name .. " header")
        if T.eq(#r1, #r2, name .. " rows") then compare_rows(name, h2, r1, r2, sort_col(f)) end
      end
    end
  end
end

local h100, mi300 = case .. "/h100_perf_report_csvs", case .. "/mi300_perf_report_csvs"

-- 1. -o DIR: DIR/comparison.xlsx + DIR/comparison_csvs/
local out = T.tmpdir()
local ok, code, _, err = T.run(T.q(bin) .. " compare -q " .. T.q(h100) .. " " .. T.q(mi300) ..
  " --names h100 mi300 --sheets all -o " .. T.q(out .. "/cmp"))
if T.check(ok, "compare failed (" .. tostring(code) .. "): " .. err) then
  check_against_reference(out .. "/cmp/comparison_csvs", "compare")
  local x = slurp(out .. "/cmp/comparison.xlsx")
  T.check(x and x:sub(1, 2) == "PK", "comparison.xlsx is a zip workbook")
  T.eq(err, "", "-q: nothing on stderr")
end

-- 2. the reference's spelling: -o FILE.xlsx --output_csvs_dir DIR, default tags
-- would be the directory names, so --names again
ok, code, _, err = T.run(T.q(bin) .. " compare -q " .. T.q(h100) .. " " .. T.q(mi300) ..
  " --names h100 mi300 -o " .. T.q(out .. "/ref_style.xlsx") .. " --output_csvs_dir " .. T.q(out .. "/csvs"))
if T.check(ok, "compare (reference spelling) failed (" .. tostring(code) .. "): " .. err) then
  T.check(T.file_exists(out .. "/ref_style.xlsx"), "-o X.xlsx writes the workbook there")
  local same = true
  for _, f in ipairs(basenames(out .. "/cmp/comparison_csvs")) do
    same = same and slurp(out .. "/csvs/" .. f) == slurp(out .. "/cmp/comparison_csvs/" .. f)
  end
  T.check(same, "--output_csvs_dir holds the same CSVs as -o DIR")
end

-- 3. default tags: the report paths' file stems
ok, code, _, err = T.run(T.q(bin) .. " compare -q " .. T.q(h100) .. " " .. T.q(mi300) ..
  " --sheets gpu_timeline --no-xlsx -o " .. T.q(out .. "/stems"))
if T.check(ok, "compare (default tags) failed: " .. err) then
  local h = T.read_csv(out .. "/stems/comparison_csvs/gpu_timeline.csv")
  T.eq(table.concat(h, ","), "type,time ms__mi300_perf_report_csvs_diff,time ms__mi300_perf_report_csvs_pct," ..
    "h100_perf_report_csvs::time ms,h100_perf_report_csvs::percent,mi300_perf_report_csvs::time ms," ..
    "mi300_perf_report_csvs::percent", "default tags are the file stems")
  T.check(not T.file_exists(out .. "/stems/comparison.xlsx"), "--no-xlsx writes no workbook")
end

-- 4. on reports written by our own `tracelens report` (the report's -o DIR
-- is accepted as it is). Our reports carry more columns (the roofline
-- columns of the detected platform) and exact-ns times, so the check is
-- structural: the same files, row counts and join keys as the reference.
local traces = data .. "/traces"
local th, tm = traces .. "/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
  traces .. "/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
if T.file_exists(th) and T.file_exists(tm) then
  local ok1 = T.run(T.q(bin) .. " report -q " .. T.q(th) .. " -o " .. T.q(out .. "/rep_h100"))
  local ok2 = T.run(T.q(bin) .. " report -q " .. T.q(tm) .. " -o " .. T.q(out .. "/rep_mi300"))
  T.check(ok1 and ok2, "tracelens report on the Qwen traces")
  ok, code, _, err = T.run(T.q(bin) .. " compare -q " .. T.q(out .. "/rep_h100") .. " " ..
    T.q(out .. "/rep_mi300") .. " --names h100 mi300 -o " .. T.q(out .. "/own"))
  if T.check(ok, "compare of our own reports failed (" .. tostring(code) .. "): " .. err) then
    local dir = out .. "/own/comparison_csvs"
    T.eq(table.concat(basenames(dir), " "), table.concat(basenames(ref_dir), " "), "own reports: the set of files")
    for _, f in ipairs(basenames(ref_dir)) do
      local ref_text = slurp(ref_dir .. "/" .. f)
      if ref_text == "\n" then
        T.eq(slurp(dir .. "/" .. f), "\n", "own reports " .. f .. " is empty too")
      else
        local h1, r1 = T.read_csv(dir .. "/" .. f)
        local h2, r2 = T.read_csv(ref_dir .. "/" .. f)
        T.eq(#r1, #r2, "own reports " .. f .. " rows")
        -- the join keys: the columns that are neither "tag::" nor diff/pct ones
        local keys = {}
        for j, h in ipairs(h2) do
          if not h:find("::", 1, true) and not h:find("__mi300_diff$") and not h:find("__mi300_pct$") then
            keys[#keys + 1] = j
          end
        end
        local function key_set(header, rows, names)
          local idx, set = {}, {}
          for _, n in ipairs(names) do
            for j, h in ipairs(header) do if h == n then idx[#idx + 1] = j end end
          end
          for _, r in ipairs(rows) do
            local k = {}
            for _, j in ipairs(idx) do k[#k + 1] = r[j] end
            set[#set + 1] = table.concat(k, "\1")
          end
          table.sort(set)
          return table.concat(set, "\2")
        end
        local names = {}
        for _, j in ipairs(keys) do names[#names + 1] = h2[j] end
        T.check(key_set(h1, r1, names) == key_set(h2, r2, names), "own reports " .. f .. ": the same join keys")
      end
    end
  end
end

-- 5. .xlsx report inputs (src/compare/xlsx_read.h). (a) The reference's two
-- input reports written as workbooks the way pandas.to_excel writes them
-- (tests/lib/csvs_to_xlsx.py, python3-openpyxl: inline strings, numbers,
-- booleans) give the comparison of the CSV directories: the same files,
-- headers, rows and text; numbers equal within 1e-9 (openpyxl writes floats
-- with 16 significant digits, and pandas reads a float column whose values
-- are all integral back as integers: "0" for "0.0").
local function same_outputs(dir1, dir2, what, rel)
  local f1, f2 = basenames(dir1), basenames(dir2)
  T.eq(table.concat(f2, " "), table.concat(f1, " "), what .. ": the set of output files")
  for _, f in ipairs(f1) do
    local a, b = slurp(dir1 .. "/" .. f), slurp(dir2 .. "/" .. f)
    if not rel then
      T.check(a == b, what .. " " .. f .. ": identical")
    elseif a ~= b and T.check(b ~= nil, what .. " " .. f .. " written") then
      local h1, r1 = T.read_csv(dir1 .. "/" .. f)
      local h2, r2 = T.read_csv(dir2 .. "/" .. f)
      T.eq(table.concat(h2, ","), table.concat(h1, ","), what .. " " .. f .. " header")
      if T.eq(#r2, #r1, what .. " " .. f .. " rows") then
        local bad = 0
        for i = 1, #r1 do
          for j = 1, math.max(#r1[i], #r2[i]) do
            local x, y = r1[i][j], r2[i][j]
            local nx, ny = tonumber(x), tonumber(y)
            local ok = x == y or (nx and ny and math.abs(nx - ny) <= rel * math.max(1, math.abs(nx)))
            if not ok then
              bad = bad + 1
              if bad <= 3 then
                io.stderr:write(string.format("%s %s row %d column %s: %s vs %s\n", what, f, i, tostring(h1[j]),
                  tostring(x), tostring(y)))
              end
            end
          end
        end
        T.eq(bad, 0, what .. " " .. f .. ": cells that differ")
      end
    end
  end
end

local function python_with_openpyxl()
  for _, py in ipairs({"python3", "/usr/bin/python3"}) do
    if T.run(py .. " -c 'import openpyxl' 2>/dev/null") then return py end
  end
end

local py = python_with_openpyxl()
if not py then
  io.stderr:write("note: no python3 with openpyxl (tests/install_deps.sh installs python3-openpyxl): " ..
    "the .xlsx inputs of the reference's reports not checked\n")
else
  local conv = root .. "/tests/lib/csvs_to_xlsx.py"
  local xh, xm = out .. "/xlsx_in/h100.xlsx", out .. "/xlsx_in/mi300.xlsx"
  T.run("mkdir -p " .. T.q(out .. "/xlsx_in"))
  local okh = T.run(py .. " " .. T.q(conv) .. " " .. T.q(h100) .. " " .. T.q(xh))
  local okm = T.run(py .. " " .. T.q(conv) .. " " .. T.q(mi300) .. " " .. T.q(xm))
  if T.check(okh and okm, "csvs_to_xlsx.py on the reference's reports") then
    -- default tags: the workbooks' file stems
    ok, code, _, err = T.run(T.q(bin) .. " compare -q " .. T.q(xh) .. " " .. T.q(xm) ..
      " --no-xlsx -o " .. T.q(out .. "/from_xlsx"))
    if T.check(ok, "compare of .xlsx reports failed (" .. tostring(code) .. "): " .. err) then
      same_outputs(out .. "/cmp/comparison_csvs", out .. "/from_xlsx/comparison_csvs", "xlsx inputs", 1e-9)
    end
    -- a workbook and a CSV directory mixed
    ok, code, _, err = T.run(T.q(bin) .. " compare -q " .. T.q(h100) .. " " .. T.q(xm) ..
      " --names h100 mi300 --no-xlsx -o " .. T.q(out .. "/mixed"))
    if T.check(ok, "compare of a CSV directory and a workbook failed (" .. tostring(code) .. "): " .. err) then
      same_outputs(out .. "/cmp/comparison_csvs", out .. "/mixed/comparison_csvs", "mixed inputs", 1e-9)
    end
  end
end

-- (b) Workbooks `tracelens report` writes (shared strings, shortest float
-- repr, t="b" booleans) give exactly the comparison of their CSVs.
local bert = {traces .. "/h100/gaunernst_bert-small-uncased__1016001.json.gz",
  traces .. "/mi300/gaunernst_bert-small-uncased__1016001.json.gz"}
if T.file_exists(bert[1]) and T.file_exists(bert[2]) then
  local dirs = {out .. "/bert_h100", out .. "/bert_mi300"}
  local ok1 = T.run(T.q(bin) .. " report -q " .. T.q(bert[1]) .. " -o " .. T.q(dirs[1]))
  local ok2 = T.run(T.q(bin) .. " report -q " .. T.q(bert[2]) .. " -o " .. T.q(dirs[2]))
  if T.check(ok1 and ok2, "tracelens report on the bert traces") then
    local function cmp(a, b, o)
      local okc, c, _, e = T.run(T.q(bin) .. " compare -q " .. T.q(a) .. " " .. T.q(b) ..
        " --names h100 mi300 --no-xlsx -o " .. T.q(o))
      T.check(okc, "compare " .. a .. " " .. b .. " failed (" .. tostring(c) .. "): " .. e)
    end
    cmp(dirs[1] .. "/perf_report_csvs", dirs[2] .. "/perf_report_csvs", out .. "/bert_csv")
    cmp(dirs[1] .. "/perf_report.xlsx", dirs[2] .. "/perf_report.xlsx", out .. "/bert_xlsx")
    T.check(#basenames(out .. "/bert_csv/comparison_csvs") >= 3, "bert comparison: sheets written")
    same_outputs(out .. "/bert_csv/comparison_csvs", out .. "/bert_xlsx/comparison_csvs", "own workbooks")
  end
end

-- 6. tl.compare: the command line's sheets as Tables, written the same way
-- with write = DIR (section 1 wrote out/cmp with the same reports and names)
local cli_files = basenames(out .. "/cmp/comparison_csvs")
local sheets = tl.compare({h100, mi300}, {names = {"h100", "mi300"}, write = out .. "/api"})
T.eq(table.concat(basenames(out .. "/api/comparison_csvs"), " "), table.concat(cli_files, " "),
  "tl.compare write = DIR: the command line's files")
for _, f in ipairs(cli_files) do
  T.check(slurp(out .. "/api/comparison_csvs/" .. f) == slurp(out .. "/cmp/comparison_csvs/" .. f),
    "tl.compare " .. f .. ": the command line's bytes")
end
T.check(T.file_exists(out .. "/api/comparison.xlsx"), "tl.compare write = DIR: the workbook")
T.eq(#sheets.__order, #cli_files, "tl.compare: one Table per sheet")
local gh = T.read_csv(out .. "/cmp/comparison_csvs/gpu_timeline.csv")
T.eq(table.concat(sheets.gpu_timeline:columns(), ","), table.concat(gh, ","), "tl.compare: gpu_timeline columns")
T.eq(#sheets.gpu_timeline, 8, "tl.compare: gpu_timeline rows")
local only = tl.compare({h100, mi300}, {names = {"h100", "mi300"}, sheets = {"gpu_timeline", "ops_summary"}})
T.eq(table.concat(only.__order, ","), "gpu_timeline,ops_summary", "tl.compare sheets = {...}")
local function err_of(...)
  local okc, e = pcall(tl.compare, ...)
  return not okc and tostring(e) or "(no error)"
end
T.check(err_of({h100}):find("at least two reports", 1, true), "tl.compare: one report")
T.check(err_of({h100, mi300}, {sheets = {"bogus"}}):find("unknown sheet group 'bogus'", 1, true),
  "tl.compare: an unknown sheet group")
T.check(err_of({h100, mi300}, {names = {"a"}}):find("1 names for 2 reports", 1, true), "tl.compare: names count")
T.check(err_of({h100, out .. "/nowhere"}):find("nowhere", 1, true), "tl.compare: a missing report is named")

T.rmrf(out)
T.finish()

-- Golden test: `tracelens report` against the reference perf-report CSVs of
-- every shared trace, sheet by sheet, column by column, with the comparison
-- rules of perf-report spec §0.3: names and keys exact, counts exact,
-- perf-model values to 1e-9, time-derived values to 1e-4 relative or 1e-3
-- absolute, Python-literal cells parsed and compared structurally, rows
-- whose sort keys tie compared as a set. Known deviations (the spec's FIX
-- list) come from tests/golden/deviations.tsv:
--   trace<TAB>sheet<TAB>column<TAB>rows<TAB>reason
-- trace "*" = every trace; column "*" = every cell of the selected rows,
-- "#rows" = the row count; rows "*" = every row, else the rows whose `name`
-- column equals it.
local root, data, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local P = require "pylit"
if not data or not T.dir_exists(data .. "/traces") then
  T.skip("../shared/data not found: golden report test skipped")
end
bin = bin or T.tracelens_bin()

-- the sheets tracelens writes today; the others are reported, not failed
local IMPLEMENTED = {
  gpu_timeline = true, ops_summary_by_category = true, ops_summary = true, ops_unique_args = true,
  kernel_summary = true, short_kernel_histogram = true, short_kernels_summary = true, coll_analysis = true,
  unified_perf_summary = true, GEMM = true, SDPA_fwd = true, SDPA_bwd = true, CONV_fwd = true, CONV_bwd = true,
  UnaryElementwise = true, BinaryElementwise = true, Normalization = true, Reduce_fwd = true, Reduce_bwd = true,
}

local deviations = {}
for line in io.lines(root .. "/tests/golden/deviations.tsv") do
  if not line:match("^#") and line:match("%S") then
    local trace, sheet, col, rows = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t")
    assert(sheet, "bad deviations.tsv line: " .. line)
    deviations[#deviations + 1] = {trace = trace, sheet = sheet, col = col, rows = rows}
  end
end
-- Is (column, row name) of this sheet a listed deviation?
local function deviates(trace, sheet, col, rowname)
  for _, d in ipairs(deviations) do
    if (d.trace == "*" or d.trace == trace) and d.sheet == sheet and (d.col == "*" or d.col == col)
      and (d.rows == "*" or d.rows == rowname) and (col ~= "#rows" or d.col == "#rows") then
      return true
    end
  end
  return false
end

-- how a column compares
local function kind_of(sheet, col)
  if col:match("^param: ") then return "param" end
  if col:match("^GFLOPS") or col:match("^Data Moved") or col:match("^FLOPS/Byte") then return "model" end
  if col == "Count" or col == "operation_count" or col == "name_count" or col:match("_count$")
    or col == "count" or col == "Short Kernel count" or col == "ex_UID" or col == "UID_first"
    or col == "num_kernels" then
    return "exact_num"
  end
  if col:match("kernel_details") or col:match("Input Dims") or col:match("Input type")
    or col:match("Input Strides") or col:match("Concrete Inputs") or col == "perf_params"
    or col:match("Input dims") or col:match("Input strides") or col == "Categories" then
    return "literal"
  end
  return "auto"
end

local function cell_eq(kind, a, b)
  if kind == "param" then
    local na = a == "" or a == "None" or a == "nan"
    local nb = b == "" or b == "None" or b == "nan"
    if na or nb then return na == nb end
    local x, y = tonumber(a), tonumber(b)
    if x and y then return P.num_eq(x, y, 1e-9, 0) end
    return a == b
  end
  if a == b then return true end
  if kind == "literal" then
    if a == "" or b == "" then return false end
    return P.equal(P.parse(a), P.parse(b), 1e-4, 1e-3)
  end
  local x, y = tonumber(a), tonumber(b)
  if x and y then
    if kind == "exact_num" then return x == y end
    if kind == "model" then return P.num_eq(x, y, 1e-9, 0) end
    return P.num_eq(x, y, 1e-4, 1e-3)
  end
  return false
end

-- single-key descending sorts whose ties are a set (§9.5)
local SORT_KEY = {
  ops_summary_by_category = "total_direct_kernel_time_ms",
  ops_summary = "total_direct_kernel_time_sum",
  kernel_summary = "Kernel duration (\194\181s)_sum",
  coll_analysis = "dur_sum",
  short_kernels_summary = "Short Kernel duration (\194\181s) sum",
}

-- Rows of `ours` matched to `ref` in order; within a run of tied sort keys
-- any permutation is accepted.
local function compare_rows(trace, sheet, header, ours, ref)
  local key = SORT_KEY[sheet]
  local kidx, nidx
  for i, c in ipairs(header) do
    if c == key then kidx = i end
    if c == "name" then nidx = i end
  end
  local function row_eq(r1, r2)
    local rowname = nidx and r2[nidx] or ""
    for i, c in ipairs(header) do
      if not deviates(trace, sheet, c, rowname) and not cell_eq(kind_of(sheet, c), r1[i] or "", r2[i] or "") then
        return false, c, r1[i], r2[i]
      end
    end
    return true
  end
  local used = {}
  local n = math.min(#ours, #ref)
  for r = 1, n do
    local ok, col, a, b = row_eq(ours[r], ref[r])
    if not ok and kidx then
      -- look for a tied row elsewhere
      for s = 1, #ours do
        if not used[s] and ours[s][kidx] and P.num_eq(tonumber(ours[s][kidx]) or 0, tonumber(ref[r][kidx]) or 0, 1e-4, 1e-3)
          and row_eq(ours[s], ref[r]) then
          ok = true
          used[s] = true
          break
        end
      end
    else
      used[r] = true
    end
    if not T.check(ok, string.format("%s %s row %d column %q: ours %q, reference %q", trace, sheet, r, tostring(col),
      tostring(a), tostring(b))) then
      return
    end
  end
end

-- the perf-report references: the shared traces (reference defaults, no
-- platform), and the agent cases (made by the analysis pipeline with the
-- MI300X arch, --group_by_num_kernels and --include_call_stack)
local cases = {}
for _, dir in ipairs(T.glob(data .. "/traces/*/*_perf_report_csvs")) do
  cases[#cases + 1] = {trace = dir:gsub("_perf_report_csvs$", "") .. ".json.gz", refdir = dir, opts = "--platform none"}
end
for _, dir in ipairs(T.glob(data .. "/traces/*/*/*_perf_report_csvs")) do
  cases[#cases + 1] = {trace = dir:gsub("_perf_report_csvs$", "") .. ".json.gz", refdir = dir, opts = "--platform none"}
end
for _, case in ipairs(T.glob(data .. "/agent_cases/standalone/*")) do
  cases[#cases + 1] = {trace = case .. "/trace.json", refdir = case .. "/ref/perf_report_csvs",
                       opts = "--platform MI300X --group-by-num-kernels --include-call-stack"}
end
T.check(#cases >= 20, "reference directories found: " .. #cases)

for _, c in ipairs(cases) do
  local trace_path, refdir = c.trace, c.refdir
  local tname = trace_path:match("([^/]+/[^/]+)%.json%.gz$") or trace_path:match("([^/]+)/trace%.json$")
  local out = T.tmpdir()
  local ok, code, _, err = T.run(T.q(bin) .. " report -q --no-xlsx " .. c.opts .. " " .. T.q(trace_path) .. " -o " .. T.q(out))
  if T.check(ok, tname .. ": report failed (" .. tostring(code) .. "): " .. err) then
    for _, ref in ipairs(T.glob(refdir .. "/*.csv")) do
      local sheet = ref:match("([^/]+)%.csv$")
      local mine = out .. "/perf_report_csvs/" .. sheet .. ".csv"
      if not IMPLEMENTED[sheet] then
        io.stderr:write("note: ", tname, " ", sheet, ": sheet not implemented yet\n")
      elseif T.check(T.file_exists(mine), tname .. ": sheet missing: " .. sheet) then
        local h1, r1 = T.read_csv(mine)
        local h2, r2 = T.read_csv(ref)
        T.eq(table.concat(h1, "|"), table.concat(h2, "|"), tname .. " " .. sheet .. " header")
        if not deviates(tname, sheet, "#rows", "*") then
          T.eq(#r1, #r2, tname .. " " .. sheet .. " row count")
          compare_rows(tname, sheet, h2, r1, r2)
        end
      end
    end
  end
  T.rmrf(out)
end
T.finish()

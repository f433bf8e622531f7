-- sheetcmp: the golden tests' comparison of a perf-report sheet (CSV) with
-- the reference's, column by column, with the rules of perf-report spec
-- §0.3: names and keys exact, counts exact, perf-model values to 1e-9,
-- time-derived values to 1e-4 relative or 1e-3 absolute, Python-literal
-- cells parsed and compared structurally, rows whose sort keys tie
-- compared as a set. Known deviations come from tests/golden/deviations.tsv:
--   trace<TAB>sheet<TAB>column<TAB>rows<TAB>reason
-- trace "*" = every trace; column "*" = every cell of the selected rows,
-- "#rows" = the row count; rows "*" = every row, else the rows whose `name`
-- column equals it.
--
--   local C = sheetcmp.new(T, {deviations = path, uid_tol = 10, ignore = {col = true}})
--   C:compare_sheet(tname, sheet, mine_csv, ref_csv)
-- uid_tol: columns whose name contains "UID" compare with |diff| < uid_tol
-- (the inference report's rule: capture-merge UIDs depend on copy order);
-- ignore: columns not compared.
local P = require "pylit"

local M = {}
M.__index = M

local function load_deviations(path)
  local list = {}
  for line in io.lines(path) do
    if not line:match("^#") and line:match("%S") then
      local trace, sheet, col, rows = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t([^\t]*)\t")
      assert(sheet, "bad deviations.tsv line: " .. line)
      list[#list + 1] = {trace = trace, sheet = sheet, col = col, rows = rows}
    end
  end
  return list
end

function M.new(T, opts)
  return setmetatable({T = T, deviations = load_deviations(opts.deviations), uid_tol = opts.uid_tol,
                       ignore = opts.ignore or {}}, M)
end

-- Is (column, row name) of this sheet a listed deviation?
function M:deviates(trace, sheet, col, rowname)
  for _, d in ipairs(self.deviations) do
    if (d.trace == "*" or d.trace == trace) and d.sheet == sheet and (d.col == "*" or d.col == col)
      and (d.rows == "*" or d.rows == rowname) and (col ~= "#rows" or d.col == "#rows") then
      return true
    end
  end
  return false
end

-- how a column compares
function M:kind_of(col)
  if self.uid_tol and col:match("UID") then return "uid" end
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

function M:cell_eq(kind, a, b)
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
    if kind == "uid" then return math.abs(x - y) < self.uid_tol end
    if kind == "exact_num" then return x == y end
    if kind == "model" then return P.num_eq(x, y, 1e-9, 0) end
    return P.num_eq(x, y, 1e-4, 1e-3)
  end
  return false
end

-- single-key descending sorts whose ties are a set (§9.5)
M.SORT_KEY = {
  ops_summary_by_category = "total_direct_kernel_time_ms",
  ops_summary = "total_direct_kernel_time_sum",
  kernel_summary = "Kernel duration (\194\181s)_sum",
  coll_analysis = "dur_sum",
  short_kernels_summary = "Short Kernel duration (\194\181s) sum",
}

-- Rows of `ours` matched to `ref` in order; within a run of tied sort keys
-- any permutation is accepted.
function M:compare_rows(trace, sheet, header, ours, ref)
  local T = self.T
  local key = M.SORT_KEY[sheet]
  local kidx, nidx
  for i, c in ipairs(header) do
    if c == key then kidx = i end
    if c == "name" then nidx = i end
  end
  local function row_eq(r1, r2)
    local rowname = nidx and r2[nidx] or ""
    for i, c in ipairs(header) do
      if not self.ignore[c] and not self:deviates(trace, sheet, c, rowname)
        and not self:cell_eq(self:kind_of(c), r1[i] or "", r2[i] or "") then
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

-- One sheet: header, row count (unless a #rows deviation) and every row.
function M:compare_sheet(tname, sheet, mine, ref)
  local T = self.T
  local h1, r1 = T.read_csv(mine)
  local h2, r2 = T.read_csv(ref)
  T.eq(table.concat(h1, "|"), table.concat(h2, "|"), tname .. " " .. sheet .. " header")
  if not self:deviates(tname, sheet, "#rows", "*") then
    T.eq(#r1, #r2, tname .. " " .. sheet .. " row count")
    self:compare_rows(tname, sheet, h2, r1, r2)
  end
end

return M

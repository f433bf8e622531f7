-- tracelens.fusion.lookup — the kernel lookups built from the
-- unified_perf_summary (analysis-layer spec §6.8, §3.6 step 4, §10 step 6):
-- per kernel name x first input shape, the first row's values, and the
-- shape-aware lookup over them (exact name, else a prefix match; exact
-- shape, else the first shape). data_lookup holds the data in/out split of
-- compute_data_in_out (candidate enrichment), perf_lookup the perf-model
-- columns (the §10 estimator). The unified table is a tl Table or a plain
-- array of row tables.
local tl = require "tracelens"
local json = require "tracelens.json"
local py = require "tracelens.py"
local common = require "tracelens.fusion.common"
local kernel_names = require("tracelens.analysis").kernel_names

local is_null, truthy = common.is_null, common.truthy

local M = {}

-- Rows of the unified_perf_summary: a tl Table or a plain array.
local function unified_rows(unified)
  if type(unified) == "table" and getmetatable(unified) == nil then return ipairs(unified) end
  return unified:rows()
end

local function cell(row, col)
  local v = row[col]
  if is_null(v) or v ~= v then return nil end -- NaN -> None
  return v
end

-- Shape keys ----------------------------------------------------------------

local NONE_KEY = "\0None"

local function shape_text(v)
  if type(v) == "table" then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = shape_text(x) end
    return "(" .. table.concat(parts, ",") .. ")"
  end
  if type(v) == "number" then return json.number_text(v) end
  return py.str(v)
end

--- parse_first_shape(s) (§6.8): the first element of a literal list/tuple
--- when it is a list or tuple, as a key string; nil otherwise. s may be the
--- text of a literal or an already decoded list (an event's Input Dims).
local function parse_first_shape(s)
  if is_null(s) then return nil end
  local v = s
  if type(s) ~= "table" then
    v = py.literal(type(s) == "string" and s or py.str(s))
    if v == nil then return nil end
  end
  if type(v) ~= "table" or json.is_obj(v) or #v == 0 then return nil end
  local first = v[1]
  if type(first) ~= "table" or json.is_obj(first) then return nil end
  return shape_text(first)
end
M.parse_first_shape = parse_first_shape

-- An insertion-ordered map: { keys = {...}, map = {...} }
local function omap() return { keys = {}, map = {}, memo = {} } end
local function oput(m, k, v)
  if m.map[k] == nil then
    m.keys[#m.keys + 1] = k
    m.map[k] = v
  end
end

-- the shapes of kernel k: an exact key, else the first key (insertion
-- order) where one name is a prefix of the other
-- (memoized per name: candidates repeat their kernel names many times)
local function prefix_lookup(lookup, k)
  local memo = lookup.memo[k]
  if memo ~= nil then return memo or nil end
  local found = false
  local v = lookup.map[k]
  if v ~= nil and #v.keys > 0 then
    found = v
  else
    for _, key in ipairs(lookup.keys) do
      if k:sub(1, #key) == key or key:sub(1, #k) == k then
        found = lookup.map[key]
        break
      end
    end
  end
  lookup.memo[k] = found
  return found or nil
end

-- the shape key of a candidate's input_dims (memoized per candidate table)
local shape_memo = setmetatable({}, { __mode = "k" })
local function shape_key_of(input_dims)
  if not truthy(input_dims) then return NONE_KEY end
  if type(input_dims) == "table" then
    local k = shape_memo[input_dims]
    if k == nil then
      k = parse_first_shape(input_dims) or NONE_KEY
      shape_memo[input_dims] = k
    end
    return k
  end
  return parse_first_shape(input_dims) or NONE_KEY
end

--- shape_aware_lookup(table, kernel, input_dims) (§6.8)
local function shape_aware_lookup(lookup, k, input_dims)
  local shapes = prefix_lookup(lookup, k)
  if not shapes then return {} end
  local hit = shapes.map[shape_key_of(input_dims)]
  if hit ~= nil and next(hit) ~= nil then return hit end
  local first = shapes.keys[1]
  if first ~= nil then return shapes.map[first] end
  return {}
end


-- per row with a kernel_details_summary: every kernel name x first shape,
-- the first row wins; value = fn(row)
local function kernel_lookup(unified, fn)
  local lookup = omap()
  for _, row in unified_rows(unified) do
    local kds = cell(row, "kernel_details_summary")
    if kds ~= nil then
      local shape = parse_first_shape(cell(row, "Input Dims")) or NONE_KEY
      local value
      for _, name in ipairs(kernel_names(tostring(kds))) do
        local shapes = lookup.map[name]
        if not shapes then
          shapes = omap()
          oput(lookup, name, shapes)
        end
        if shapes.map[shape] == nil then
          value = value or fn(row)
          oput(shapes, shape, value)
        end
      end
    end
  end
  return lookup
end

M.prefix_lookup = prefix_lookup
M.shape_aware_lookup = shape_aware_lookup

--- compute_data_in_out(op_category, perf_params_str, data_moved_mb) (§3.6)
function M.compute_data_in_out(cat, pp_str, dm)
  local h_in, h_out
  if truthy(dm) then h_in, h_out = dm / 2, dm / 2 end
  local pp
  if pp_str == nil or pp_str == "" then
    pp = {}
  else
    pp = py.literal(pp_str)
    if pp == nil then return h_in, h_out end
  end
  if dm == nil then return h_in, h_out end
  if type(pp) ~= "table" then return h_in, h_out end
  if cat == "GEMM" and truthy(pp.M) and truthy(pp.N) and truthy(pp.K) then
    local M_, N, K = pp.M, pp.N, pp.K
    local total = M_ * K + K * N + M_ * N
    return dm * (M_ * K + K * N) / total, dm * M_ * N / total
  elseif cat == "reduce" then
    return dm, 0.0
  elseif cat == "elementwise" and pp.shape_in1 ~= nil then
    return 2 * dm / 3, dm / 3
  end
  return h_in, h_out
end

-- kernel_perf_lookup, orchestrator flavour (§3.6 step 4: op category and
-- the data in/out split)
function M.data_lookup(unified)
  return kernel_lookup(unified, function(row)
    local cat = cell(row, "op category")
    local din, dout = M.compute_data_in_out(cat, cell(row, "perf_params") or "", cell(row, "Data Moved (MB)"))
    return { op_category = cat, data_in_mb = din, data_out_mb = dout }
  end)
end

-- the perf-model columns of the §10 estimator
function M.perf_lookup(unified)
  return kernel_lookup(unified, function(row)
    return {
      ["Data Moved (MB)"] = cell(row, "Data Moved (MB)"),
      GFLOPS = cell(row, "GFLOPS"),
      ["FLOPS/Byte"] = cell(row, "FLOPS/Byte"),
      ["Compute Spec"] = cell(row, "Compute Spec"),
    }
  end)
end

return M

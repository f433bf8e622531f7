-- The analysis layer's intermediates for the bert-small traces against the
-- reference's (../shared/data/agent_golden/): standalone (the MI300X trace)
-- and comparative (MI300X as trace 1 against H100 as trace 2). Manifest,
-- metadata, every *_metrics.json, priority_data.json, the model-
-- identification inputs; by the golden rules of analysis-layer.md (key order
-- and number kinds exact, time-derived numbers within the time tolerance,
-- rounded numbers within one unit of the last decimal). Expected deviations:
--   [FIX Q7]  cpu_idle_metrics.kernel_analysis (computed from the real columns)
--   [FIX Q5]  priority_data.recommendations[].operation_count (sum of member_count)
--   [DROP]    operations[].call_chain: the reference's python call stacks lose
--             frames whose float end time rounds past their parent's (its
--             1 µs bleed rule on Python float arithmetic); tracelens keeps them
--             (exact integer ns), see docs/compat.md.
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local json = require "tracelens.json"
local cmp = require "jsoncmp"

local read = tl.fs.read_file
local GOLDEN = shared .. "/agent_golden/"
local TRACE1 = shared .. "/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz"
local TRACE2 = shared .. "/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
if not T.file_exists(GOLDEN .. "standalone/priority_data.json") then T.skip("no agent goldens at " .. GOLDEN) end

local UPSTREAM_TRACE = "tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz"
local TIME_DERIVED = { total_time_ms = true, computation_time_percent = true, exposed_comm_time_percent = true,
  exposed_memcpy_time_percent = true, idle_time_percent = true, baseline_ms = true,
  -- trace 2's category times (the reference's float µs carry sub-ns digits the loader rounds to ns)
  total_direct_kernel_time_ms = true, ["Percentage (%)"] = true, ["Cumulative Percentage (%)"] = true }

local function tolerance(path, a, b)
  local key = path:match("%.([^.%[%]]+)$")
  if TIME_DERIVED[key] then return cmp.time_close(a, b) end
  return cmp.last_unit(a, b)
end

local deviations = {
  ["category_data/cpu_idle_metrics.json"] = function(p) return p:match("^%$%.kernel_analysis") end,
  ["priority_data.json"] = function(p) return p:match("^%$%.recommendations%[%d+%]%.operation_count$") end,
  -- [FIX shares] a category's kernel time leaves out memory copies: "other" loses the 2.404 µs
  -- `Memcpy DtoD` of aten::_local_scalar_dense (0.011 -> 0.009 ms, checked below)
  ["category_data/category_manifest.json"] = function(p) return p == "$.categories[7].gpu_kernel_time_ms" end,
  ["metadata/other_metadata.json"] = function(p) return p == "$.time_breakdown.gpu_kernel_time_ms" end,
}

-- [FIX shares] aten::_local_scalar_dense launches only a `Memcpy DtoD`: it is a memory copy
-- (docs/compat.md), so it gets no HBM efficiency and no impact estimate, and the "other"
-- category's time leaves its 2.404 µs out. The reference's files, changed accordingly.
local COPY_OP = "aten::_local_scalar_dense"
local function without_copy_estimates(list)
  local out = json.arr()
  for _, e in ipairs(list or {}) do
    if e.operation ~= COPY_OP then out[#out + 1] = e end
  end
  return out
end
local function copy_fix(rel, ref)
  if rel == "category_data/category_manifest.json" and ref.trace2_ops_summary_by_category then
    -- trace 2 (H100): "other" without the 2.24 µs `Memcpy DtoH` of aten::_local_scalar_dense;
    -- the shares of the total recomputed (pandas order kept: no category moves)
    local list, total = ref.trace2_ops_summary_by_category, 0
    for _, r in ipairs(list) do
      if r["op category"] == "other" then r.total_direct_kernel_time_ms = r.total_direct_kernel_time_ms - 0.00224 end
      total = total + r.total_direct_kernel_time_ms
    end
    local cum = 0
    for _, r in ipairs(list) do
      r["Percentage (%)"] = r.total_direct_kernel_time_ms / total * 100
      cum = cum + r["Percentage (%)"]
      r["Cumulative Percentage (%)"] = cum
    end
  elseif rel == "priority_data.json" then
    ref.all_estimates = without_copy_estimates(ref.all_estimates)
  elseif rel == "category_data/other_metrics.json" then
    ref.total_time_ms, ref.percent_of_compute = 0.009, 0.26 -- 8.6 µs; of 3.496 ms end to end
    ref.impact_estimates = without_copy_estimates(ref.impact_estimates)
    for i, op in ipairs(ref.operations or {}) do
      if op.name == COPY_OP then
        op.efficiency.efficiency_percent, op.efficiency.bound_type = json.null, json.null
        local o = json.obj()
        for _, k in ipairs(json.keys(op)) do
          o[k] = op[k]
          if k == "efficiency" then o.memory_copy = true end
        end
        ref.operations[i] = o
      end
    end
  end
  return ref
end
local function ignore_for(rel)
  local extra = deviations[rel]
  return function(p) return p:match("%.call_chain$") or (extra and extra(p)) end
end

local tmp = T.tmpdir()

local function check_scope(scope, extra_args)
  local G = GOLDEN .. scope .. "/"
  local out = tmp .. "/" .. scope
  local ok, code, stdout, stderr = T.run(string.format("%s run orchestrator.lua %s %s -o %s --platform MI300X --no-rules -q",
    T.q(bin), T.q(TRACE1), extra_args, T.q(out)))
  T.check(ok, scope .. ": orchestrator exit " .. tostring(code) .. "\n" .. stdout .. stderr)
  local function reference(rel)
    local text = read(G .. rel)
    text = text:gsub("OUTPUT_DIR", (out:gsub("%%", "%%%%"))):gsub(UPSTREAM_TRACE:gsub("%p", "%%%0"),
      (TRACE1:gsub("%%", "%%%%")))
    return json.decode(text)
  end
  local files = { "category_data/category_manifest.json", "priority_data.json" }
  for _, f in ipairs(tl.fs.listdir(G .. "metadata") or {}) do
    if f:match("%.json$") and f ~= "model_info.json" then files[#files + 1] = "metadata/" .. f end
  end
  for _, f in ipairs(tl.fs.listdir(G .. "category_data") or {}) do
    if f:match("_metrics%.json$") then files[#files + 1] = "category_data/" .. f end
  end
  for _, rel in ipairs(files) do
    local text = read(out .. "/" .. rel)
    if T.check(text ~= nil, scope .. ": " .. rel .. " written") then
      local diffs = cmp.compare(json.decode(text), copy_fix(rel, reference(rel)), { tolerance = tolerance, ignore = ignore_for(rel) })
      T.check(#diffs == 0, scope .. ": " .. rel .. ":\n  " .. table.concat(diffs, "\n  ", 1, math.min(#diffs, 12)))
    end
  end
  local manifest = json.decode(read(out .. "/category_data/category_manifest.json") or "{}")
  local other = (manifest.categories or {})[7] or {}
  T.eq(other.name, "other", scope .. ": category 7 is other")
  T.eq(other.gpu_kernel_time_ms, 0.009, scope .. ": other's kernel time without the Memcpy DtoD (FIX shares)")
  local om = json.decode(read(out .. "/metadata/other_metadata.json") or "{}")
  T.eq((om.time_breakdown or {}).gpu_kernel_time_ms, 0.009, scope .. ": other_metadata time_breakdown (FIX shares)")
  for _, rel in ipairs({ "category_data/cpu_idle_ops.csv" }) do T.eq(read(out .. "/" .. rel), read(G .. rel), rel) end
  return out
end

local out = check_scope("standalone", "")
for _, rel in ipairs({ "metadata/nn_modules.txt", "metadata/condensed_op_info.csv" }) do
  T.eq(read(out .. "/" .. rel), read(GOLDEN .. "standalone/" .. rel), rel)
end
-- the model identification replaced the default with evidence from the trace
local info = json.decode(read(out .. "/metadata/model_info.json") or "{}")
T.check(info.precision == "BF16", "model_info precision from the dominant GEMM dtype: " .. tostring(info.precision))
T.check(tostring(info.model):find("BERT") or tostring(info.model):find("Bert"), "model_info model from nn.Module names: "
  .. tostring(info.model))

check_scope("comparative", "--compare " .. T.q(TRACE2) .. " --platform2 H100")
T.rmrf(tmp)
T.finish()

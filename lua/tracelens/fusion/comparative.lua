-- tracelens.fusion.comparative — the comparative extraction of fusion
-- candidates (analysis-layer spec §3.6, Case A): trace-1 modules whose GPU
-- kernels map (through the TraceDiff diff_stats table) to fewer kernels in
-- trace 2, past gates G1-G4 and the delta-kernel test; merged per base
-- name, deduplicated by kernel set and sorted by trace-1 time.
local json = require "tracelens.json"
local common = require "tracelens.fusion.common"
local dedup = require "tracelens.fusion.dedup"
local overlap = require "tracelens.fusion.overlap"

local has_any, kernel_type = common.has_any, common.kernel_type
local parent_chain, input_dims_of = common.parent_chain, common.input_dims_of
local EXCLUDED = common.EXCLUDED

local M = {}

local LAYOUT_TRANSFORM = { "batched_transpose", "nchw2nhwc", "nhwc2nchw", "transpose_nchw", "transpose_cnhw" }
local CASE_A_MAX_DELTA, CASE_A_MAX_N1 = 15, 30

-- The walk's rows (trace:fusion_diff_nodes) by index: a kernel's duration
-- (µs, a float) and its record, the JSON fields of a kernel: name, type,
-- dur_us, and for a trace-1 row its lca id (a float, as the reference read
-- it from a CSV: 18.0 [KEEP]) and GPU uid.
local function dur_us(rows, i) return (rows.kernel_time[i] or 0) + 0.0 end

local function kernel_records(rows, list, first, last)
  local out = {}
  for j = first, last do
    local i = list[j]
    local name = rows.name[i]
    out[#out + 1] = { name = name, type = kernel_type(name), dur_us = dur_us(rows, i), lca_id = rows.lca_id[i],
      gpu_op_uid = rows.gpu_op_uid[i] }
  end
  return out
end

-- the GPU uids of one instance's mapped trace-1 kernels
local function instance_uids(rows, list, first, last)
  local out = {}
  for j = first, last do out[#out + 1] = rows.gpu_op_uid[list[j]] end
  return out
end

local function total_us(rows, list, first, last)
  local total = 0.0
  for j = first, last do total = total + dur_us(rows, list[j]) end
  return total
end

-- f(x) memoised on x (x never nil)
local function memoised(f)
  local memo = {}
  return function(x)
    local v = memo[x]
    if v == nil then
      v = f(x)
      memo[x] = v
    end
    return v
  end
end

-- name -> has_any(lower(name), pats), memoised (kernel names repeat)
local function name_matcher(pats)
  local match = memoised(function(name) return has_any(name:lower(), pats) end)
  return function(name) return match(tostring(name)) end
end

-- Gates G1-G4 of Case A: the kernel counts alone.
local function case_a_counts(n1, n2)
  return n1 > n2 and n1 - n2 <= CASE_A_MAX_DELTA and n1 <= CASE_A_MAX_N1 and n2 >= 1
end

-- The delta-kernel test of Case A: the n1 - n2 shortest trace-1 kernels
-- (ties: list order) are not all excluded and not all layout transforms.
local function case_a_delta(rows, list, first, last, n2, excluded, layout)
  local by_dur = {} -- the kernels, a stable insertion sort by duration
  for j = first, last do
    local i, p = list[j], #by_dur + 1
    local d = dur_us(rows, i)
    while p > 1 and dur_us(rows, by_dur[p - 1]) > d do
      by_dur[p] = by_dur[p - 1]
      p = p - 1
    end
    by_dur[p] = i
  end
  local all_excluded, all_layout = true, true
  for p = 1, #by_dur - n2 do
    local name = rows.name[by_dur[p]]
    all_excluded = all_excluded and excluded(name)
    all_layout = all_layout and layout(name)
  end
  return not all_excluded and not all_layout
end

local function kernel_list(list, with_ids)
  local out = json.arr()
  for i, k in ipairs(list) do
    out[i] = with_ids and json.obj("name", k.name, "type", k.type, "dur_us", k.dur_us, "lca_id", k.lca_id,
      "gpu_op_uid", k.gpu_op_uid) or json.obj("name", k.name, "type", k.type, "dur_us", k.dur_us)
  end
  return out
end

local function type_summary(list)
  local out = json.obj()
  for _, k in ipairs(list) do out[k.type] = (out[k.type] or 0) + 1 end
  return out
end

local function extract_comparative(trace, diff_stats)
  if diff_stats == nil or #diff_stats == 0 then return json.arr() end
  local excluded, layout = name_matcher(EXCLUDED), name_matcher(LAYOUT_TRANSFORM)
  local base_of = memoised(common.strip_module_index)
  local by_base, order, instances = {}, {}, {}
  -- the nodes with 2..30 mapped trace-1 kernels and more of them than
  -- trace-2 rows (C walk over diff_stats; most nodes match one to one)
  local nodes, rows = trace:fusion_diff_nodes(diff_stats, CASE_A_MAX_N1)
  local t1, t2 = nodes.t1, nodes.t2
  for j = 1, nodes.n do
    local f1, l1, f2, l2 = nodes.t1_off[j], nodes.t1_off[j + 1] - 1, nodes.t2_off[j], nodes.t2_off[j + 1] - 1
    local n2 = l2 - f2 + 1
    local ev = case_a_counts(l1 - f1 + 1, n2) and trace:node(nodes.uid[j])
    local base = ev and base_of(ev.name or "") or ""
    if base ~= "" and case_a_delta(rows, t1, f1, l1, n2, excluded, layout) then
      local total1, total2 = total_us(rows, t1, f1, l1), total_us(rows, t2, f2, l2)
      local c = by_base[base]
      if c then
        c.instance_count = c.instance_count + 1
        c.total_kernel_time_us_trace1 = c.total_kernel_time_us_trace1 + total1
        c.total_kernel_time_us_trace2 = c.total_kernel_time_us_trace2 + total2
        local list = instances[c]
        list[#list + 1] = instance_uids(rows, t1, f1, l1)
      else
        -- [DROP Q14] kernels_trace2 in ascending lca_id, not CPython's set order (the C walk's)
        local k1, k2 = kernel_records(rows, t1, f1, l1), kernel_records(rows, t2, f2, l2)
        local types = json.arr()
        for i, k in ipairs(k1) do types[i] = k.type end
        c = json.obj("module_name", ev.name, "base_name", base, "parent_chain", parent_chain(trace, ev.uid),
          "instance_count", 1, "kernel_count_trace1", #k1, "kernel_count_trace2", #k2, "delta", #k1 - #k2,
          "kernels_trace1", kernel_list(k1, true), "kernels_trace2", kernel_list(k2, false),
          "kernel_type_signature", types, "kernel_type_summary", type_summary(k1),
          "has_fused_kernel", common.has_fused_kernel(k1), "total_kernel_time_us_trace1", total1,
          "total_kernel_time_us_trace2", total2, "input_dims", input_dims_of(trace, ev.uid))
        by_base[base] = c
        order[#order + 1] = c
        instances[c] = { instance_uids(rows, t1, f1, l1) }
      end
    end
  end
  local kept = {}
  for _, c in ipairs(order) do
    if c.total_kernel_time_us_trace1 >= c.total_kernel_time_us_trace2 then
      kept[#kept + 1] = c
      overlap.register(c, { trace = trace, instances = instances[c] })
    end
  end
  return common.stable_sort_desc(dedup.dedup_by_kernel_set(kept, "kernels_trace1"),
    function(c) return c.total_kernel_time_us_trace1 end)
end

--- candidates_comparative(trace1, diff_stats) -> the comparative
--- fusion_candidates.json array (§3.6, Case A) from trace 1's tree and the
--- TraceDiff diff_stats Table; [] (and the error text) on any error.
function M.candidates_comparative(trace, diff_stats)
  return common.candidates_or_empty(extract_comparative, trace, diff_stats)
end

return M

-- tracelens.fusion.comparative — the comparative extraction of fusion
-- candidates (analysis-layer spec §3.6, Case A): trace-1 modules whose GPU
-- kernels map (through the TraceDiff diff_stats table) to fewer kernels in
-- trace 2, past gates G1-G4 and the delta-kernel test; merged per base
-- name, deduplicated by kernel set and sorted by trace-1 time.
local json = require "tracelens.json"
local common = require "tracelens.fusion.common"
local dedup = require "tracelens.fusion.dedup"

local has_any, kernel_type = common.has_any, common.kernel_type
local parent_chain, input_dims_of = common.parent_chain, common.input_dims_of
local EXCLUDED = common.EXCLUDED

local M = {}

local LAYOUT_TRANSFORM = { "batched_transpose", "nchw2nhwc", "nhwc2nchw", "transpose_nchw", "transpose_cnhw" }
local CASE_A_MAX_DELTA, CASE_A_MAX_N1 = 15, 30

local function number_cell(v)
  if type(v) == "number" and v == v then return v end
  if type(v) == "string" then return tonumber(v) end
  return nil
end

-- The diff_stats rows, read once as whole columns: trace-1 rows by GPU UID
-- and trace-2 rows by LCA id (in file order). Kernel records are built only
-- for the candidates that pass the gates.
local function diff_lookups(diff_stats)
  local d = { uid_row = {}, t2_rows = {}, any = false }
  d.names, d.lcas, d.times = diff_stats:column("name"), diff_stats:column("lowest_common_ancestor_id"),
    diff_stats:column("kernel_time")
  local sources, uids = diff_stats:column("source"), diff_stats:column("gpu_op_uid")
  for i = 1, #diff_stats do
    local lca = number_cell(d.lcas[i])
    if lca then
      if sources[i] == "trace1" then
        local uid = number_cell(uids[i])
        if uid then
          d.uid_row[math.tointeger(uid) or uid] = i
          d.any = true
        end
      elseif sources[i] == "trace2" then
        local lca_f = lca + 0.0
        local list = d.t2_rows[lca_f] or {}
        list[#list + 1] = i
        d.t2_rows[lca_f] = list
      end
    end
  end
  return d
end

-- The kernel record of diff_stats row i (the lca id is a float, as the
-- reference read it from a CSV: 18.0 [KEEP]).
local function row_kernel(d, i, uid)
  local name = d.names[i]
  local k = { name = name, type = kernel_type(name), dur_us = (number_cell(d.times[i]) or 0) + 0.0 }
  if uid then k.lca_id, k.gpu_op_uid = number_cell(d.lcas[i]) + 0.0, uid end
  return k
end

local function all_match(list, pats)
  for _, k in ipairs(list) do
    if not has_any(tostring(k.name):lower(), pats) then return false end
  end
  return true
end

-- Gates G1-G4 and the delta-kernel test of Case A.
local function case_a(t1, n2)
  local n1 = #t1
  if not (n1 > n2 and n1 - n2 <= CASE_A_MAX_DELTA and n1 <= CASE_A_MAX_N1 and n2 >= 1) then return false end
  local by_dur = {}
  for i, k in ipairs(t1) do by_dur[i] = { i = i, k = k } end
  table.sort(by_dur, function(a, b)
    if a.k.dur_us ~= b.k.dur_us then return a.k.dur_us < b.k.dur_us end
    return a.i < b.i
  end)
  local delta = {}
  for i = 1, n1 - n2 do delta[i] = by_dur[i].k end
  return not all_match(delta, EXCLUDED) and not all_match(delta, LAYOUT_TRANSFORM)
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
  local d = diff_lookups(diff_stats)
  if not d.any then return json.arr() end
  local by_base, order = {}, {}
  -- only nodes with 2..30 mapped GPU events can pass gates G3/G4 (C walk)
  for _, node in ipairs(trace:mapped_gpu_lists(d.uid_row, CASE_A_MAX_N1)) do
    -- the counts first: most nodes match one to one (n1 == n2) and stop here
    local ids, sorted, n1, n2 = {}, {}, #node.gpus, 0
    for _, g in ipairs(node.gpus) do
      local lca = number_cell(d.lcas[d.uid_row[g]]) + 0.0
      if not ids[lca] then
        ids[lca] = true
        sorted[#sorted + 1] = lca
        n2 = n2 + #(d.t2_rows[lca] or {})
      end
    end
    local ev = n1 > n2 and trace:node(node.uid)
    local base = ev and common.strip_module_index(ev.name) or ""
    if base ~= "" then
      local t1 = {}
      for i, g in ipairs(node.gpus) do t1[i] = row_kernel(d, d.uid_row[g], g) end
      if case_a(t1, n2) then
        local t2 = {}
        table.sort(sorted) -- [DROP Q14] ascending lca_id, not CPython's set order
        for _, id in ipairs(sorted) do
          for _, i in ipairs(d.t2_rows[id] or {}) do t2[#t2 + 1] = row_kernel(d, i) end
        end
        local total1, total2 = 0.0, 0.0
        for _, k in ipairs(t1) do total1 = total1 + k.dur_us end
        for _, k in ipairs(t2) do total2 = total2 + k.dur_us end
        local c = by_base[base]
        if c then
          c.instance_count = c.instance_count + 1
          c.total_kernel_time_us_trace1 = c.total_kernel_time_us_trace1 + total1
          c.total_kernel_time_us_trace2 = c.total_kernel_time_us_trace2 + total2
        else
          local types = json.arr()
          for i, k in ipairs(t1) do types[i] = k.type end
          c = json.obj("module_name", ev.name, "base_name", base, "parent_chain", parent_chain(trace, ev.uid),
            "instance_count", 1, "kernel_count_trace1", #t1, "kernel_count_trace2", #t2, "delta", #t1 - #t2,
            "kernels_trace1", kernel_list(t1, true), "kernels_trace2", kernel_list(t2, false),
            "kernel_type_signature", types, "kernel_type_summary", type_summary(t1),
            "has_fused_kernel", common.has_fused_kernel(t1), "total_kernel_time_us_trace1", total1,
            "total_kernel_time_us_trace2", total2, "input_dims", input_dims_of(trace, ev.uid))
          by_base[base] = c
          order[#order + 1] = c
        end
      end
    end
  end
  local kept = {}
  for _, c in ipairs(order) do
    if c.total_kernel_time_us_trace1 >= c.total_kernel_time_us_trace2 then kept[#kept + 1] = c end
  end
  return common.stable_sort_desc(dedup.dedup_by_kernel_set(kept, "kernels_trace1"),
    function(c) return c.total_kernel_time_us_trace1 end)
end

--- candidates_comparative(trace1, diff_stats) -> the comparative
--- fusion_candidates.json array (§3.6, Case A) from trace 1's tree and the
--- TraceDiff diff_stats Table; [] (and the error text) on any error.
function M.candidates_comparative(trace, diff_stats)
  local ok, res = pcall(extract_comparative, trace, diff_stats)
  if ok then return res end
  return json.arr(), tostring(res)
end

return M

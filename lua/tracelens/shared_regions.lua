-- tracelens.shared_regions — comparative mode: the TraceDiff regions whose
-- Trace 1 side holds more than one operation and which run slower in Trace 1
-- as a whole.
--
-- An operation of trace 1 is compared with the Trace 2 GPU time of the region
-- TraceDiff aligns with it (its lowest common ancestor, `lca_total_kernel_time
-- _trace2_us`; analysis-layer.md §6.3, inference-and-comparative.md §2.3).
-- When that region also holds other trace-1 work, each operation meets the
-- region's whole Trace 2 time alone: on the MoE agent case the four AITER
-- stages of `moe_layer` (120 + 480 + 480 + 80 µs) are each compared with the
-- 800 µs fused kernel, so none is slower, while the region takes 1160 µs
-- against 800 µs. The reference's numbers stay; the report must not call such
-- a region "within target" (tracelens.report_md).
local analysis = require "tracelens.analysis"
local py = require "tracelens.py"

local M = {}

local KT_SUM = "Kernel Time (µs)_sum"
-- other trace-1 kernel time in a region below this (µs) is rounding, not work
local EPS_US = 0.5

local num = py.num

-- The region of a row compared on TraceDiff's alignment: its one LCA id as
-- text (nil for a row of several LCAs, one with no Trace 2 work, or one
-- compared with Trace 2's own calls of its signature).
local function region_key(row)
  local id = row.lca_id
  if id == nil or (type(id) == "string" and (id == "" or id:find(";", 1, true))) then return nil end
  if (num(row.lca_count_trace2) or 0) <= 0 then return nil end
  if analysis.trace2_side(row).basis ~= "lca" then return nil end
  return py.str(id)
end

--- The regions of the comparative category tables that hold more than one
--- trace-1 operation (or other trace-1 kernel time besides one) and take
--- longer in Trace 1 than in Trace 2, largest gap first. categories: a list
--- of {name, display, ops = Table or {rows=, columns=}} (prepare's
--- result.compute). Each region: {name (lca_name), t1_us, t2_us, gap_us,
--- own_us (its operations' kernel time), ops = {{name, category, us}, ...}
--- (by kernel time, largest first)}.
function M.find(categories)
  local by_key, order = {}, {}
  for _, c in ipairs(categories or {}) do
    local rows = analysis.rows_of(c.ops)
    for _, row in ipairs(rows) do
      local key = region_key(row)
      local t1, t2, own = num(row.lca_total_kernel_time_trace1_us), num(row.lca_total_kernel_time_trace2_us),
        num(row[KT_SUM])
      if key and t1 and t2 and own then
        local r = by_key[key]
        if not r then
          r = { key = key, name = row.lca_name, t1_us = t1, t2_us = t2, own_us = 0, ops = {} }
          by_key[key] = r
          order[#order + 1] = r
        end
        r.own_us = r.own_us + own
        r.ops[#r.ops + 1] = { name = row.name, category = c.display or c.name, us = own }
      end
    end
  end
  local out = {}
  for _, r in ipairs(order) do
    local shared = #r.ops >= 2 or r.t1_us - r.own_us > EPS_US
    if shared and r.t1_us > r.t2_us then
      r.gap_us = r.t1_us - r.t2_us
      table.sort(r.ops, function(a, b)
        if a.us ~= b.us then return a.us > b.us end
        return tostring(a.name) < tostring(b.name)
      end)
      out[#out + 1] = r
    end
  end
  table.sort(out, function(a, b)
    if a.gap_us ~= b.gap_us then return a.gap_us > b.gap_us end
    return a.key < b.key
  end)
  return out
end

return M

-- tracelens.fusion.own_md — the comparative report's words on fusion when
-- the comparative fusion analysis (fusion/comparative.lua: work Trace 1 runs
-- as separate kernels that Trace 2 fuses) finds nothing: that is no such
-- difference, not an absence of fusion candidates (nor of a difference the
-- other way), so the text says so and names Trace 1's own candidates, as
-- its standalone analysis reports them (fusion/choose.lua; nil when they
-- were not had).
local json = require "tracelens.json"
local md = require "tracelens.md"
local py = require "tracelens.py"
local rules = require "tracelens.fusion_rules"

local M = {}

M.NO_DIFFERENCE = "The comparative kernel fusion analysis found no work that Trace 1 runs as separate kernels and "
  .. "Trace 2 runs as fewer, fused ones (the only fusion difference it looks for)."

local function ms(x) return json.number_text(py.round((tonumber(x) or 0) + 0.0, 3)) .. " ms" end

-- "Unfused RMSNorm (`Qwen2RMSNorm`, 7.378 ms of kernel time over 49 instances)"
local function item(f)
  local n = math.tointeger(f.estimate.instance_count) or f.estimate.instance_count
  return string.format("%s (%s, %s of kernel time over %s instance%s)", md.text(f.pattern.name),
    md.code(rules.module_label(f.candidate)), ms(f.estimate.time_ms), tostring(n), n == 1 and "" or "s")
end

local function list(items)
  if #items == 1 then return items[1] end
  return table.concat(items, ", ", 1, #items - 1) .. " and " .. items[#items]
end

--- The sentence on Trace 1's own fusion candidates (own: fusion/choose.lua's kept list, or nil).
function M.own_sentence(own)
  if not own then
    return "Fusion within Trace 1 is what the standalone analysis of Trace 1 reports."
  end
  if #own == 0 then return "The standalone fusion analysis of Trace 1 proposes no candidate either." end
  local items = {}
  for i, f in ipairs(own) do items[i] = item(f) end
  return string.format("The standalone fusion analysis of Trace 1 proposes %d candidate%s%s: %s; the standalone "
    .. "analysis of Trace 1 gives %s and impact estimate%s.", #own, #own == 1 and "" or "s",
    #own == 1 and "" or ", largest impact first", list(items), #own == 1 and "its card" or "their cards",
    #own == 1 and "" or "s")
end

--- The Executive Summary's fusion sentences.
function M.summary(own) return M.NO_DIFFERENCE .. " " .. M.own_sentence(own) end

return M

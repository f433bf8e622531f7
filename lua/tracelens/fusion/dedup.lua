-- tracelens.fusion.dedup — deduplication of fusion candidates by their
-- kernel-name tuple (analysis-layer spec §3.6 step 4b): the score that
-- decides which duplicate is kept, and dedup_by_kernel_set over candidate
-- JSON objects (the comparative extraction; the standalone one dedups its
-- light records with the same score, tracelens.fusion.candidates).
local json = require "tracelens.json"

local M = {}

-- dedup score (module_name starts with "nn.Module:", len(parent_chain)):
-- is a's strictly higher than b's?
local function score_better(a_nn, a_chain, b_nn, b_chain)
  if a_nn ~= b_nn then return a_nn end
  return a_chain > b_chain
end

local function starts_nn(name) return tostring(name or ""):sub(1, 10) == "nn.Module:" end

--- dedup_by_kernel_set(cands, field) (§3.6) over candidate JSON objects: one
--- candidate per kernel-name tuple, first-appearance order; a later one
--- replaces the kept one only with a strictly higher score.
function M.dedup_by_kernel_set(cands, field)
  local order, best = {}, {}
  for _, c in ipairs(cands) do
    local ks = c[field] or {}
    if #ks > 0 then
      local key_name = ks[1].name ~= nil and "name" or "kernel_name"
      local parts = {}
      for i, k in ipairs(ks) do parts[i] = tostring(k[key_name]) end
      local key = table.concat(parts, "\0")
      local b = best[key]
      if b == nil then
        order[#order + 1] = key
        best[key] = c
      elseif score_better(starts_nn(c.module_name), #(c.parent_chain or {}), starts_nn(b.module_name),
          #(b.parent_chain or {})) then
        best[key] = c
      end
    end
  end
  local out = json.arr()
  for i, key in ipairs(order) do out[i] = best[key] end
  return out
end
M.score_better = score_better
M.starts_nn = starts_nn

return M

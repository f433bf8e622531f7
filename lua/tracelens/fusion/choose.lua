-- tracelens.fusion.choose — the fusion candidates the kernel fusion analysis
-- reports: kernel_fusion_metrics.json's impact_estimates, highest
-- impact_score first, each joined to its fusion_candidates.json entry and
-- kept or set aside by the fusion rules (tracelens.fusion_rules: Decision 1
-- reject, Decision 2 pattern). Used by the analyzer (agents/kernel_fusion.lua)
-- and by the comparative report, which names trace 1's own candidates.
local sf = require "tracelens.system_findings"
local rules = require "tracelens.fusion_rules"

local M = {}

--- The trace-1 kernels of a candidate (comparative candidates keep kernels_trace1).
function M.kernels_of(c, comparative)
  if comparative and c.kernels_trace1 then return c.kernels_trace1 end
  return c.kernels or {}
end

-- Do the candidate's kernel names equal the estimate's affected_gpu_kernels?
local function same_kernels(ks, e)
  local names = e.affected_gpu_kernels or {}
  if #ks ~= #names then return false end
  for i, k in ipairs(ks) do
    if rules.kernel_name(k) ~= names[i] then return false end
  end
  return true
end

-- The candidate of an estimate: same base_name (else module_name); among
-- several (a module and a sibling sequence can share a name, and so can two
-- kernel sequences of one module), the first not yet taken whose kernel and
-- instance counts equal the estimate's, its kernel names too when one has them.
local function candidate_of(e, candidates, taken, comparative)
  local named = {}
  for _, key in ipairs({ "base_name", "module_name" }) do
    for i, c in ipairs(candidates) do
      if c[key] == e.operation and not taken[i] then named[#named + 1] = i end
    end
    if #named > 0 then break end
  end
  local pick = named[1]
  local counted
  for _, i in ipairs(named) do
    local c = candidates[i]
    local ks = M.kernels_of(c, comparative)
    if #ks == e.kernel_count and c.instance_count == e.instance_count then
      if same_kernels(ks, e) then
        counted = i
        break
      end
      counted = counted or i
    end
  end
  pick = counted or pick
  if pick then
    taken[pick] = true
    return candidates[pick]
  end
  local kernels = {}
  for i, name in ipairs(e.affected_gpu_kernels or {}) do kernels[i] = { name = name, type = "Unknown" } end
  return { base_name = e.operation, module_name = e.operation, kernels = kernels, instance_count = e.instance_count }
end

--- choose(metrics, candidates, comparative, facts) -> kept, rejected: kept =
--- {estimate, candidate, pattern} in impact order (ties: list order),
--- rejected = {name, reason} for the candidates the rules set aside. facts:
--- the candidates' kernel facts (tracelens.fusion.kernel_facts), or nil.
function M.choose(metrics, candidates, comparative, facts)
  local estimates = {}
  for i, e in ipairs(metrics.impact_estimates or {}) do estimates[i] = { e = e, i = i } end
  table.sort(estimates, function(a, b)
    local x, y = sf.value(a.e.impact_score), sf.value(b.e.impact_score)
    if x ~= y then return x > y end
    return a.i < b.i
  end)
  local kept, rejected, taken = {}, {}, {}
  for _, item in ipairs(estimates) do
    local c = candidate_of(item.e, candidates, taken, comparative)
    local view = { base_name = c.base_name, module_name = c.module_name, parent_chain = c.parent_chain,
      kernels = M.kernels_of(c, comparative), has_fused_kernel = c.has_fused_kernel, facts = facts }
    local why = rules.reject(view)
    if why then
      rejected[#rejected + 1] = { name = rules.module_label(c), reason = why }
    else
      kept[#kept + 1] = { estimate = item.e, candidate = c, pattern = rules.pattern(view) }
    end
  end
  return kept, rejected
end

return M

-- tracelens.fusion.candidates — the standalone extraction of fusion
-- candidates (analysis-layer spec §3.6, category_data/fusion_candidates.json):
-- step 3 (module entries and sibling sequences from the C walks
-- trace:fusion_modules() and trace:fusion_siblings(), src/analysis/fusion.c),
-- step 4a attention narrowing, step 4b deduplication, the JSON objects and
-- step 4c data enrichment.
--
-- The walks can give candidates with thousands of kernels (a top-level
-- python function holds every kernel of a step) that attention narrowing
-- and deduplication then shrink or drop, so candidates stay light records
-- (positions into the walk's arrays) until the survivors are known; only
-- those become JSON objects.
local json = require "tracelens.json"
local common = require "tracelens.fusion.common"
local lookups = require "tracelens.fusion.lookup"
local dedup = require "tracelens.fusion.dedup"
local overlap = require "tracelens.fusion.overlap"

local has_any, kernel_type, kname = common.has_any, common.kernel_type, common.kname
local parent_chain, input_dims_of = common.parent_chain, common.input_dims_of
local prefix_lookup, shape_aware_lookup = lookups.prefix_lookup, lookups.shape_aware_lookup
local score_better, starts_nn = dedup.score_better, dedup.starts_nn
local NORM_KERNEL_PATTERNS = common.NORM_KERNEL_PATTERNS

local M = {}

-- per distinct kernel name: type, eligibility and the name tests of the
-- GEMM+norm rule (names repeat: compute each once)
local function name_facts(names)
  local facts = {}
  for i, name in ipairs(names) do
    local l = name:lower()
    facts[i] = {
      type = kernel_type(name),
      eligible = common.is_fusion_eligible(l),
      conv = l:find("conv", 1, true) ~= nil,
      norm = has_any(l, NORM_KERNEL_PATTERNS),
    }
  end
  return facts
end

-- "GEMM+norm only" (§3.6 step 3; [KEEP, Q23]: the types "Elementwise Add"
-- and "Copy/Cast" are never produced by classify)
local function is_gemm_norm_only(facts, idx)
  local has_gemm, n_other, all_norm = false, 0, true
  for _, i in ipairs(idx) do
    local f = facts[i]
    local t = f.type:upper()
    if t == "GEMM" or t == "GEMM (GENERIC)" or f.conv then
      has_gemm = true
    else
      n_other = n_other + 1
      if not (f.norm or f.type == "Elementwise Add" or f.type == "Copy/Cast") then all_norm = false end
    end
  end
  return has_gemm and n_other > 0 and all_norm
end

-- instances of each base over all its records (a record is a base and a
-- kernel sequence: src/analysis/fusion.c)
local function base_instances(records)
  local n = {}
  for _, m in ipairs(records) do n[m.base] = (n[m.base] or 0) + m.instances end
  return n
end

-- Step 3, module entries: unfused, >= 2 eligible kernels, not GEMM+norm only.
local function module_candidates(trace, out)
  local mods, names = trace:fusion_modules()
  local facts = name_facts(names)
  local of_base = base_instances(mods)
  for _, m in ipairs(mods) do
    if not m.has_fused and m.eligible >= 2 and not is_gemm_norm_only(facts, m.names) then
      out[#out + 1] = {
        kind = "module", uid = m.uid, module_name = trace:node(m.uid).name, base = m.base,
        instances = m.instances, total = m.total, eligible = m.eligible,
        uids = m.kernels, nidx = m.names, durs = m.durs, names = names, facts = facts,
        lo = 1, hi = #m.kernels, nodes = m.nodes, base_instances = of_base[m.base],
      }
    end
  end
end

-- Step 3, sibling sequences (no eligibility, fused or GEMM+norm check)
local function sibling_candidates(trace, out)
  local seqs, names = trace:fusion_siblings()
  local of_base = base_instances(seqs)
  local facts = {}
  for i, name in ipairs(names) do facts[i] = { type = kernel_type(name) } end
  for _, s in ipairs(seqs) do
    local uids, nidx, durs, ops = {}, {}, {}, {}
    for i, op in ipairs(s.ops) do
      uids[i], nidx[i], durs[i], ops[i] = op.kernel, op.name, op.dur, op.op
    end
    out[#out + 1] = {
      kind = "sibling", uid = s.parent, module_name = trace:node(s.parent).name, base = s.base,
      instances = s.instances, total = s.total,
      uids = uids, nidx = nidx, durs = durs, ops = ops, names = names, facts = facts,
      lo = 1, hi = #uids, inst_len = s.inst_len, inst_kernels = s.inst_kernels, base_instances = of_base[s.base],
    }
  end
end

local function name_at(c, i) return c.names[c.nidx[i]] end

-- §3.6 step 4a: narrow a candidate to its QK^T .. softmax .. PV slice. A
-- kernel is a GEMM when its lookup entry has any op_category "GEMM".
local function narrow_attention(c, lookup, gemm_memo)
  local function is_gemm(i)
    local name = name_at(c, i)
    local yes = gemm_memo[name]
    if yes == nil then
      yes = false
      local shapes = prefix_lookup(lookup, name)
      if shapes then
        for _, key in ipairs(shapes.keys) do
          if shapes.map[key].op_category == "GEMM" then
            yes = true
            break
          end
        end
      end
      gemm_memo[name] = yes
    end
    return yes
  end
  for s = c.lo, c.hi do
    if name_at(c, s):lower():find("softmax", 1, true) then
      local qk, pv
      for j = s - 1, c.lo, -1 do
        if is_gemm(j) then
          qk = j
          break
        end
      end
      if qk then
        for j = s + 1, c.hi do
          if is_gemm(j) then
            pv = j
            break
          end
        end
      end
      if qk and pv then
        local total = 0
        for j = qk, pv do total = total + c.durs[j] end
        c.lo, c.hi, c.narrowed = qk, pv, true
        c.total = total * c.instances
        return
      end
    end
  end
end

-- The claim of a light candidate (tracelens.fusion.overlap.register): every
-- instance's kernels, the slice lo..hi of each.
local function claim_of(trace, c)
  return { trace = trace, first = c.uids, lo = c.lo, hi = c.hi, nodes = c.nodes, inst_len = c.inst_len,
    inst_kernels = c.inst_kernels }
end

-- [FIX] Two records of one base (two kernel sequences) narrowed to the same
-- kernels are one candidate: b takes c's instances, time and GPU events.
local function merge_into(trace, b, c)
  b.parts = b.parts or { claim_of(trace, b) }
  b.parts[#b.parts + 1] = claim_of(trace, c)
  b.instances = b.instances + c.instances
  b.total = b.total + c.total
end

-- §3.6 step 4b over light candidates (kernel names of lo..hi), as
-- tracelens.fusion.dedup's dedup_by_kernel_set
local function dedup_light(trace, cands)
  local gid, ngid = {}, 0
  local order, best = {}, {}
  for _, c in ipairs(cands) do
    if c.hi >= c.lo then
      local parts = {}
      for i = c.lo, c.hi do
        local name = name_at(c, i)
        local id = gid[name]
        if not id then
          ngid = ngid + 1
          id = ngid
          gid[name] = id
        end
        parts[#parts + 1] = id
      end
      local key = table.concat(parts, ",")
      c.chain = c.kind == "module" and parent_chain(trace, c.uid) or json.arr()
      local b = best[key]
      if b == nil then
        order[#order + 1] = key
        best[key] = c
      elseif b.kind == c.kind and b.base == c.base then
        merge_into(trace, b, c)
      elseif score_better(starts_nn(c.module_name), #c.chain, starts_nn(b.module_name), #b.chain) then
        best[key] = c
      end
    end
  end
  local out = {}
  for i, key in ipairs(order) do out[i] = best[key] end
  return out
end

-- base_instance_count, only when the base has instances of another kernel
-- sequence than the candidate's (nil leaves the key out: the reference's
-- objects never have it)
local function other_sequences(c)
  if c.base_instances and c.base_instances > c.instances then return c.base_instances end
  return nil
end

-- The JSON object of a light candidate (key orders of §3.6 step 3).
local function candidate_object(trace, c)
  local kernels, sig = json.arr(), json.arr()
  for i = c.lo, c.hi do
    local ni = c.nidx[i]
    local f = c.facts[ni]
    if c.kind == "module" then
      kernels[#kernels + 1] = json.obj("name", c.names[ni], "type", f.type, "dur_us", c.durs[i],
        "eligible", f.eligible, "gpu_op_uid", c.uids[i])
    else
      kernels[#kernels + 1] = json.obj("op", c.ops[i], "kernel_type", f.type, "kernel_name", c.names[ni],
        "dur_us", c.durs[i], "gpu_op_uid", c.uids[i])
    end
    sig[#sig + 1] = f.type
  end
  if c.kind == "sibling" then
    return json.obj(
      "module_name", c.module_name,
      "base_name", c.base,
      "parent_chain", json.arr(),
      "instance_count", c.instances,
      "kernel_count", #kernels,
      "eligible_kernel_count", #kernels,
      "kernels", kernels,
      "kernel_type_signature", sig,
      "kernel_type_summary", json.obj(),
      "has_fused_kernel", false,
      "total_kernel_time_us", c.total,
      "source", "sibling_sequence",
      "input_dims", input_dims_of(trace, c.uid),
      "base_instance_count", other_sequences(c))
  end
  -- narrowing replaces the counts and the signature, not the type summary
  local summary = json.obj()
  for _, ni in ipairs(c.nidx) do
    local t = c.facts[ni].type
    summary[t] = (summary[t] or 0) + 1
  end
  if not c.narrowed then
    sig = json.arr()
    for i, ni in ipairs(c.nidx) do sig[i] = c.facts[ni].type end
  end
  return json.obj(
    "module_name", c.module_name,
    "base_name", c.base,
    "parent_chain", c.chain or parent_chain(trace, c.uid),
    "instance_count", c.instances,
    "kernel_count", #kernels,
    "eligible_kernel_count", c.narrowed and #kernels or c.eligible,
    "kernels", kernels,
    "kernel_type_signature", sig,
    "kernel_type_summary", summary,
    "has_fused_kernel", false,
    "total_kernel_time_us", c.total,
    "input_dims", input_dims_of(trace, c.uid),
    "base_instance_count", other_sequences(c))
end

-- Step 3's walks (module entries, sibling sequences): they read only the
-- trace. {ok =, list = the light candidates} or {ok = false, err =}.
local function walks(trace)
  local light = {}
  local ok, err = pcall(function()
    module_candidates(trace, light)
    sibling_candidates(trace, light)
  end)
  return { ok = ok, list = light, err = err }
end

local function extract_standalone(trace, unified, pre)
  pre = pre or walks(trace)
  if not pre.ok then error(pre.err, 0) end
  local light = pre.list
  local lookup
  if unified ~= nil then
    lookup = lookups.data_lookup(unified)
    local gemm_memo = {}
    for _, c in ipairs(light) do narrow_attention(c, lookup, gemm_memo) end
    light = dedup_light(trace, light)
  end
  local cands = {}
  for i, c in ipairs(light) do
    local claim = c.parts and { parts = c.parts } or claim_of(trace, c)
    -- [FIX] a narrowed candidate's time is its slice's kernel time in every
    -- instance, not the first instance's times the instance count
    if c.narrowed or c.parts then
      local t = overlap.claim_time_us(claim)
      -- integer durations keep an integer total, as the reference's
      c.total = math.type(c.total) == "integer" and math.tointeger(t) or t
    end
    cands[i] = candidate_object(trace, c)
    -- every instance's kernels (the slice lo..hi of each), for overlap checks
    overlap.register(cands[i], claim)
  end
  if lookup then -- step 4c: data enrichment
    for _, c in ipairs(cands) do
      for _, k in ipairs(c.kernels) do
        if k.data_in_mb == nil then
          local e = shape_aware_lookup(lookup, kname(k), c.input_dims)
          if e.data_in_mb ~= nil then
            k.data_in_mb = e.data_in_mb
            k.data_out_mb = e.data_out_mb
          end
        end
      end
    end
  end
  return common.stable_sort_desc(cands, function(c) return c.total_kernel_time_us end)
end

--- candidates(trace, unified [, walks]) -> the array of category_data/fusion_candidates.json
--- (standalone extraction, §3.6). unified: the unified_perf_summary Table, nil
--- when there is none (no post-processing then). walks: M.walks(trace) when
--- taken ahead (used once). Any error gives [] (the reference writes "[]");
--- the error text is the second result.
function M.candidates(trace, unified, pre)
  return common.candidates_or_empty(extract_standalone, trace, unified, pre)
end

--- walks(trace) -> step 3's walks over the trace alone (C: trace:fusion_modules(),
--- trace:fusion_siblings()), for candidates(trace, unified, walks) once the
--- report is built: the orchestrator runs them while it builds. An error is
--- kept and raised by candidates (which then gives []).
M.walks = walks

return M

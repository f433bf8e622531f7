-- tracelens.fusion — kernel-fusion candidates and their estimates
-- (analysis-layer spec §3.6 fusion_candidates.json, §10
-- kernel_fusion_metrics.json).
--
-- Owns the candidate rules and the JSON shaping. The walks over the trace
-- are C (src/analysis/fusion.c): trace:fusion_modules() (step 1, every tree
-- node) and trace:fusion_siblings() (step 2, the unified perf ops). Kernel
-- types come from tracelens.classify_kernels. Perf data comes from the
-- unified_perf_summary Table (a tl Table, or a plain array of row tables).
--
-- Design note (documented in docs/analysis.md): analyze() takes the arch
-- numbers in ctx (platform, peak_hbm_bw_tbs, max_achievable_tflops) instead
-- of scanning metadata/*_metadata.json as the reference does.
local tl = require "tracelens"
local json = require "tracelens.json"
local py = require "tracelens.py"
local classify = require "tracelens.classify_kernels"

local M = {}

-- §3.6 constants
local EXCLUDED = { "nccl", "rccl", "memcpy", "memset" }
local ALREADY_FUSED = { "attn_fwd", "attn_bwd", "fmha", "unified_attention", "paged_attention", "flash_attn",
  "flash_fwd", "silu_and_mul" }
local NORM_KERNEL_PATTERNS = { "batchnorm", "layernorm", "groupnorm", "instancenorm", "rmsnorm" }

-- §10 constants
M.MAX_FUSION_KERNEL_COUNT = 15
M.MIN_IMPACT_SCORE = 2.0
M.OVERLAP_EFFICIENCY = 0.85
M.MIN_SAVINGS_MS = 0.1
local MATRIX_SPECS = { matrix_fp16 = true, matrix_bf16 = true, matrix_fp32 = true, matrix_fp64 = true,
  matrix_fp8 = true, matrix_int8 = true }
local NORM_TYPES = { LayerNorm = true, BatchNorm = true, GroupNorm = true, InstanceNorm = true, Norm = true }
local NORM_NAME_PATTERNS = { "batchnorm", "layernorm", "groupnorm", "instancenorm", "miopenbatchnorm", "rmsnorm" }
local NAME_HINTS = {
  { "attention", { "attention", "sdpa", "self_attn" } },
  { "norm", { "rmsnorm", "rms_norm", "layernorm", "layer_norm", "batchnorm", "batch_norm" } },
  { "mlp", { "mlp" } },
  { "rope", { "rotary", "rope", "apply_rotary" } },
  { "siglu", { "silu", "swiglu" } },
}

local function r(x, n) return py.round(x, n) end

local function is_null(v) return v == nil or json.is_null(v) end

local function has_any(s, pats)
  for _, p in ipairs(pats) do
    if s:find(p, 1, true) then return true end
  end
  return false
end

-- Python truthiness of the values we meet (numbers, strings, lists, None)
local function truthy(v)
  if is_null(v) or v == false or v == 0 or v == "" then return false end
  if type(v) == "table" and next(v) == nil then return false end
  return true
end

local function stable_sort_desc(list, key)
  local idx = {}
  for i, v in ipairs(list) do idx[i] = { v, key(v), i } end
  table.sort(idx, function(a, b)
    if a[2] ~= b[2] then return a[2] > b[2] end
    return a[3] < b[3]
  end)
  local out = json.arr()
  for i, e in ipairs(idx) do out[i] = e[1] end
  return out
end

--- strip_module_index(name): drop "nn.Module: ", then one trailing _<digits>.
function M.strip_module_index(name)
  name = tostring(name or "")
  if name:sub(1, 11) == "nn.Module: " then name = name:sub(12) end
  return (name:gsub("_%d+$", "", 1))
end

function M.is_fusion_eligible(name)
  local l = tostring(name):lower()
  return not has_any(l, EXCLUDED) and not has_any(l, ALREADY_FUSED)
end

function M.has_fused_kernel(kernels)
  for _, k in ipairs(kernels) do
    if has_any(tostring(k.name or k.kernel_name or ""):lower(), ALREADY_FUSED) then return true end
  end
  return false
end

-- parent_chain(ev): ancestor names, innermost first (nn.Module prefix
-- dropped; other names with "/" keep the part after the last "/")
local function parent_chain(trace, uid)
  local chain = json.arr()
  local ev = trace:node(uid)
  local p = ev and ev:parent()
  while p do
    local name = p.name
    if name and name ~= "" then
      if name:sub(1, 11) == "nn.Module: " then
        name = name:sub(12)
      elseif name:find("/", 1, true) then
        name = name:match("([^/]*)$")
      end
      chain[#chain + 1] = name
    end
    p = p:parent()
  end
  return chain
end

local function input_dims_of(trace, uid)
  local ev = trace:node(uid)
  local args = ev and ev.args
  local v = args and args["Input Dims"]
  if v == nil then return json.null end
  return v
end

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

local NAME_RX = "'name':\\s*'([^']+)'"

-- per row with a kernel_details_summary: every kernel name x first shape,
-- the first row wins; value = fn(row)
local function kernel_lookup(unified, fn)
  local lookup = omap()
  for _, row in unified_rows(unified) do
    local kds = cell(row, "kernel_details_summary")
    if kds ~= nil then
      local shape = parse_first_shape(cell(row, "Input Dims")) or NONE_KEY
      local value
      for _, name in ipairs(tl.re.findall(NAME_RX, tostring(kds))) do
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

-- kernel_perf_lookup, orchestrator flavour
local function data_lookup(unified)
  return kernel_lookup(unified, function(row)
    local cat = cell(row, "op category")
    local din, dout = M.compute_data_in_out(cat, cell(row, "perf_params") or "", cell(row, "Data Moved (MB)"))
    return { op_category = cat, data_in_mb = din, data_out_mb = dout }
  end)
end

-- Candidates (§3.6) --------------------------------------------------------------
--
-- The walks can give candidates with thousands of kernels (a top-level
-- python function holds every kernel of a step) that attention narrowing
-- and deduplication then shrink or drop, so candidates stay light records
-- (positions into the walk's arrays) until the survivors are known; only
-- those become JSON objects.

local function kernel_type(name) return (classify.classify(name)) end

-- per distinct kernel name: type, eligibility and the name tests of the
-- GEMM+norm rule (names repeat: compute each once)
local function name_facts(names)
  local facts = {}
  for i, name in ipairs(names) do
    local l = name:lower()
    facts[i] = {
      type = kernel_type(name),
      eligible = M.is_fusion_eligible(l),
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

-- Step 3, module entries: unfused, >= 2 eligible kernels, not GEMM+norm only.
local function module_candidates(trace, out)
  local mods, names = trace:fusion_modules()
  local facts = name_facts(names)
  for _, m in ipairs(mods) do
    if not m.has_fused and m.eligible >= 2 and not is_gemm_norm_only(facts, m.names) then
      out[#out + 1] = {
        kind = "module", uid = m.uid, module_name = trace:node(m.uid).name, base = m.base,
        instances = m.instances, total = m.total, eligible = m.eligible,
        uids = m.kernels, nidx = m.names, durs = m.durs, names = names, facts = facts,
        lo = 1, hi = #m.kernels,
      }
    end
  end
end

-- Step 3, sibling sequences (no eligibility, fused or GEMM+norm check)
local function sibling_candidates(trace, out)
  local seqs, names = trace:fusion_siblings()
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
      lo = 1, hi = #uids,
    }
  end
end

local function kname(k) return k.name or k.kernel_name end
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

-- the same over light candidates (kernel names of lo..hi)
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
      elseif score_better(starts_nn(c.module_name), #c.chain, starts_nn(b.module_name), #b.chain) then
        best[key] = c
      end
    end
  end
  local out = {}
  for i, key in ipairs(order) do out[i] = best[key] end
  return out
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
      "input_dims", input_dims_of(trace, c.uid))
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
    "input_dims", input_dims_of(trace, c.uid))
end

local function extract_standalone(trace, unified)
  local light = {}
  module_candidates(trace, light)
  sibling_candidates(trace, light)
  local lookup
  if unified ~= nil then
    lookup = data_lookup(unified)
    local gemm_memo = {}
    for _, c in ipairs(light) do narrow_attention(c, lookup, gemm_memo) end
    light = dedup_light(trace, light)
  end
  local cands = {}
  for i, c in ipairs(light) do cands[i] = candidate_object(trace, c) end
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
  return stable_sort_desc(cands, function(c) return c.total_kernel_time_us end)
end

--- candidates(trace, unified) -> the array of category_data/fusion_candidates.json
--- (standalone extraction, §3.6). unified: the unified_perf_summary Table, nil
--- when there is none (no post-processing then). Any error gives [] (the
--- reference writes "[]"); the error text is the second result.
function M.candidates(trace, unified)
  local ok, res = pcall(extract_standalone, trace, unified)
  if ok then return res end
  return json.arr(), tostring(res)
end

-- Comparative extraction (§3.6, Case A) ----------------------------------------

local LAYOUT_TRANSFORM = { "batched_transpose", "nchw2nhwc", "nhwc2nchw", "transpose_nchw", "transpose_cnhw" }
local SKIP_CATEGORIES = { kernel = true, gpu_memcpy = true, gpu_memset = true, cuda_runtime = true,
  cuda_driver = true }
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
  local mapped = {}
  for uid in pairs(d.uid_row) do mapped[uid] = true end
  local by_base, order = {}, {}
  -- only nodes with 2..30 mapped GPU events can pass gates G3/G4 (C walk)
  for _, node in ipairs(trace:mapped_gpu_lists(mapped, CASE_A_MAX_N1)) do
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
    local base = ev and M.strip_module_index(ev.name) or ""
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
            "has_fused_kernel", M.has_fused_kernel(t1), "total_kernel_time_us_trace1", total1,
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
  return stable_sort_desc(M.dedup_by_kernel_set(kept, "kernels_trace1"),
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

-- Estimates (§10) -------------------------------------------------------------

local function is_matrix(k)
  if k.compute_spec and MATRIX_SPECS[k.compute_spec] then return true end
  local t = tostring(k.type or ""):upper()
  return t:find("GEMM", 1, true) ~= nil or t:find("CONV", 1, true) ~= nil
end
M.is_matrix = is_matrix

local function classify_confidence(c, kernels)
  local label = (tostring(c.base_name or "") .. "\0" .. tostring(c.module_name or "")):lower()
  local name_signal
  for _, fam in ipairs(NAME_HINTS) do
    if has_any(label, fam[2]) then
      name_signal = fam[1]
      break
    end
  end
  local n_matrix, n_other = 0, 0
  local any_softmax, any_rsqrt, any_neg, any_cat = false, false, false, false
  for _, k in ipairs(kernels) do
    if is_matrix(k) then n_matrix = n_matrix + 1 else n_other = n_other + 1 end
    local l = tostring(k.name or ""):lower()
    any_softmax = any_softmax or l:find("softmax", 1, true) ~= nil
    any_rsqrt = any_rsqrt or l:find("rsqrt", 1, true) ~= nil
    any_neg = any_neg or l:find("neg", 1, true) ~= nil
    any_cat = any_cat or l:find("catarray", 1, true) ~= nil or l:find("cat_", 1, true) ~= nil
  end
  local comp_signal
  if n_matrix >= 2 and any_softmax then
    comp_signal = "attention"
  elseif any_rsqrt then
    comp_signal = "norm"
  elseif n_matrix >= 2 and n_other >= 1 then
    comp_signal = "mlp"
  elseif any_neg and any_cat then
    comp_signal = "rope"
  elseif n_matrix == 0 and #kernels >= 3 then
    comp_signal = "elementwise_chain"
  end
  if name_signal and comp_signal then return "high" end
  if name_signal or comp_signal then return "medium" end
  return "low"
end
M.classify_confidence = classify_confidence

local function sum_dur(ks)
  local s = 0
  for _, k in ipairs(ks) do s = s + k.dur_us end
  return s
end

local function roofline_savings(group, arch)
  local modeled, unmodeled_us = {}, 0
  for _, k in ipairs(group) do
    if k.has_perf_data then modeled[#modeled + 1] = k else unmodeled_us = unmodeled_us + k.dur_us end
  end
  if #modeled == 0 then return 0 end
  local first, last = modeled[1], modeled[#modeled]
  local din = first.data_in_mb
  if din == nil then din = first.data_moved_mb / 2 end
  local dout = last.data_out_mb
  if dout == nil then dout = last.data_moved_mb / 2 end
  local bytes = (din + dout) * 1e6
  if bytes <= 0 then return 0 end
  local mem_us = bytes / (arch.peak_bw * 1.0) * 1e6
  local mat_gflops, vec_gflops = 0, 0
  for _, k in ipairs(modeled) do
    if truthy(k.gflops) then
      if is_matrix(k) then mat_gflops = mat_gflops + k.gflops else vec_gflops = vec_gflops + k.gflops end
    end
  end
  local mat_us = mat_gflops > 0 and mat_gflops * 1e9 / (arch.matrix_maf * 1e12) * 1e6 or 0
  local vec_us = vec_gflops > 0 and vec_gflops * 1e9 / (arch.vector_maf * 1e12) * 1e6 or 0
  local mx = math.max(mem_us, mat_us, vec_us)
  local fused = mx + (1 - M.OVERLAP_EFFICIENCY) * (mem_us + mat_us + vec_us - mx)
  return math.max(0, sum_dur(group) - fused - unmodeled_us)
end

local function estimate_from_gaps(c, gap_high, time_ms, baseline)
  local gap_low, gap_mid = 0.75 * gap_high, 0.875 * gap_high
  local high = gap_high * time_ms / baseline * 100
  return gap_low * time_ms / baseline * 100, gap_mid * time_ms / baseline * 100, high
end

local function operation_name(c)
  if truthy(c.base_name) then return c.base_name end
  if truthy(c.module_name) then return c.module_name end
  return "Unknown"
end

--- The standalone (roofline projection) estimator; nil when no estimate.
function M.estimate_standalone(c, lookup, arch, baseline)
  local kernels = c.kernels or {}
  if #kernels < 2 or c.has_fused_kernel then return nil end
  local enriched = {}
  for i, k in ipairs(kernels) do
    local name = kname(k)
    local perf = shape_aware_lookup(lookup, name, c.input_dims)
    local dm, gf = perf["Data Moved (MB)"], perf.GFLOPS
    enriched[i] = {
      name = name,
      type = k.type or k.kernel_type or "Unknown",
      dur_us = k.dur_us,
      data_moved_mb = dm ~= nil and dm + 0.0 or nil,
      data_in_mb = k.data_in_mb,
      data_out_mb = k.data_out_mb,
      gflops = gf ~= nil and gf + 0.0 or nil,
      compute_spec = perf["Compute Spec"],
      has_perf_data = dm ~= nil,
    }
  end
  local n, n_modeled, n_matrix = #enriched, 0, 0
  for _, k in ipairs(enriched) do
    if k.has_perf_data then n_modeled = n_modeled + 1 end
    if is_matrix(k) then n_matrix = n_matrix + 1 end
    if k.name:sub(1, 7) == "triton_" then return nil end
  end
  if n_modeled == 0 or n_matrix == n then return nil end
  if n_matrix > 0 then
    local all_norm = true
    for _, k in ipairs(enriched) do
      if not is_matrix(k) and not (NORM_TYPES[k.type] or has_any(k.name:lower(), NORM_NAME_PATTERNS)) then
        all_norm = false
        break
      end
    end
    if all_norm then return nil end
  end
  local min_frac = n < 5 and 0.5 or 0.75
  if n_modeled / n < min_frac then return nil end
  local current = sum_dur(enriched)
  if current <= 0 then return nil end

  -- subgroups: a matrix kernel starts a new one
  local groups, cur = {}, {}
  for _, k in ipairs(enriched) do
    if is_matrix(k) and #cur > 0 then
      groups[#groups + 1] = cur
      cur = {}
    end
    cur[#cur + 1] = k
  end
  if #cur > 0 then groups[#groups + 1] = cur end
  local savings, epilogue = 0, false
  for _, g in ipairs(groups) do
    local nm, other = 0, 0
    for _, k in ipairs(g) do
      if is_matrix(k) then nm = nm + 1 else other = other + k.dur_us end
    end
    if nm > 0 and nm < #g then
      epilogue = true
      savings = savings + other
    elseif nm == 0 then
      savings = savings + roofline_savings(g, arch)
    end
  end

  local gap_high = savings / current
  local inst = c.instance_count or 1
  if savings * inst / 1000 < M.MIN_SAVINGS_MS then return nil end
  local time_ms = current * inst / 1000
  local low, mid, high = estimate_from_gaps(c, gap_high, time_ms, baseline)
  if high < M.MIN_IMPACT_SCORE then return nil end
  local affected = json.arr()
  for i, k in ipairs(enriched) do affected[i] = k.name end
  local e = json.obj(
    "operation", operation_name(c),
    "category", "kernel_fusion",
    "type", "kernel_fusion",
    "impact_score", r(mid, 2),
    "impact_score_low", r(low, 2),
    "impact_score_high", r(high, 2),
    "estimation", n_modeled == n and "full" or "partial",
    "bound_type", epilogue and "compute" or "memory",
    "time_ms", r(time_ms, 3),
    "instance_count", c.instance_count,
    "kernel_count", n,
    "modeled_kernel_count", n_modeled,
    "confidence", classify_confidence(c, enriched),
    "affected_gpu_kernels", affected,
    "fusion_type", n_matrix > 0 and "matrix_compute" or "memory_bound")
  if n_modeled < n then
    e.warning = string.format("%d of %d kernels lack perf models; savings estimate uses trace time for unmodeled kernels",
      n - n_modeled, n)
  end
  return e
end

--- The comparative (measured gap) estimator; nil when no estimate.
function M.estimate_comparative(c, baseline)
  local t1 = c.kernels_trace1
  if not t1 or #t1 == 0 then return nil end
  local tot1, tot2 = c.total_kernel_time_us_trace1 or 0, c.total_kernel_time_us_trace2 or 0
  local gap = tot1 - tot2
  if gap <= 0 then return nil end
  local high_ms = gap / 1000
  if high_ms < M.MIN_SAVINGS_MS then return nil end
  local low_ms, mid_ms = 0.75 * high_ms, 0.875 * high_ms
  local high = high_ms / baseline * 100
  if high < M.MIN_IMPACT_SCORE then return nil end
  local kernels, affected, has_matrix = {}, json.arr(), false
  for i, k in ipairs(t1) do
    kernels[i] = { name = k.name, type = k.type }
    affected[i] = k.name
    if is_matrix({ type = k.type }) then has_matrix = true end
  end
  return json.obj(
    "operation", operation_name(c),
    "category", "kernel_fusion",
    "type", "kernel_fusion",
    "impact_score", r(mid_ms / baseline * 100, 2),
    "impact_score_low", r(low_ms / baseline * 100, 2),
    "impact_score_high", r(high, 2),
    "estimation", "measured",
    "bound_type", has_matrix and "compute" or "memory",
    "time_ms", r(tot1 / 1000, 3),
    "instance_count", c.instance_count,
    "kernel_count", #t1,
    "modeled_kernel_count", #t1,
    "delta_kernel_count", c.delta,
    "confidence", classify_confidence(c, kernels),
    "affected_gpu_kernels", affected,
    "fusion_type", has_matrix and "matrix_compute" or "memory_bound")
end

-- §10 step 3
local function filter_and_dedup(cands, baseline, comparative)
  local order, kept = {}, {}
  for _, c in ipairs(cands) do
    local kc = comparative and c.kernel_count_trace1 or c.kernel_count or 0
    local t = comparative and c.total_kernel_time_us_trace1 or c.total_kernel_time_us or 0
    if kc <= M.MAX_FUSION_KERNEL_COUNT and not (baseline > 0 and t < baseline * 10 * M.MIN_IMPACT_SCORE) then
      local sig = table.concat({ py.str(c.instance_count), py.str(kc), py.str(r(t, 1)) }, "\0")
      local prev = kept[sig]
      if prev == nil then
        order[#order + 1] = sig
        kept[sig] = c
      elseif #tostring(c.module_name or "") < #tostring(prev.module_name or "") then
        kept[sig] = c
      end
    end
  end
  local out = {}
  for i, sig in ipairs(order) do out[i] = kept[sig] end
  return out
end

local function error_metrics(msg)
  return json.obj("category", "kernel_fusion", "status", "ERROR", "error", msg)
end

local function perf_lookup(unified)
  return kernel_lookup(unified, function(row)
    return {
      ["Data Moved (MB)"] = cell(row, "Data Moved (MB)"),
      GFLOPS = cell(row, "GFLOPS"),
      ["FLOPS/Byte"] = cell(row, "FLOPS/Byte"),
      ["Compute Spec"] = cell(row, "Compute Spec"),
    }
  end)
end

local function warn(msg)
  if io and io.stderr then io.stderr:write(msg, "\n") end
end

local function analyze(cands, ctx)
  if cands == nil then return error_metrics("fusion_candidates.json not found - run orchestrator_prepare.py first") end
  if ctx.unified == nil then return error_metrics("unified_perf_summary.csv not found") end
  local baseline = ctx.baseline_ms or 0
  local comparative = ctx.scope == "comparative"
  local filtered = filter_and_dedup(cands, baseline, comparative)
  if #filtered == 0 then
    return json.obj("category", "kernel_fusion", "status", "NO_DATA", "candidate_count", 0,
      "impact_estimates", json.arr())
  end
  local estimates = {}
  if baseline <= 0 then
    warn("kernel_fusion: no E2E baseline (gpu_utilization.total_time_ms); no impact estimates")
  else
    local maf = ctx.max_achievable_tflops or {}
    local arch = {
      vector_maf = maf.vector_bf16 or maf.matrix_bf16 or 1,
      matrix_maf = maf.matrix_bf16 or 1,
      peak_bw = (ctx.peak_hbm_bw_tbs or 0) * 1e12,
    }
    local lookup = perf_lookup(ctx.unified)
    for _, c in ipairs(filtered) do
      local e
      if comparative then e = M.estimate_comparative(c, baseline)
      else e = M.estimate_standalone(c, lookup, arch, baseline) end
      if e then estimates[#estimates + 1] = e end
    end
  end
  estimates = stable_sort_desc(estimates, function(e) return e.impact_score end)

  local total_t, total_impact = 0, 0
  for _, c in ipairs(filtered) do
    total_t = total_t + ((comparative and c.total_kernel_time_us_trace1 or c.total_kernel_time_us) or 0)
  end
  local warnings, map = json.arr(), json.obj()
  for _, e in ipairs(estimates) do
    total_impact = total_impact + e.impact_score
    if e.warning then warnings[#warnings + 1] = e.warning end
    if e.confidence == "high" then
      for _, k in ipairs(e.affected_gpu_kernels) do
        if truthy(k) then map[k] = e.operation end
      end
    end
  end
  local out = json.obj(
    "category", "kernel_fusion",
    "status", "OK",
    "total_time_ms", r(total_t / 1000, 3),
    "candidate_count", #filtered,
    "estimated_count", #estimates,
    "total_impact_score", r(total_impact, 2),
    "platform", ctx.platform,
    "peak_hbm_bw_tbs", ctx.peak_hbm_bw_tbs,
    "impact_estimates", estimates)
  if #warnings > 0 then out.warnings = warnings end
  out.high_confidence_kernel_map = map
  return out
end

--- analyze(candidates, ctx) -> the object of kernel_fusion_metrics.json (§10).
--- candidates: the fusion_candidates array (nil: the file is missing -> ERROR);
--- ctx = {baseline_ms = gpu_utilization.total_time_ms, scope = "standalone" |
--- "comparative", platform = "MI300X", peak_hbm_bw_tbs = 5.3,
--- max_achievable_tflops = {matrix_bf16 = ..., vector_bf16 = ..., ...},
--- unified = the unified_perf_summary Table (nil -> ERROR)}.
function M.analyze(cands, ctx)
  ctx = ctx or {}
  local ok, res = pcall(analyze, cands, ctx)
  if ok then return res end
  return error_metrics(tostring(res))
end

return M

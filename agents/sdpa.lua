-- Attention analyzer (categories sdpa_fwd, sdpa_bwd, inferenceattention):
-- agents-and-report.md §3.6, rules in docs/analyzers.md.
--
-- The implementation decides the Action: an unfused path migrates to Flash
-- Attention; Flash and other fused kernels get tile/occupancy tuning
-- (compute-bound) or memory-access tuning (memory-bound); paged attention
-- tunes its dominant kernel and adds the serving knob its workload points at
-- (chunked prefill, GQA head grouping, larger decode batches, KV block size).
-- The expected efficiency depends on the sequence length; in-band values are
-- not called a bottleneck.
local json = require "tracelens.json"
local F = require "tracelens.findings"
local say = require "tracelens.prose"

local ctx = ...

-- Expected % of roofline of fused attention by query length N (upper bound of N, low, high).
local EXPECTED = { { 511, 5, 15 }, { 1535, 20, 40 }, { 4096, 40, 60 }, { math.huge, 50, 70 } }
local SHORT_SEQ, LONG_SEQ = 1024, 4096
local KV_WRITE_SHARE = 10 -- % of the op's kernel time in reshape_and_cache that makes the block size worth tuning

local NOUN = { flash = "Flash Attention", paged = "paged attention", fused = "fused attention",
  unfused = "unfused attention" }
local WHAT = {
  flash = "Flash Attention, a fused kernel that keeps the attention scores on chip",
  paged = "paged attention, which reads a KV cache stored in fixed-size blocks",
  fused = "a fused attention kernel other than Flash Attention",
  unfused = "an unfused path of separate matrix-multiply and softmax kernels",
}
local COMPONENT = { reshape_cache = "the KV-cache write", paged_attention = "the paged-attention kernel",
  fwd_kernel = "the prefill forward kernel", other = "other kernels" }

-- Flash Attention by the op's name (the classification) or by its kernels'
-- names: cuDNN's fused attention runs ..._sdpa_sm90_flash_fprop_... and
-- ..._flash_bprop_... kernels under aten::_scaled_dot_product_cudnn_attention.
local function implementation(op)
  local c = op.classification or {}
  if c.is_paged_attention or c.attention_type == "paged" then return "paged" end
  if c.is_flash_attention or c.attention_type == "flash" then return "flash" end
  local kernel = tostring(op.kernel_name or ""):lower()
  if kernel:find("flash", 1, true) then return "flash" end
  if op.name:lower():find("math") or (kernel:find("softmax") and (kernel:find("gemm") or kernel:find("cijk"))) then
    return "unfused"
  end
  return "fused"
end

-- Query/key lengths, heads and head size: the workload profile, else the (B, H, N, d) query shape.
local function geometry(op)
  local g = {}
  local wp = (op.classification or {}).workload_profile
  if type(wp) == "table" then g.n_q, g.n_kv, g.h_q, g.h_kv, g.gqa = wp.n_q, wp.n_kv, wp.h_q, wp.h_kv, wp.gqa_ratio end
  local dims = say.input_dims(op)
  local q, k = dims and dims[1], dims and dims[2]
  if type(q) == "table" and #q == 4 then
    g.h_q, g.n_q, g.d = F.present(g.h_q) and g.h_q or q[2], F.present(g.n_q) and g.n_q or q[3], q[4]
    if type(k) == "table" and #k == 4 then
      g.h_kv, g.n_kv = F.present(g.h_kv) and g.h_kv or k[2], F.present(g.n_kv) and g.n_kv or k[3]
    end
  end
  for key, val in pairs(g) do
    if not F.present(val) then g[key] = nil end
  end
  return g
end

local function expected_band(n)
  if not n then return nil end
  for _, b in ipairs(EXPECTED) do
    if n <= b[1] then return b[2], b[3] end
  end
end

local function breakdown(op)
  local kb = (op.classification or {}).kernel_breakdown
  if type(kb) ~= "table" or type(kb.kernels) ~= "table" then return nil end
  local top, share = nil, {}
  for _, k in ipairs(kb.kernels) do
    if F.present(k.percent) then
      share[k.kernel_type] = (share[k.kernel_type] or 0) + k.percent
      if not top or k.percent > top.percent then top = k end
    end
  end
  return top and { top = top, share = share } or nil
end

local function workload(op)
  local wp = (op.classification or {}).workload_profile
  return type(wp) == "table" and wp.workload_type or nil
end

-- Standalone fused attention: the expected band at its length and its efficiency.
local function band_of(v)
  local impl, eff = implementation(v.lead), (v.lead.efficiency or {}).efficiency_percent
  if v.heuristic or v.comparative or impl == "unfused" or impl == "paged" or not F.present(eff) then return nil end
  local lo, hi = expected_band(geometry(v.lead).n_q)
  if lo then return lo, hi, eff end
end

-- Remedies specific to attention --------------------------------------------

local function migrate_flash(v)
  return { action = "Replace the unfused attention path of " .. say.code(v.lead.name)
      .. " with a fused Flash Attention kernel.",
    mechanism = "Flash Attention computes the softmax of the query-key scores tile by tile on chip, so the score "
      .. "matrix is never written to memory and read back. That removes the dominant memory traffic of unfused "
      .. "attention." }
end

-- Flash Attention runs already: its kernel is a library's, not the user's to
-- tune; what the user controls is which fused kernel runs.
local function already_flash()
  return { action = "Flash Attention is already in use, and its kernel is a library's: time the other fused "
      .. "attention backends for this shape (`torch.nn.attention.sdpa_kernel` with each other `SDPBackend` this "
      .. "build offers, or a FlashAttention build made for this GPU) and keep the fastest.",
    mechanism = "A migration to Flash Attention does not apply, because the workload already runs it. Fused "
      .. "attention kernels differ in how well they fill a given GPU at a given sequence length and head size, so "
      .. "another backend can run the same attention in less time." }
end

local function chunked_prefill()
  return { action = "Enable chunked prefill so long prompts are split into bounded chunks that share batches with "
      .. "decode steps.",
    mechanism = "Chunks of a bounded size keep the prefill kernel in its efficient range and interleave with decode "
      .. "work, so the device stays fuller." }
end

local function gqa_grouping(g)
  return { action = "Check that the kernel processes the " .. g.gqa .. " query heads that share each key/value head "
      .. "together.",
    mechanism = "With grouped-query attention several query heads read the same keys and values. A kernel that "
      .. "handles them together loads each key/value block once instead of once per query head." }
end

local function decode_batch()
  return { action = "Raise the decode batch size, or add speculative decoding, so each decode step processes more "
      .. "tokens.",
    mechanism = "A decode step reads the whole KV cache for few query tokens. More tokens per step reuse each cache "
      .. "read, which raises the arithmetic intensity of the step." }
end

local function kv_block_size(share)
  return { action = "Tune the KV-cache block size (16, 32 or 64 tokens) to cut the cost of the cache writes.",
    mechanism = "The KV-cache write takes " .. F.round(share, 2) .. "% of the op's kernel time. The block size sets "
      .. "how many writes and index lookups each token costs." }
end

-- Rules -----------------------------------------------------------------------

local rules = { missing = "No SDPA operations found in trace" }

function rules.noun(v) return NOUN[implementation(v.lead)] end

function rules.qualifier(v)
  if implementation(v.lead) == "paged" then return nil end
  local n = geometry(v.lead).n_q
  if n and n > LONG_SEQ then return "long-sequence" end
  if n and n < SHORT_SEQ then return "short-sequence" end
end

-- At or above its expected band: the Insight does not say "only".
function rules.meets_expectation(v)
  local lo, _, eff = band_of(v)
  return lo ~= nil and eff >= lo
end

-- With an expected band, the title says where the op sits against it.
function rules.title(v)
  local lo, hi, eff = band_of(v)
  if not lo then return nil end
  if eff < lo then return say.title_subject(v) .. " below the " .. lo .. "–" .. hi .. "% expected at its length" end
  return say.title_subject(v) .. " within the efficiency expected at its length"
end

function rules.describe(op)
  local g, parts = geometry(op), {}
  if g.n_q then parts[#parts + 1] = "N=" .. g.n_q end
  if g.h_q then parts[#parts + 1] = g.h_q .. " heads" end
  if g.d then parts[#parts + 1] = "head size " .. g.d end
  return #parts > 0 and table.concat(parts, ", ") or nil
end

function rules.identify(v)
  local impl, g, out = implementation(v.lead), geometry(v.lead), {}
  out[1] = "The implementation is " .. WHAT[impl] .. "."
  if g.n_q then
    local kv = (g.n_kv and g.n_kv ~= g.n_q) and (" against " .. g.n_kv .. " keys") or ""
    out[#out + 1] = "The query length is " .. g.n_q .. kv .. (g.h_q and (" over " .. g.h_q .. " heads") or "")
      .. (g.gqa and (", with " .. g.gqa .. " query heads per key/value head") or "") .. "."
  end
  if not v.comparative and v.bound == "memory" and (impl == "flash" or impl == "fused") and g.n_q and g.n_q < SHORT_SEQ then
    out[#out + 1] = "At fewer than " .. SHORT_SEQ .. " tokens each head has little work, so a lower efficiency is "
      .. "expected at this size."
  end
  local b = breakdown(v.lead)
  if b then
    out[#out + 1] = "Its largest kernel component is " .. COMPONENT[b.top.kernel_type] .. " (" .. say.code(b.top.name)
      .. ", " .. F.num(b.top.percent) .. "% of the op's kernel time)."
  end
  local w = workload(v.lead)
  if w and w ~= "unknown" then out[#out + 1] = "The workload is " .. w:gsub("_", "-") .. "." end
  return out
end

-- Whether the op's FLOP count includes the backward's recompute of the
-- scores (perf_params flash_impl); nil when the op has no such parameter.
local function counts_recompute(op)
  local p = tostring(op.perf_params or "")
  if p:find("'flash_impl': True", 1, true) then return true end
  if p:find("'flash_impl': False", 1, true) then return false end
end

-- Fused backward kernels keep only the softmax statistics and recompute the
-- scores; an unfused backward reads the saved scores instead. The sentence
-- says whether the efficiency's FLOP count includes that recompute.
local function backward_note(op, impl)
  if impl == "unfused" then
    return "Backward attention runs more matrix products per token than the forward pass, so it naturally reaches "
      .. "a lower efficiency."
  end
  local counted = counts_recompute(op)
  if counted == false then
    return "Backward attention recomputes the scores and runs more matrix products per token, so it naturally "
      .. "reaches a lower efficiency than the forward pass; the FLOP count behind this efficiency leaves that "
      .. "recompute out, so the kernel does more work than the figure credits."
  end
  return "Backward attention recomputes the scores" .. (counted and " (counted in its FLOPs)" or "")
    .. " and runs more matrix products per token, so it naturally reaches a lower efficiency than the forward pass."
end

function rules.source_keys()
  return { "operations[].classification.attention_type", "operations[].classification.workload_profile",
    "operations[].Input Dims" }
end

function rules.reasoning(v)
  local out, impl, g = {}, implementation(v.lead), geometry(v.lead)
  local lo, hi, eff = band_of(v)
  if lo then
    local where = eff < lo and "below that band" or (eff > hi and "above that band" or "within that band")
    out[#out + 1] = "Fused attention at N=" .. g.n_q .. " usually reaches " .. lo .. "–" .. hi .. "% of roofline, and "
      .. say.code(v.lead.name) .. " at " .. F.num(eff) .. "% is " .. where .. "."
    if eff >= lo then
      out[#out + 1] = "Within that band the trace shows no sign of a defect in this kernel; whether another attention "
        .. "backend does better at this shape must be measured."
      local ms, pct = tonumber(v.lead.time_ms), tonumber(v.lead.percent_of_total)
      if eff < hi and ms and pct then
        -- the same work at the band's top efficiency takes eff / hi of the time
        local keep = 1 - eff / hi
        out[#out + 1] = string.format("Reaching the top of that band would save about %s ms (%s%% of end-to-end GPU "
          .. "time); the impact_score, measured against the peak, is the upper bound of what tuning can recover.",
          F.round(ms * keep, 3), F.round(pct * keep, 2))
      end
    end
  end
  if impl == "unfused" then
    out[#out + 1] = "Unfused attention writes the full score matrix to memory and reads it back for the softmax."
  end
  if ctx.category == "sdpa_bwd" or v.lead.name:lower():find("backward") then
    out[#out + 1] = backward_note(v.lead, impl)
  end
  -- within or above the expected band the kernel is not slower than expected
  if not (lo and eff >= lo) then out[#out + 1] = F.occupancy_note(v) end
  return out
end

function rules.advice(v)
  local impl = implementation(v.lead)
  if impl == "unfused" then return { migrate_flash(v) } end
  local g, b, w = geometry(v.lead), breakdown(v.lead), workload(v.lead)
  -- paged attention tunes its dominant kernel component
  local target = impl == "paged" and b and ("the " .. say.code(b.top.name) .. " kernel of " .. say.code(v.lead.name)) or nil
  local tune = v.bound == "compute" and say.remedy.tile_tuning(v, target) or say.remedy.memory_access(v, target)
  if impl == "flash" then return { already_flash() } end
  if impl ~= "paged" then return { tune } end
  if v.bound == "compute" then
    if w == "prefill_heavy" then return { tune, chunked_prefill() } end
    if g.gqa and g.gqa > 1 then return { tune, gqa_grouping(g) } end
  else
    local kv_share = b and b.share.reshape_cache or 0
    if kv_share > KV_WRITE_SHARE then return { tune, kv_block_size(kv_share) } end
    if w == "decode_heavy" then return { tune, decode_batch() } end
  end
  return { tune }
end

function rules.notes(v)
  local impl = implementation(v.lead)
  if v.heuristic then return { F.FALLBACK.root_cause } end
  if impl == "paged" then return { "Per-request KV-cache hit rate not visible from trace data." } end
  if impl ~= "unfused" and v.bound ~= "memory" then
    return { "The trace does not show the attention kernel's tile size; a kernel profiler (Nsight Compute, rocprofv3) "
      .. "shows it, and whether another tile shape would fill more compute units." }
  end
  return {}
end

-- Paged attention: three columns after the canonical ten.
function rules.columns(v)
  local paged = false
  for _, r in ipairs(v.rows) do
    if implementation(r.op) == "paged" then paged = true end
  end
  if not paged then return nil end
  return {
    { name = "Breakdown Component", cell = function(op)
      local b = breakdown(op)
      return b and (b.top.kernel_type .. " (" .. F.num(b.top.percent) .. "%)") or nil
    end },
    { name = "Workload Type", cell = function(op) return workload(op) end },
    { name = "Attention Pattern", cell = function(op)
      local wp = (op.classification or {}).workload_profile
      return type(wp) == "table" and wp.attention_pattern or nil
    end },
  }
end

function rules.summary(metrics)
  local cs = metrics.category_specific or {}
  -- by the op's or its kernels' names (flash_attention_count goes by the op's name only)
  local flash = 0
  for _, op in ipairs(metrics.operations or {}) do
    if implementation(op) == "flash" then flash = flash + 1 end
  end
  local out = { "Flash Attention signatures: " .. F.num(flash) .. ". Paged attention signatures: "
    .. F.num(cs.paged_attention_count) .. ". Signatures with a performance model: " .. F.num(cs.has_perf_model_count)
    .. "." }
  local wp = cs.workload_profile
  if type(wp) == "table" then
    out[#out + 1] = "Workload: " .. tostring(wp.profile_type):gsub("_", "-") .. " (" .. F.num(wp.total_ctx_tokens)
      .. " context and " .. F.num(wp.total_gen_tokens) .. " generated tokens)."
  end
  return out
end

local metrics = F.analyze(ctx)
return { metrics = json.encode(metrics), findings = F.render(ctx, metrics, rules) }

-- GEMM analyzer (categories gemm, groupedgemm_fwd, groupedgemm_bwd):
-- agents-and-report.md §3.5, rules in docs/analyzers.md.
--
-- Compute-bound groups: tune tiles and wave occupancy of the dominant kernel;
-- tiny GEMMs launched 1000+ times are batched upstream instead; otherwise
-- suggest the next narrower matrix type when the platform has a peak for it.
-- Memory-bound groups: tune memory access; GEMMs sharing a model layer with
-- other GEMMs are left to the kernel fusion analysis.
local json = require "tracelens.json"
local F = require "tracelens.findings"
local say = require "tracelens.prose"
local kname = require "tracelens.kernel_name"
local md = require "tracelens.md"

local ctx = ...

local TINY_CALLS, TINY_DIM = 1000, 64
local SKINNY_DIM = 128
local LONG_K = 8 -- K at least this many times the larger output side: a long reduction
local NEAR_RIDGE = 0.5 -- a memory-bound GEMM at this share of the GPU's ridge or more is tuned as a balanced one
local NARROWER = { FP32 = { "BF16", "matrix_bf16" }, FP16 = { "FP8", "matrix_fp8" }, BF16 = { "FP8", "matrix_fp8" },
  FP8 = { "FP4", "matrix_fp4" } }

-- M, N, K (and the batch) of a GEMM from its input shapes: the first two
-- consecutive matrices whose inner dimensions agree (A·B, or A·Wᵀ for linear).
local function shape(op)
  local dims = say.input_dims(op)
  if not dims then return nil end
  local first = op.name:find("addmm") and 2 or 1 -- addmm/baddbmm: the bias comes first
  for i = first, #dims - 1 do
    local a, b = dims[i], dims[i + 1]
    if type(a) == "table" and type(b) == "table" and #a >= 2 and #b >= 2 then
      local batch = #a > 2 and a[1] or nil
      if a[#a] == b[#b - 1] then return { m = a[#a - 1], n = b[#b], k = a[#a], batch = batch } end
      if a[#a] == b[#b] then return { m = a[#a - 1], n = b[#b - 1], k = a[#a], batch = batch } end
    end
  end
end

local function tiny(op)
  local s = shape(op)
  return s and (op.count or 0) >= TINY_CALLS and math.max(s.m, s.n) <= TINY_DIM
end

local function long_reduction(s) return s and s.k >= LONG_K * math.max(s.m, s.n) end

local rules = { missing = "No GEMM operations found in trace" }

function rules.noun() return ctx.category:find("^groupedgemm") and "grouped GEMM" or "GEMM" end

function rules.qualifier(v)
  local s = shape(v.lead)
  if not s or #v.rows > 1 then return nil end
  if tiny(v.lead) then return "tiny high-count" end
  if math.min(s.m, s.n) < SKINNY_DIM then return "tall-skinny" end
  if long_reduction(s) then return "long-reduction" end
end

function rules.describe(op)
  local s = shape(op)
  if not s then return nil end
  return (s.batch and ("batch " .. s.batch .. ", ") or "") .. "M=" .. s.m .. ", N=" .. s.n .. ", K=" .. s.k
end

function rules.identify(v)
  local quantized = 0
  for _, r in ipairs(v.rows) do
    if (r.op.classification or {}).is_quantized then quantized = quantized + 1 end
  end
  if quantized == 0 then
    return { #v.rows == 1 and "The operation uses regular (not quantized) weights."
      or "The operations use regular (not quantized) weights." }
  end
  return { quantized .. " of " .. #v.rows .. " " .. say.plural(#v.rows, "member") .. " use quantized weights." }
end

function rules.source_keys() return { "operations[].Input Dims", "operations[].classification.is_quantized" } end

-- What the shape of the dominant GEMM says about the gap.
function rules.reasoning(v)
  local s, who, out = shape(v.lead), say.code(v.lead.name), {}
  if s then
    if tiny(v.lead) then
      out[#out + 1] = who .. " is launched " .. F.num(v.lead.count) .. " times on a problem of at most " .. TINY_DIM
        .. " rows or columns, too small to fill the device."
    elseif math.min(s.m, s.n) < SKINNY_DIM then
      out[#out + 1] = "One output side of " .. who .. " is below " .. SKINNY_DIM .. " (M=" .. s.m .. ", N=" .. s.n
        .. "), a tall-skinny shape with few output tiles to spread over the compute units."
    end
    if long_reduction(s) then
      out[#out + 1] = "The reduction of " .. who .. " is long (K=" .. s.k .. ") for an output of only " .. s.m .. "×"
        .. s.n .. ", so each output tile carries a lot of serial work."
    end
    -- a side not a multiple of 16 leaves its edge tiles partly empty, unless the tile the kernel name states
    -- divides it (an output side by either of the tile's sides: the name does not say which is which; K by
    -- its K step): gpt_train's M=8184 is 33 tiles of 248
    local t = kname.tile(v.lead.kernel_name)
    local function fits(d, x)
      if not t then return false end
      if d == "K" then return x % t.k == 0 end
      return x % t.m == 0 or x % t.n == 0
    end
    local odd = {}
    for _, d in ipairs({ { "M", s.m }, { "N", s.n }, { "K", s.k } }) do
      if d[2] % 16 ~= 0 and not fits(d[1], d[2]) then odd[#odd + 1] = d[1] .. "=" .. d[2] end
    end
    if #odd > 0 then
      out[#out + 1] = say.list(odd) .. " of " .. who .. (#odd == 1 and " is not a multiple" or " are not multiples")
        .. " of 16, so its edge tiles run partly empty."
    end
  end
  out[#out + 1] = F.occupancy_note(v)
  return out
end

-- Vendor GEMM libraries: their kernels' memory access is not the user's to change.
local VENDOR = { cuBLAS = true, rocBLAS = true, Tensile = true, hipBLASLt = true }

-- A memory-bound GEMM from a vendor library: more rows per call, not its kernel's loads.
local function raise_intensity(v)
  return { action = "Raise the FLOPs per byte of " .. say.code(v.lead.name) .. ": more rows per call (batched "
      .. "tokens or requests) reuse each weight byte for more arithmetic; the memory access of the "
      .. md.text(v.library) .. " kernel is not the lever.",
    mechanism = "A memory-bound GEMM spends its time streaming its operands, and its FLOPs per byte grow with its "
      .. "smallest dimension, so a larger one moves the op toward the compute roofline." }
end

function rules.advice(v)
  local advice = {}
  if tiny(v.lead) then advice[#advice + 1] = say.remedy.batch_upstream(v) end
  local near = v.bound == "memory" and not v.comparative and F.ridge_ratio(v.lead)
  if near and near >= NEAR_RIDGE then
    -- at half the ridge or more the op is not far from balanced: how its tiles fill the GPU matters more
    -- (Falconsai's addmm: 258 FLOP/B against the H100's 295, 84 tiles on 132 SMs)
    advice[#advice + 1] = say.remedy.tile_tuning(v)
    return advice
  end
  if v.bound == "memory" then
    -- (an aten GEMM's CUTLASS kernels are cuBLAS's: cutlass_80_* beside cublasLt::splitKreduce in OWLv2's addmm)
    local vendor = VENDOR[v.library or ""] or (v.library == "CUTLASS" and tostring(v.lead.name):find("^aten::"))
    advice[#advice + 1] = vendor and raise_intensity(v) or say.remedy.memory_access(v)
    local layer = say.layer(v.lead)
    if #say.same_layer_ops(v, v.lead) > 0 then advice[#advice + 1] = say.remedy.fuse_in_layer(v, say.code(layer)) end
    return advice
  end
  advice[#advice + 1] = say.remedy.tile_tuning(v)
  local narrower = NARROWER[say.dtype(v) or ""]
  if not v.comparative and narrower and F.platform_has(ctx, narrower[2]) then
    advice[#advice + 1] = say.remedy.narrow_precision(v, say.dtype(v), narrower[1])
  end
  return advice
end

local TILE_NOTE = "The trace does not show the kernel's tile size; a kernel profiler (Nsight Compute, rocprofv3) "
  .. "shows it, and whether another tile shape would fill more compute units."

function rules.notes(v)
  if v.heuristic then return { F.FALLBACK.root_cause } end
  local notes = {}
  local s, t = shape(v.lead), kname.tile(v.lead.kernel_name)
  if v.bound ~= "memory" then notes[#notes + 1] = t and say.tile_note(t, s, ctx.num_cus) or TILE_NOTE end
  if long_reduction(s) and not (t and t.split) then
    notes[#notes + 1] = "The trace does not show how the long K dimension is split across thread blocks (split-K, "
      .. "stream-K); a kernel profiler (Nsight Compute, rocprofv3) shows it."
  end
  return notes
end

function rules.summary(metrics)
  local cs = metrics.category_specific or {}
  return { "Quantized GEMM signatures: " .. F.num(cs.quantized_count) .. ".",
    "Signatures without a performance model: " .. F.num(cs.missing_perf_model_count) .. "." }
end

local metrics = F.analyze(ctx)
return { metrics = json.encode(metrics), findings = F.render(ctx, metrics, rules) }

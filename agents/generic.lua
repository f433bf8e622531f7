-- Generic analyzer: every category without its own analyzer (other, moe_aux,
-- customcollective, rope_fwd, crossentropy_fwd, ...): agents-and-report.md
-- §3.13, rules in docs/analyzers.md.
--
-- First decide what the dominant op really is: a name or kernel that matches
-- another category's work (MoE, GEMM, attention, normalization, convolution,
-- softmax) is miscategorized and is routed to that analyzer. Otherwise:
-- unmodeled ops are profiled; compute-bound ops get tile/occupancy tuning;
-- memory-bound gathers, scatters and embedding lookups get memory-access
-- tuning, high-count ops are batched upstream, ops sharing a model layer are
-- left to the kernel fusion analysis; collectives (customcollective) overlap
-- with compute. The Data table carries the Sub-Category column.
local json = require "tracelens.json"
local F = require "tracelens.findings"
local say = require "tracelens.prose"
local kernel_name = require "tracelens.kernel_name"

local ctx = ...

local MANY_CALLS = 1000

local GATHER_WORDS = { "index", "embedding", "gather", "scatter", "take", "topk" }

-- The category whose analyzer fits an op, by words in its name or kernel name.
local TRUE_CATEGORY = {
  { "MoE", { "moe", "expert" } },
  { "attention", { "attention", "attn", "fmha", "flash" } },
  { "GEMM", { "gemm", "matmul", "::mm", "::bmm", "addmm", "::linear", "cijk_" } },
  { "normalization", { "norm" } },
  { "convolution", { "conv" } },
  { "reduce", { "softmax" } },
}

-- "fbgemm" names a library (embedding tables, quantized ops), not a GEMM;
-- embedding and index ops are gathers whatever library runs them.
-- An op running this many kernels or more is no one category's work, whatever one kernel's name says
-- (compiled_decode: `Torch-Compiled Region: 0/0` replays a whole model, flash attention among its kernels).
local MANY_KERNELS = 4
local function true_category(op)
  local kernels = select(2, tostring(op.kernel_name or ""):gsub("<br>", "")) + 1
  if kernels >= MANY_KERNELS then return nil end
  local text = (op.name .. " " .. tostring(op.kernel_name or "")):lower():gsub("fbgemm", "")
  if say.class_of(say.base_name(op.name) .. " " .. op.name, { { true, GATHER_WORDS } }) then return nil end
  return say.class_of(text, TRUE_CATEGORY)
end

local function sub_category(op) return (op.classification or {}).sub_category end

local function gather_like(op) return say.class_of(say.base_name(op.name), { { true, GATHER_WORDS } }) or false end

local function gather_access(v)
  return { action = "Optimize the memory access of " .. say.target(v) .. ": sort or group the indices so each wave "
      .. "reads whole rows.",
    mechanism = "Gathers and scatters touch rows at data-dependent addresses. Grouped indices turn scattered "
      .. "reads into contiguous row reads, which brings the op closer to streaming bandwidth." }
end

local function overlap_collective(v)
  return { action = "Run " .. say.code(v.lead.name) .. " beside independent compute and merge small collectives into "
      .. "fewer, larger ones.",
    mechanism = "A collective waiting on the interconnect leaves the compute units idle unless independent work runs "
      .. "beside it. Fewer, larger messages pay the per-message latency fewer times." }
end

local rules = {}

function rules.missing(c)
  if c.category == "other" then return "No uncategorized operations found in trace" end
end

function rules.noun(v) return v.category == "other" and "uncategorized operation" or (v.display .. " operation") end

function rules.describe(op) return say.tensors_text(op) end

function rules.identify(v)
  local out, op = {}, v.lead
  local kernel = F.present(op.kernel_name) and op.kernel_name ~= "" and not op.kernel_name:find("<br>", 1, true)
    and (" and runs the kernel " .. say.code(kernel_name.short(op.kernel_name))) or ""
  out[1] = say.code(op.name) .. " is classified as " .. tostring(sub_category(op) or "miscellaneous") .. kernel .. "."
  local truly = true_category(op)
  if truly then
    out[2] = "Its name and kernel match " .. truly .. " work, so read it as " .. truly .. " work that no "
      .. (F.unmodelled(v) == "no_model" and "performance model" or "roofline") .. " here covers."
  end
  return out
end

function rules.source_keys() return { "operations[].classification.sub_category", "operations[].kernel_name" } end

function rules.reasoning(v)
  local out = {}
  if gather_like(v.lead) and v.bound == "memory" then
    out[1] = "Embedding and index ops move rows with almost no arithmetic, so they should approach peak bandwidth."
  end
  out[#out + 1] = "Sub-category is heuristic — verify against op semantics before acting on it."
  return out
end

-- An op the analyzer judges as another category's is rerouted first.
local function reroute_first(v)
  local truly = true_category(v.lead)
  return truly and { say.remedy.reroute(v, truly) } or {}
end

function rules.advice_unmodeled(v)
  local advice = reroute_first(v)
  advice[#advice + 1] = say.remedy.profile_unmodeled(v)
  return advice
end

function rules.advice(v)
  local advice = reroute_first(v)
  if sub_category(v.lead) == "communication" then
    advice[#advice + 1] = overlap_collective(v)
  elseif v.bound == "compute" then
    advice[#advice + 1] = say.remedy.tile_tuning(v)
  else
    advice[#advice + 1] = gather_like(v.lead) and gather_access(v) or say.remedy.memory_access(v)
    if (v.lead.count or 0) > MANY_CALLS then
      advice[#advice + 1] = say.remedy.batch_upstream(v)
    elseif #say.same_layer_ops(v, v.lead) > 0 then
      advice[#advice + 1] = say.remedy.fuse_in_layer(v, say.code(say.layer(v.lead)))
    end
  end
  return advice
end

function rules.notes(v)
  local notes = { "Cross-category fusion potential not assessed here — defer to the kernel fusion analysis." }
  if v.heuristic then notes[2] = F.FALLBACK.root_cause end
  return notes
end

function rules.columns()
  return { { name = "Sub-Category", cell = function(op) return sub_category(op) end } }
end

function rules.summary(metrics)
  local cs = metrics.category_specific or {}
  return { "Signatures by sub-category: graph " .. F.num(cs.graph_count) .. ", miscellaneous "
    .. F.num(cs.miscellaneous_count) .. "." }
end

-- `other` only: the communication ops removed before the analysis.
function rules.sections(metrics)
  local skipped = (metrics.category_specific or {}).communication_ops_skipped
  if metrics.category ~= "other" or type(skipped) ~= "table" or (skipped.count or 0) == 0 then return nil end
  local names = {}
  for i, n in ipairs(skipped.op_names or {}) do names[i] = say.code(n) end
  return { "## Communication Kernels (Skipped)", "",
    F.num(skipped.count) .. " communication " .. say.plural(skipped.count, "operation") .. " ("
      .. say.list(names, 5) .. ") " .. say.plural(skipped.count, "was", "were") .. " left out of this analysis.",
    "Collective communication is covered by the system-level analysis. For a per-collective breakdown, use "
      .. "TraceLens's NCCL Analyzer (`TraceLens/NcclAnalyser/`).", "" }
end

local metrics = F.analyze(ctx)
return { metrics = json.encode(metrics), findings = F.render(ctx, metrics, rules) }

-- agents/model_id.lua — model identification (agents-and-report.md §4).
--
-- ctx = {scope, unified = <unified_perf_summary Table or array of rows with
--        name, Input type, Input Dims, call_stack_full, Kernel Time (µs)_sum, op category>,
--        nn_modules = {sorted nn.Module class names}}
-- returns {model_info = <JSON text: model, architecture, scale, precision>}
--
-- Every field is "Cannot be inferred from trace" unless its evidence is in
-- the trace; the tables below are documented in docs/analyzers.md.
local json = require "tracelens.json"
local py = require "tracelens.py"

local ctx = ...

local UNKNOWN = "Cannot be inferred from trace"
local CONV_DOMINATES = 0.5          -- share of kernel time that makes a trace a CNN
local EMBEDDING_BAG_SHARE = 0.1     -- share of kernel time that makes a trace a recommender

-- Model families by nn.Module class-name prefix, most specific first.
local FAMILIES = {
  { "DistilBert", "DistilBERT" }, { "Roberta", "RoBERTa" }, { "Bert", "BERT" },
  { "Llama", "Llama" }, { "Qwen", "Qwen" }, { "Mixtral", "Mixtral" }, { "Mistral", "Mistral" },
  { "Gemma", "Gemma" }, { "Phi", "Phi" }, { "GptOss", "GPT-OSS" }, { "GPT2", "GPT-2" }, { "GPTNeoX", "GPT-NeoX" },
  { "GPTJ", "GPT-J" }, { "Falcon", "Falcon" }, { "Deepseek", "DeepSeek" }, { "OPT", "OPT" }, { "T5", "T5" },
  { "Bart", "BART" }, { "Whisper", "Whisper" }, { "Owlv2", "OWLv2" }, { "OwlViT", "OWL-ViT" },
  { "Timesformer", "TimeSformer" }, { "ViT", "ViT" }, { "CLIP", "CLIP" }, { "Swin", "Swin" }, { "ConvNeXt", "ConvNeXt" },
  { "ResNet", "ResNet" }, { "Bottleneck", "ResNet" }, { "BasicBlock", "ResNet" }, { "EfficientNet", "EfficientNet" },
  { "MobileNet", "MobileNet" }, { "VGG", "VGG" }, { "DenseNet", "DenseNet" }, { "UNet", "Diffusion (UNet)" },
  { "DLRM", "DLRM" }, { "Mamba", "Mamba" },
}
-- Families whose models are vision transformers, and decoder-only language models.
local VIT_FAMILIES = { ViT = true, ["OWL-ViT"] = true, OWLv2 = true, TimeSformer = true, Swin = true, CLIP = true }
local LLM_FAMILIES = { Llama = true, Qwen = true, Mixtral = true, Mistral = true, Gemma = true, Phi = true,
  ["GPT-OSS"] = true, ["GPT-2"] = true, ["GPT-NeoX"] = true, ["GPT-J"] = true, Falcon = true, DeepSeek = true,
  OPT = true }

-- Hidden size -> scale label (the width of the residual stream). Decoder
-- language models are labelled by parameter count; other models (encoders,
-- vision) by the BERT-era names first.
local ENCODER_SCALES = { [128] = "tiny", [256] = "mini", [512] = "small", [768] = "base", [1024] = "large" }
local DECODER_SCALES = {
  [896] = "~0.5B", [1024] = "~0.5B", [1536] = "~1.5B", [2048] = "~1B–2B", [2560] = "~3B", [3072] = "~3B–4B",
  [3584] = "~7B", [4096] = "~7B–8B", [5120] = "~13B–14B", [6144] = "~20B–30B", [8192] = "~70B", [12288] = "~175B",
  [16384] = "~405B",
}

-- Precision labels of torch dtype names (py.torch_dtype).
local PRECISION = { bf16 = "BF16", fp16 = "FP16", fp32 = "FP32", fp64 = "FP64", fp8 = "FP8", fp4 = "FP4" }

local each_row = require("tracelens.analysis").each_row

local function kernel_us(row)
  local v = tonumber(row["Kernel Time (µs)_sum"])
  if v and v == v then return v end
  return 0
end

local function lower(s) return tostring(s or ""):lower() end

-- The op kinds the architecture rules count, by kernel time.
local function op_mix()
  local mix = { total = 0, conv = 0, attention = 0, moe = 0, embedding_bag = 0, tbe = 0, rnn = 0, gemm = 0, bmm = 0,
    softmax = 0 }
  for _, row in each_row(ctx.unified) do
    local name, cat, t = lower(row.name), lower(row["op category"]), kernel_us(row)
    mix.total = mix.total + t
    if cat:find("conv", 1, true) or name:find("conv", 1, true) then mix.conv = mix.conv + t end
    if cat:find("sdpa", 1, true) or cat:find("attention", 1, true) or name:find("scaled_dot_product", 1, true)
        or name:find("flash_attn", 1, true) or name:find("attention", 1, true) then
      mix.attention = mix.attention + t
    end
    if cat:find("moe", 1, true) or name:find("moe", 1, true) then mix.moe = mix.moe + t + 1e-9 end
    if name:find("embedding_bag", 1, true) then mix.embedding_bag = mix.embedding_bag + t + 1e-9 end
    -- FBGEMM's table-batched embeddings (fbgemm::split_embedding_codegen_lookup_*, SplitLookupFunction_*):
    -- the embedding tables of a recommendation model (HTA's trace_filter ranks)
    if name:find("split_embedding_codegen", 1, true) or name:find("splitlookupfunction", 1, true) then
      mix.tbe = mix.tbe + t + 1e-9
    end
    if name:find("lstm", 1, true) or name:find("gru", 1, true) or name:find("_rnn", 1, true) then
      mix.rnn = mix.rnn + t + 1e-9
    end
    if cat == "gemm" then mix.gemm = mix.gemm + t end
    if name == "aten::bmm" or name == "aten::baddbmm" then mix.bmm = mix.bmm + 1 end
    if name:find("softmax", 1, true) then mix.softmax = mix.softmax + 1 end
  end
  if mix.bmm > 0 and mix.softmax > 0 then mix.attention = mix.attention + 1e-9 end
  return mix
end

-- Model family: the FAMILIES entry matching the most module class names
-- (ties: table order).
local function family()
  local best, best_n = nil, 0
  for _, f in ipairs(FAMILIES) do
    local n = 0
    for _, m in ipairs(ctx.nn_modules or {}) do
      if tostring(m):sub(1, #f[1]) == f[1] then n = n + 1 end
    end
    if n > best_n then best, best_n = f[2], n end
  end
  return best
end

local function architecture(mix, fam)
  if mix.moe > 0 then return "Transformer (MoE)" end
  if fam == "DLRM" or mix.tbe > 0 or (mix.total > 0 and mix.embedding_bag / mix.total >= EMBEDDING_BAG_SHARE) then
    return "Recommendation"
  end
  if fam == "Diffusion (UNet)" then return "Diffusion" end
  if mix.attention > 0 and VIT_FAMILIES[fam] then return "ViT" end
  if mix.conv > 0 and (mix.conv >= CONV_DOMINATES * mix.total or mix.attention == 0 and mix.conv >= mix.gemm) then
    return "CNN"
  end
  if mix.attention > 0 then return "Transformer" end
  if mix.rnn > 0 then return "RNN" end
  return UNKNOWN
end

-- Decoder-style evidence: a causal-LM family or modules named after decoder layers.
local function decoder_evidence(fam)
  if LLM_FAMILIES[fam] then return true end
  for _, m in ipairs(ctx.nn_modules or {}) do
    if tostring(m):find("DecoderLayer", 1, true) or tostring(m):find("CausalLM", 1, true) then return true end
  end
  return false
end

local function model(arch, fam)
  if fam then
    if arch == "Transformer (MoE)" and not fam:find("Mixture", 1, true) then return fam .. " (Mixture-of-Experts)" end
    return fam
  end
  if arch == "CNN" or arch == "ViT" then return "Vision" end
  if arch == "Recommendation" then return "Recommendation" end
  if arch == "Diffusion" then return "Diffusion" end
  if arch == "Transformer (MoE)" then return "LLM (Mixture-of-Experts)" end
  if arch == "Transformer" and decoder_evidence(fam) then return "LLM" end
  return UNKNOWN
end

-- Shapes ------------------------------------------------------------------------------

local function dims_of(row)
  local v = type(row["Input Dims"]) == "string" and py.literal(row["Input Dims"]) or nil
  if type(v) ~= "table" then return {} end
  return v
end

local function is_shape(d, rank)
  if type(d) ~= "table" or #d ~= rank then return false end
  for _, x in ipairs(d) do
    if math.type(x) ~= "integer" then return false end
  end
  return true
end

-- The weight matrix of a GEMM op (addmm: 3rd input, mm/matmul/linear: 2nd).
local WEIGHT_SLOT = { ["aten::addmm"] = 3, ["aten::mm"] = 2, ["aten::matmul"] = 2, ["aten::linear"] = 2 }

-- Hidden size: the dimension shared by the most GEMM weight shapes, when at
-- least two distinct weight shapes share it. The weights of addmm and linear
-- (layers with a bias, forward) first; mm and matmul only without them: a
-- training trace's backward mm multiplies activations and gradients (the
-- compiled capture: (8192, 2048) tokens by features made its d=2048 "8192").
local FORWARD_WEIGHT = { ["aten::addmm"] = true, ["aten::linear"] = true }
local function hidden_size_of(ops)
  local shapes, seen = {}, {}
  for _, row in each_row(ctx.unified) do
    local name = tostring(row.name)
    local slot = (not ops or ops[name]) and WEIGHT_SLOT[name]
    local w = slot and dims_of(row)[slot]
    if w and is_shape(w, 2) then
      local key = w[1] .. "x" .. w[2]
      if not seen[key] then
        seen[key] = true
        shapes[#shapes + 1] = w
      end
    end
  end
  local count = {}
  for _, w in ipairs(shapes) do
    count[w[1]] = (count[w[1]] or 0) + 1
    if w[2] ~= w[1] then count[w[2]] = (count[w[2]] or 0) + 1 end
  end
  local best, best_n = nil, 1
  for size, n in pairs(count) do
    if n > best_n or (n == best_n and best and size < best) then best, best_n = size, n end
  end
  return best
end
local function hidden_size() return hidden_size_of(FORWARD_WEIGHT) or hidden_size_of(nil) end

-- MoE scale from a fused MoE op: hidden states (T, H), expert weights (E, N, K)
-- and routing ids (T, k).
local function moe_scale()
  for _, row in each_row(ctx.unified) do
    if lower(row.name):find("moe", 1, true) then
      local d = dims_of(row)
      local x, w1, w2 = d[1], d[2], d[3]
      if is_shape(x, 2) and is_shape(w1, 3) and is_shape(w2, 3) then
        local hidden = x[2]
        local inter = w2[2] == hidden and w2[3] or w2[2]
        local text = string.format("%d experts, hidden=%d, intermediate=%d", w1[1], hidden, inter)
        for i = 4, #d do
          if is_shape(d[i], 2) and d[i][1] == x[1] and d[i][2] < w1[1] then
            return text .. string.format(", top-%d", d[i][2])
          end
        end
        return text
      end
    end
  end
end

local function scale(arch, fam)
  if arch == "Transformer (MoE)" then
    local s = moe_scale()
    if s then return s end
  end
  -- a CNN's GEMM weights are its classifier's, no hidden size (resnet_train: "hidden size 2048", the fc layer)
  if arch == "CNN" then return UNKNOWN end
  local h = hidden_size()
  if not h then return UNKNOWN end
  -- the parameter counts by hidden size are transformers': a recommender's are in its embedding tables; and a
  -- size name (BERT's "large" at 1024) only means something for a known family (gpt_train: an 8-layer
  -- 167M-parameter model with d=1024 was called "large")
  if (arch ~= "Transformer" and arch ~= "Transformer (MoE)" and arch ~= "ViT") or not fam then
    return string.format("hidden size %d", h)
  end
  local first, second = ENCODER_SCALES, DECODER_SCALES
  if decoder_evidence(fam) then first, second = DECODER_SCALES, ENCODER_SCALES end
  local label = first[h] or second[h]
  if label then return string.format("%s (hidden size %d)", label, h) end
  return string.format("hidden size %d", h)
end

-- Precision: the dtype carrying the most kernel time among the compute ops
-- (GEMM, attention, convolution, MoE), else among all ops.
local COMPUTE_CATEGORY = { "gemm", "sdpa", "conv", "moe", "attention" }

local function is_compute(row)
  local cat, name = lower(row["op category"]), lower(row.name)
  for _, c in ipairs(COMPUTE_CATEGORY) do
    if cat:find(c, 1, true) or name:find(c, 1, true) then return true end
  end
  return false
end

local function dtype_of(row)
  local types = type(row["Input type"]) == "string" and py.literal(row["Input type"]) or nil
  for _, t in ipairs(type(types) == "table" and types or {}) do
    local name = tostring(t)
    local d = py.torch_dtype(name) or py.torch_dtype("c10::" .. name)
    if d and PRECISION[d] and lower(name) ~= "unsigned char" then return PRECISION[d] end
  end
end

local function precision()
  local function dominant(filter)
    local time, order = {}, {}
    for _, row in each_row(ctx.unified) do
      if filter(row) then
        local d = dtype_of(row)
        if d then
          if not time[d] then order[#order + 1] = d end
          time[d] = (time[d] or 0) + kernel_us(row) + 1e-9
        end
      end
    end
    local best
    for _, d in ipairs(order) do
      if not best or time[d] > time[best] then best = d end
    end
    return best
  end
  return dominant(is_compute) or dominant(function() return true end) or UNKNOWN
end

local function identify()
  if not ctx.unified then
    return json.obj("model", UNKNOWN, "architecture", UNKNOWN, "scale", UNKNOWN, "precision", UNKNOWN)
  end
  local fam = family()
  local arch = architecture(op_mix(), fam)
  return json.obj("model", model(arch, fam), "architecture", arch, "scale", scale(arch, fam), "precision", precision())
end

return { model_info = json.encode(identify()) }

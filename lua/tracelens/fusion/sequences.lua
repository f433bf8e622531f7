--- tracelens.fusion.sequences — the fusion hint from repeated kernel
-- sequences (issue 16): a sequence of short kernels that repeats on a
-- stream (trace:kernel_sequences(), the kernel_sequences sheet) and that no
-- fusion candidate covers gets one line in the fusion section of
-- analysis.md. Owns the rule and its wording; the sequences come from C
-- (src/trace/kernel_ngrams.h).
--
-- The rule (docs/analyzers.md "Repeated kernel sequences"): a sequence is
-- named when its kernels average under SHORT_US each, it runs at least
-- MIN_COUNT times, it covers at least MIN_SHARE of its stream's kernel time,
-- every kernel is one a fusion could absorb (fusion-eligible as the fusion
-- analyzer says, and neither a GEMM, a convolution nor attention by
-- tracelens.classify_kernels), and no fusion candidate holds all of its
-- kernel names. At most MAX_LINES, by GPU time.
local md = require "tracelens.md"
local kname = require "tracelens.kernel_name"
local common = require "tracelens.fusion.common"
local classify = require "tracelens.classify_kernels"

local M = {}

M.SHORT_US = 10
M.MIN_COUNT = 10
M.MIN_SHARE = 0.01
M.MAX_LINES = 3

-- the kernel names of each candidate, as sets
local function candidate_sets(candidates)
  local sets = {}
  for _, c in ipairs(candidates or {}) do
    local s = {}
    for _, k in ipairs(type(c) == "table" and c.kernels or {}) do
      local n = k.name or k.kernel_name
      if type(n) == "string" then s[n] = true end
    end
    sets[#sets + 1] = s
  end
  return sets
end

-- a kernel a fused elementwise / normalization kernel could absorb
local function absorbable(name)
  if not common.is_fusion_eligible(name) then return false end
  local ty, cat = classify.classify(name)
  ty, cat = tostring(ty):upper(), tostring(cat):upper()
  return not (ty:find("GEMM", 1, true) or ty:find("CONV", 1, true) or ty:find("ATTENTION", 1, true)
    or cat:find("GEMM", 1, true) or cat:find("SDPA", 1, true))
end

local function all_absorbable(seq)
  for _, n in ipairs(seq.kernels) do
    if not absorbable(n) then return false end
  end
  return true
end

local function covered(seq, sets)
  for _, s in ipairs(sets) do
    local all = true
    for _, n in ipairs(seq.kernels) do
      if not s[n] then all = false break end
    end
    if all then return true end
  end
  return false
end

--- The sequences that qualify, by GPU time (seqs: trace:kernel_sequences();
--- candidates: the fusion_candidates array).
function M.select(seqs, candidates)
  local sets, out = candidate_sets(candidates), {}
  for _, q in ipairs(seqs or {}) do
    local n = #q.kernels
    local mean = q.count > 0 and q.gpu_us / (q.count * n) or 0
    if q.count >= M.MIN_COUNT and mean < M.SHORT_US and q.stream_kernel_us > 0
        and q.gpu_us >= M.MIN_SHARE * q.stream_kernel_us and all_absorbable(q) and not covered(q, sets) then
      out[#out + 1] = q
    end
  end
  table.sort(out, function(a, b)
    if a.gpu_us ~= b.gpu_us then return a.gpu_us > b.gpu_us end
    return a.first_uid < b.first_uid
  end)
  while #out > M.MAX_LINES do out[#out] = nil end
  return out
end

local function names_text(kernels)
  local parts = {}
  for i, n in ipairs(kernels) do parts[i] = md.code(kname.short(n)) end
  return table.concat(parts, " → ")
end

--- The lines for analysis.md's fusion section (empty when none qualifies;
--- graphs: graph replays run most of the trace's GPU time, so a CUDA graph
--- is not advised: the kernels run in one already).
function M.lines(seqs, candidates, graphs)
  local sel = M.select(seqs, candidates)
  if #sel == 0 then return {} end
  local out = { "**Repeated short-kernel sequences** (the `kernel_sequences` sheet) that no fusion candidate "
    .. "covers: short kernels that run in the same order again and again are what one fused kernel"
    .. (graphs and " replaces (they run in graph replays already)." or ", or a CUDA graph of them, replaces."), "" }
  for _, q in ipairs(sel) do
    out[#out + 1] = string.format("- %s on stream %d: %d times, %.3f ms in all (%.1f%% of the stream's kernel time), "
      .. "%.2f µs per kernel on average.", names_text(q.kernels), q.stream, q.count, q.gpu_us / 1000,
      q.gpu_us / q.stream_kernel_us * 100, q.gpu_us / (q.count * #q.kernels))
  end
  out[#out + 1] = ""
  return out
end

return M

-- tracelens.analysis — the per-category numbers every compute analyzer starts
-- from (analysis-layer.md §6): time metrics, per-operation efficiency, impact
-- estimates and the category findings that fix which P-items exist.
--
-- Owns: the shared machinery (run_category and its steps). The per-category
-- settings (extra fields, classifiers, category_specific) live in
-- tracelens.categories; this module never knows a category by name.
--
-- Input rows are the category's rows of unified_perf_summary as Lua tables
-- (a missing cell is nil, which plays the part of pandas' NaN).
local json = require "tracelens.json"
local py = require "tracelens.py"
local callstack = require "tracelens.callstack"

local M = {}

M.MIN_PITEM_IMPACT_SCORE = 0.5
local MIN_IMPACT = 0.01
local GAP_LOW, GAP_MID = 0.75, 0.875
local HEURISTIC_LOW, HEURISTIC_MID, HEURISTIC_HIGH = 0.15, 0.30, 0.45
local CALL_CHAIN_MAX_OPS = 100
local KT_SUM = "Kernel Time (µs)_sum"

local r2 = function(x) return py.round(x, 2) end
local r3 = function(x) return py.round(x, 3) end

local num = py.num

-- pandas truthiness of a cell: NaN/None are "missing", "" and 0 are falsy.
local function truthy(v)
  if v == nil or v == false or json.is_null(v) then return false end
  if type(v) == "number" then return v == v and v ~= 0 end
  if type(v) == "string" then return v ~= "" end
  return true
end
M.truthy = truthy

local function sum_column(rows, col)
  local s = 0
  for _, row in ipairs(rows) do
    local v = num(row[col])
    if v then s = s + v end
  end
  return s
end

--- The µs of a unified row's kernels whose name `keep(name)` accepts, from
--- its kernel_details_summary (entries {'name': ..., 'stream': ..., 'count':
--- ..., 'total_duration_us': ...}). `hint`, when given, is a text every
--- accepted name contains (a row without it is skipped unparsed).
function M.kernel_time_us(row, keep, hint)
  local kd = row.kernel_details_summary
  if type(kd) ~= "string" or (hint and not kd:find(hint, 1, true)) then return 0 end
  kd = kd:gsub("np%.float64%(([^()]*)%)", "%1")
  local us = 0
  for name, t in kd:gmatch("{'name': '(.-)', 'stream': [^,]*, 'count': [^,]*, 'total_duration_us': ([^,}]*)") do
    if keep(name) then us = us + (tonumber(t) or 0) end
  end
  return us
end

local function is_copy(name) return name:sub(1, 7) == "Memcpy " end

--- The µs of memory copies (GPU events named "Memcpy ...", the GPU timeline's
--- gpu_memcpy) among a unified row's kernels, from its kernel_details_summary.
function M.copy_time_us(row) return M.kernel_time_us(row, is_copy, "Memcpy") end

--- Is the row a memory copy: all of its kernel time in memory copies (e.g.
--- `aten::copy_` → `Memcpy DtoH`)? Such an op moves data over the host link (or
--- within the device as a DMA copy); it is not computation, is not judged against
--- HBM bandwidth, and the multi-kernel analysis reports it (docs/compat.md, "Shares").
function M.is_copy_row(row)
  local copy = M.copy_time_us(row)
  return copy > 0 and copy >= (num(row[KT_SUM]) or 0) - 1e-6
end

--- A row's kernel time without its memory copies, µs.
local function compute_time_us(row)
  return math.max(0, (num(row[KT_SUM]) or 0) - M.copy_time_us(row))
end

-- §6.2 calculate_time_metrics. [FIX shares] The category time leaves out memory
-- copies, as the manifest's gpu_kernel_time_ms does (tracelens.prepare).
function M.time_metrics(rows, cols, meta)
  local total_ms, pct = 0, 0
  if cols[KT_SUM] then
    for _, row in ipairs(rows) do total_ms = total_ms + compute_time_us(row) end
    total_ms = total_ms / 1000
    local denom = (meta.gpu_utilization or {}).total_time_ms or 1
    pct = denom > 0 and total_ms / denom * 100 or 0
  end
  local count = #rows
  if cols.operation_count then count = math.tointeger(sum_column(rows, "operation_count")) or count end
  return { total_time_ms = r3(total_ms), percent_of_compute = r2(pct), operation_count = count }
end

-- The peak matrix throughput for a Compute Spec (§6.3).
local function resolve_peak_maf(maf, spec)
  if type(maf) == "table" then
    if spec ~= nil and maf[spec] ~= nil then return maf[spec] end
    return maf.matrix_bf16 or 1
  end
  return maf
end

local function standalone_efficiency(eff, row)
  local pct = num(row["Pct Roofline_mean"])
  if pct then
    eff.efficiency_percent = r2(pct)
    if eff.efficiency_percent > 110 then
      eff.warning = string.format("[ANOMALY] Pct Roofline exceeds 110%% (%.1f%%) - verify measurement", eff.efficiency_percent)
      eff.is_anomaly = true
    end
  end
end

-- The gap TraceDiff's alignment gives may be this many times the gap to
-- Trace 2's own calls of the same signature before the latter is used.
local OVERSTATED = 2

-- Trace 1 at least this many times the Trace 2 time it is compared with: a
-- gap that large is rarely one kernel running faster; TraceDiff may have
-- aligned the op with a smaller part of Trace 2 (another shape, a partial
-- window). HTA's sampled ranks: 40.424 ms against 0.023 ms, while Trace 2
-- runs the op under another shape for 106.57 ms. The prose questions such
-- gaps (tracelens.prose).
M.EXTREME_RATIO = 10

--- Which Trace 2 time a comparative row is compared with (§6.3, [FIX]
--- docs/compat.md "Comparative: the same signature in Trace 2"). TraceDiff
--- gives the Trace 2 GPU time of the regions it aligns with the row's calls
--- (lca_total_kernel_time_trace2_us). When Trace 2 also runs the row's
--- signature (prepare's trace2_same_signature_* columns) and that alignment
--- faces the calls with no Trace 2 work, or with a gap more than twice the
--- gap to Trace 2's own calls of the signature, the alignment paired the
--- calls with other work (a sampled or shifted window): the row is compared
--- with those calls instead, scaled to the row's call count. Returns
--- {basis = "same_signature", t2_us, count (Trace 2's calls), total_us
--- (their time), lca_us} or {basis = "lca"}.
function M.trace2_side(row)
  local t1, c1 = num(row[KT_SUM]), num(row.operation_count) or num(row.count)
  local c2, s2 = num(row.trace2_same_signature_count), num(row.trace2_same_signature_kernel_time_us)
  if t1 and t1 > 0 and c1 and c1 > 0 and c2 and c2 > 0 and s2 then
    local direct = s2 * c1 / c2
    local lca_t2 = num(row.lca_total_kernel_time_trace2_us)
    local aligned = num(row.lca_count_trace2) ~= 0 and lca_t2
    if not aligned or (t1 - lca_t2 > 0 and t1 - direct < (t1 - lca_t2) / OVERSTATED) then
      return { basis = "same_signature", t2_us = direct, count = c2, total_us = s2, lca_us = aligned and lca_t2 or nil }
    end
  end
  return { basis = "lca" }
end

-- Comparative efficiency (§6.3). [FIX, docs/compat.md "operations without
-- a counterpart in trace 2"] a row whose lowest common ancestors hold
-- no trace-2 GPU work (lca_count_trace2 = 0), and whose signature Trace 2
-- does not run, has nothing to compare with: the reference projects 0%
-- there (the whole trace-1 time as the "gap"), which would call work trace 2
-- never ran a slowdown. It gets no efficiency, so no estimate and no
-- finding; the report counts it under Analysis coverage.
local function comparative_efficiency(eff, row, side)
  local t1 = num(row[KT_SUM])
  if not t1 or t1 <= 0 then return end
  local pct
  if side.basis == "same_signature" then
    pct = 100 * side.t2_us / t1
  else
    if num(row.lca_count_trace2) == 0 then return end
    local delta, speedup = num(row["delta_us (trace2 - trace1)"]), num(row["speedup (trace2/trace1)"])
    if delta then
      pct = 100 * (t1 + delta) / t1
    elseif speedup and speedup >= 0 then
      pct = 100 * speedup
    else
      return
    end
  end
  local roofline = num(row["Pct Roofline_mean"])
  if roofline and pct < roofline then
    pct = roofline
    eff.warning = string.format(
      "[ROOFLINE CAP] Projected efficiency clamped to roofline (%.1f%%); trace2 gap exceeds trace1 hardware ceiling.", pct)
  else
    eff.warning = json.null
  end
  eff.efficiency_percent = r2(pct)
  eff.is_anomaly = false
end

-- §6.3 calculate_efficiency (side: M.trace2_side(row) when the caller has it)
function M.efficiency(row, peak_hbm, maf, scope, side)
  local tflops, tbs, fpb = num(row["TFLOPS/s_mean"]), num(row["TB/s_mean"]), num(row["FLOPS/Byte"])
  local bound = row["Roofline Bound"]
  local spec = row["Compute Spec"]
  if type(spec) ~= "string" or spec == "" then spec = nil end
  local peak = resolve_peak_maf(maf, spec)
  local eff = json.obj(
    "tflops_achieved", tflops and r2(tflops) or json.null,
    "tb_s_achieved", tbs and r2(tbs) or json.null,
    "efficiency_percent", json.null,
    "bound_type", bound == "COMPUTE_BOUND" and "compute" or bound == "MEMORY_BOUND" and "memory" or json.null,
    "flops_per_byte", (fpb and fpb ~= 0) and r2(fpb) or json.null,
    "compute_spec", spec or json.null,
    "resolved_peak_maf", truthy(peak) and r2(peak) or json.null,
    "resolved_peak_hbm_bw", truthy(peak_hbm) and r2(peak_hbm) or json.null,
    "warning", json.null,
    "is_anomaly", false)
  if scope == "comparative" then
    comparative_efficiency(eff, row, side or M.trace2_side(row))
  else
    standalone_efficiency(eff, row)
  end
  return eff
end

-- §6.8 classify_kernel_library. [FIX, docs/compat.md "kernel libraries"]
-- the reference's markers are ROCm's: a CUDA trace's cuDNN convolution or
-- cuBLAS GEMM was "PyTorch Native" (from a native kernel beside it, a bias
-- add or a fill) or had none; tracelens adds the NVIDIA libraries',
-- FBGEMM's and MIOpen's kernel-name markers ahead of the native one.
local OP_LIBRARIES = { { "aiter::", "AITER" }, { "rocm_aiter", "AITER" }, { "fbgemm", "FBGEMM" },
  { "miopen", "MIOpen" }, { "triton", "Triton" } }
local KERNEL_LIBRARIES = { { "aiter", "AITER" }, { "ck_tile::", "CK" }, { "ck_tile6kentry", "CK" },
  { "FmhaFwd", "CK" }, { "FmhaBwd", "CK" }, { "Cijk_", "Tensile" }, { "wvSplitK", "rocBLAS" },
  -- cuBLAS's split-K reductions (cublasLt::splitKreduce_kernel, splitKreduce_kernel<…>(cublasSplitKParams…))
  -- are not rocBLAS's
  { "cublas", "cuBLAS" }, { "splitKreduce", "rocBLAS" }, { "rocprim::", "rocPRIM" }, { "triton_", "Triton" },
  { "cudnn", "cuDNN" }, { "cublas", "cuBLAS" }, { "nvjet_", "cuBLAS" }, { "_sgemm_", "cuBLAS" },
  { "_hgemm_", "cuBLAS" }, { "pytorch_flash::", "FlashAttention" }, { "flash::flash_", "FlashAttention" },
  { "cutlass::Kernel", "CUTLASS" }, { "cutlass_", "CUTLASS" }, { "fbgemm_gpu::", "FBGEMM" }, { "igemm_", "MIOpen" },
  { "batched_transpose_", "MIOpen" },
  { "void at::native::", "PyTorch Native" } }

-- The library of the first marker (in list order) the text holds, or nil.
local function first_marker(text, markers)
  local s = type(text) == "string" and text or ""
  for _, m in ipairs(markers) do
    if s:find(m[1], 1, true) then return m[2] end
  end
  return nil
end

function M.kernel_library(op_name, kernel_details)
  return first_marker(tostring(op_name or ""):lower(), OP_LIBRARIES) or first_marker(kernel_details, KERNEL_LIBRARIES)
end

-- Kernels the reference's markers miss, named in the cards' Identification
-- only (the metrics and the titles keep §6.8's library, as the golden cases
-- and the report contract do): AOTriton, PyTorch's fused attention on ROCm,
-- whose attn_fwd the reference calls "PyTorch Native" from the fill kernel
-- beside it, or names no library.
local PROSE_LIBRARIES = { { "'attn_fwd'", "AOTriton" }, { "'bwd_kernel_dk_dv'", "AOTriton" },
  { "'bwd_kernel_dq'", "AOTriton" }, { "'bwd_preprocess'", "AOTriton" } }

--- The library a card names for an operation: the AOTriton kernels when its
--- kernel_details show them, else the metrics' library (may be nil).
function M.prose_library(kernel_details, library)
  return first_marker(kernel_details, PROSE_LIBRARIES) or library
end

-- §6.8 format_args: "(d1,d2) dtype" per input, joined by <br>.
function M.format_args(dims, types)
  if type(dims) ~= "string" or type(types) ~= "string" then return nil end
  local d, t = py.literal(dims), py.literal(types)
  if type(d) ~= "table" or type(t) ~= "table" then return nil end
  local parts = {}
  for i = 1, math.min(#d, #t) do
    local dim, dtype = d[i], t[i]
    local shape = type(dim) == "table" and dim or {}
    local kind = ""
    if truthy(dtype) then kind = py.torch_dtype(py.str(dtype)) or py.str(dtype) end
    if not (#shape == 0 and (kind == "" or kind == "Scalar")) then
      local texts = {}
      for j, v in ipairs(shape) do texts[j] = py.str(v) end
      local s = "(" .. table.concat(texts, ",") .. (#shape == 1 and "," or "") .. ") " .. kind
      parts[#parts + 1] = (s:gsub("%s+$", ""))
    end
  end
  if #parts == 0 then return nil end
  return table.concat(parts, "<br>")
end

local kernel_name_rx
--- Kernel names quoted in a kernel_details cell ('name': '...').
function M.kernel_names(details)
  if type(details) ~= "string" then return {} end
  kernel_name_rx = kernel_name_rx or tl.re.compile("'name':\\s*'([^']+)'")
  return kernel_name_rx:findall(details)
end

-- First key of map (insertion order) that is k, or a prefix of k, or has k as
-- its prefix.
local function prefix_lookup(map, keys, k)
  if map[k] ~= nil then return map[k] end
  for _, key in ipairs(keys) do
    if k:sub(1, #key) == key or key:sub(1, #k) == k then return map[key] end
  end
  return nil
end
M.prefix_lookup = prefix_lookup

local function fusion_hit(fusion_map, fusion_keys, details)
  for _, kname in ipairs(M.kernel_names(details)) do
    local hit = prefix_lookup(fusion_map, fusion_keys, kname)
    if hit ~= nil then return hit end
  end
  return nil
end

local function launcher_path(row, module_chain, library)
  local ep = row.entry_point
  if truthy(ep) and ep ~= "Not found" then return ep end
  if #module_chain > 0 then
    return table.concat({ table.unpack(module_chain, 1, math.min(3, #module_chain)) }, " > ")
  end
  if library then return library .. " (vendor)" end
  return "Not found"
end

-- Rows in the reference's order: Kernel Time sum descending, missing last,
-- ties in CSV order.
local function by_kernel_time(rows, cols)
  local order = {}
  for i, row in ipairs(rows) do order[i] = { i = i, row = row } end
  if cols[KT_SUM] then
    table.sort(order, function(a, b)
      local x, y = num(a.row[KT_SUM]), num(b.row[KT_SUM])
      if x and y then
        if x ~= y then return x > y end
      elseif x or y then
        return x ~= nil
      end
      return a.i < b.i
    end)
  end
  local out = {}
  for i, o in ipairs(order) do out[i] = o.row end
  return out
end

local function integer(x) return math.tointeger(x) or math.floor(x) end

-- The Trace 2 side of a comparative operation (M.trace2_side): t2_time_ms,
-- count_trace2, difference_ms, and what they are; raw = Trace 1's time (ms).
local function comparative_fields(op, row, raw, side)
  if side.basis == "same_signature" then
    op.t2_time_ms = r3(side.t2_us / 1000)
    op.count_trace2 = integer(side.count)
    op.difference_ms = r3(side.t2_us / 1000 - raw)
    op.trace2_basis = "same_signature"
    op.t2_same_signature_ms = r3(side.total_us / 1000)
    op.t2_aligned_ms = side.lca_us and r3(side.lca_us / 1000) or json.null
  else
    local t2, c2, delta = num(row.lca_total_kernel_time_trace2_us), num(row.lca_count_trace2),
      num(row["delta_us (trace2 - trace1)"])
    if t2 then op.t2_time_ms = r3(t2 / 1000) end
    if c2 then op.count_trace2 = integer(c2) end
    if c2 == 0 then op.no_trace2_counterpart = true end
    if delta then op.difference_ms = r3(delta / 1000) end
  end
  -- a tenfold gap on the aligned figure: Trace 2's calls of the same name
  -- under other shapes, for the prose
  local nc, nus = num(row.trace2_same_name_count), num(row.trace2_same_name_kernel_time_us)
  local sc = num(row.trace2_same_signature_count)
  local t2 = num(op.t2_time_ms)
  if side.basis == "lca" and t2 and t2 > 0 and raw >= M.EXTREME_RATIO * t2 and nc and nus and nc > (sc or 0) then
    op.t2_other_shapes = json.obj("count", integer(nc - (sc or 0)),
      "time_ms", r3((nus - (num(row.trace2_same_signature_kernel_time_us) or 0)) / 1000))
  end
end

-- §6.4 build_operation_metrics
function M.operations(rows, cols, meta, config, scope, fusion_map)
  local peak_hbm = meta.peak_hbm_bw_tbs or 1
  local maf = meta.max_achievable_tflops or meta.peak_bf16_maf_tflops or 1
  -- no arch file (no peak at all): no resolved peaks either, not the 1 defaults
  if meta.peak_hbm_bw_tbs == nil and meta.max_achievable_tflops == nil and meta.peak_bf16_maf_tflops == nil then
    peak_hbm, maf = nil, nil
  end
  local e2e = (meta.gpu_utilization or {}).total_time_ms or 0
  local cat_total = cols[KT_SUM] and sum_column(rows, KT_SUM) / 1000 or 0
  local fusion_keys = fusion_map and json.keys(fusion_map) or {}
  local with_call_chain = #rows <= CALL_CHAIN_MAX_OPS
  local ops = json.arr()
  for _, row in ipairs(by_kernel_time(rows, cols)) do
    local name = row.name or "Unknown"
    local count = num(row.count) or num(row.operation_count) or 1
    count = math.tointeger(count) or math.floor(count)
    local raw = cols[KT_SUM] and (num(row[KT_SUM]) or 0 / 0) / 1000 or 0
    local op = json.obj(
      "name", name,
      "count", count,
      "time_ms", r3(raw),
      "percent_of_category", cat_total > 0 and r2(raw / cat_total * 100) or 0,
      "percent_of_total", e2e > 0 and r2(raw / e2e * 100) or json.null)
    local side = scope == "comparative" and M.trace2_side(row) or nil -- which Trace 2 time, once per row
    op.efficiency = M.efficiency(row, peak_hbm, maf, scope, side)
    if M.is_copy_row(row) then
      -- a memory copy: no HBM roofline, no impact estimate (see is_copy_row)
      op.efficiency.efficiency_percent = json.null
      op.efficiency.bound_type = json.null
      op.efficiency.warning, op.efficiency.is_anomaly = json.null, false
      op.memory_copy = true
    end
    if truthy(op.efficiency.warning) then op.efficiency_warning = op.efficiency.warning end
    for _, field in ipairs(config.extra_fields or {}) do
      local v = row[field]
      if cols[field] and v ~= nil and v == v then op[field] = v end
    end
    op.args = M.format_args(row["Input Dims"], row["Input type"])
    if side then comparative_fields(op, row, raw, side) end
    local frac = e2e > 0 and raw / e2e or 1.0
    local std, mean = num(row["Kernel Time (µs)_std"]), num(row["Kernel Time (µs)_mean"])
    if count > 10 and frac >= 0.05 and std and mean and mean > 0 then
      op.cov = r3(std / mean)
      op.high_variance = op.cov > 1.0
    end
    if config.classifier then op.classification = config.classifier(name, row) end
    local details = row.kernel_details_summary
    local library = M.kernel_library(name, truthy(details) and details or "")
    op.library = library or json.null
    if fusion_map and #fusion_keys > 0 and truthy(details) then
      local hit = fusion_hit(fusion_map, fusion_keys, details)
      if hit ~= nil then
        op.fusion_flagged = true
        op.fusion_candidate_name = hit
      end
    end
    local stack = callstack.parse(row.call_stack_full)
    op.launcher_path = launcher_path(row, stack.module_chain, library)
    op.kernel_name = stack.kernel_name
    op.kernel_name_trunc = stack.kernel_name_trunc
    op.module_chain = json.arr(stack.module_chain)
    if with_call_chain then op.call_chain = json.arr(stack.call_chain) end
    ops[#ops + 1] = op
  end
  return ops
end

local function stable_sort_desc(list, key)
  local idx = {}
  for i, v in ipairs(list) do idx[i] = { i = i, v = v } end
  table.sort(idx, function(a, b)
    local x, y = a.v[key], b.v[key]
    if x ~= y then return x > y end
    return a.i < b.i
  end)
  local out = json.arr()
  for i, e in ipairs(idx) do out[i] = e.v end
  return out
end
M.stable_sort_desc = stable_sort_desc

-- §6.5 compute_impact_estimates
function M.impact_estimates(operations, category, baseline_ms, scope)
  local baseline_ok = baseline_ms and baseline_ms > 0
  local out = json.arr()
  for _, op in ipairs(operations) do
    local t = op.time_ms
    if not op.fusion_flagged and not op.memory_copy and num(t) and t > 0 then
      local eff = op.efficiency
      local e = eff.efficiency_percent
      if num(e) and not eff.is_anomaly and baseline_ok then
        -- the reference scales each gap, then projects it (the order moves the last digit)
        local gap_high = math.max(0, 1 - e / 100)
        local function impact(gap) return gap * t / baseline_ms * 100 end
        local high = impact(gap_high)
        if high >= MIN_IMPACT then
          out[#out + 1] = json.obj(
            "operation", op.name, "category", category, "type", "kernel_tuning",
            "estimate_method", "quantified",
            "impact_score", r2(impact(GAP_MID * gap_high)), "impact_score_low", r2(impact(GAP_LOW * gap_high)),
            "impact_score_high", r2(high),
            "efficiency_pct", r2(e), "bound_type", eff.bound_type, "library", op.library, "time_ms", r3(t))
        end
      elseif scope ~= "comparative" then
        local pct = op.percent_of_total
        if num(pct) and pct > 0 then
          out[#out + 1] = json.obj(
            "operation", op.name, "category", category, "type", "unmodeled_significant",
            "estimate_method", "heuristic",
            "impact_score", r2(pct * HEURISTIC_MID), "impact_score_low", r2(pct * HEURISTIC_LOW),
            "impact_score_high", r2(pct * HEURISTIC_HIGH),
            "efficiency_pct", json.null, "bound_type", json.null, "library", op.library, "time_ms", r3(t),
            "percent_of_total", pct)
        end
      end
    end
  end
  return stable_sort_desc(out, "impact_score")
end

local function eff_bucket(e, scope)
  if scope == "comparative" then return "all" end
  if not num(e) then return "unknown" end
  if e < 30 then return "0-30" elseif e < 60 then return "30-60" end
  return "60-100"
end

-- Groups estimates by key(est) in first-seen order.
local function group_by(list, key)
  local groups, order = {}, {}
  for _, est in ipairs(list) do
    local k = key(est)
    if not groups[k] then
      groups[k] = {}
      order[#order + 1] = k
    end
    table.insert(groups[k], est)
  end
  return groups, order
end

local function sums(members)
  local s, lo, hi, pct = 0, 0, 0, 0
  for _, m in ipairs(members) do
    s, lo, hi = s + m.impact_score, lo + m.impact_score_low, hi + m.impact_score_high
    pct = pct + (num(m.percent_of_total) or 0)
  end
  return s, lo, hi, pct
end

local function nullable_text(v)
  if v == nil or json.is_null(v) then return nil end
  return v
end

-- §6.6 build_category_findings
function M.category_findings(estimates, scope)
  local quantified, heuristic = {}, {}
  for _, est in ipairs(estimates) do
    table.insert(est.estimate_method ~= "heuristic" and quantified or heuristic, est)
  end
  local findings = json.arr()
  local groups, order = group_by(quantified, function(e)
    return table.concat({ nullable_text(e.bound_type) or "unknown", nullable_text(e.library) or "Unknown",
      eff_bucket(e.efficiency_pct, scope) }, "\1")
  end)
  for _, k in ipairs(order) do
    local members = groups[k]
    local s, lo, hi = sums(members)
    if s >= M.MIN_PITEM_IMPACT_SCORE then
      local first = members[1]
      findings[#findings + 1] = json.obj(
        "bound_type", nullable_text(first.bound_type) or "unknown",
        "library", nullable_text(first.library) or "Unknown",
        "eff_bucket", eff_bucket(first.efficiency_pct, scope),
        "estimate_method", "quantified",
        "impact_score", r2(s), "impact_score_low", r2(lo), "impact_score_high", r2(hi),
        "member_count", #members, "members", stable_sort_desc(members, "impact_score"))
    end
  end
  groups, order = group_by(heuristic, function(e) return e.operation end)
  for _, k in ipairs(order) do
    local members = groups[k]
    local s, lo, hi, pct = sums(members)
    if s >= M.MIN_PITEM_IMPACT_SCORE then
      findings[#findings + 1] = json.obj(
        "bound_type", "unmodeled", "library", nullable_text(members[1].library) or "Unknown",
        "eff_bucket", "unknown", "estimate_method", "heuristic",
        "impact_score", r2(s), "impact_score_low", r2(lo), "impact_score_high", r2(hi),
        "percent_of_total", r2(pct), "member_count", #members, "members", stable_sort_desc(members, "impact_score"))
    end
  end
  findings = stable_sort_desc(findings, "impact_score")
  for i, f in ipairs(findings) do f.rank = i end
  return findings
end

--- Iterates (i, row) over a Table or a plain array of row tables.
function M.each_row(t)
  if type(t) == "userdata" then return t:rows() end
  local i = 0
  return function()
    i = i + 1
    if t and t[i] then return i, t[i] end
  end
end

--- The Lua rows of a Table (or of an array of rows) and the set of its columns.
function M.rows_of(ops)
  local rows, cols = {}, {}
  if ops == nil then return rows, cols end
  if type(ops) == "userdata" then
    for _, c in ipairs(ops:columns()) do cols[c] = true end
    for i, row in ops:rows() do rows[i] = row end
  else
    for i, row in ipairs(ops.rows) do rows[i] = row end
    for _, c in ipairs(ops.columns) do cols[c] = true end
  end
  return rows, cols
end

--- §6.7 run_category: the metrics object of ctx.category.
--- ctx = {category, scope, ops (Table or {rows=, columns=}), metadata (JSON text
--- or decoded), fusion_map (JSON text, decoded object, or nil)}.
function M.run_category(ctx)
  local categories = require "tracelens.categories"
  local category, scope = ctx.category, ctx.scope or "standalone"
  local config = categories.config(category)
  if config.no_data and ctx.ops == nil then return config.no_data(category, scope) end
  local meta = ctx.metadata
  if type(meta) == "string" then meta = json.decode(meta) end
  if ctx.ops == nil or meta == nil then
    local what = ctx.ops == nil and "Category CSV not found: " .. tostring(ctx.csv_file)
      or "[Errno 2] No such file or directory: '" .. tostring(ctx.metadata_file) .. "'"
    return config.error_metrics and config.error_metrics(category, scope, what)
      or json.obj("category", category, "status", "ERROR", "error", what, "comparison_scope", scope)
  end
  local fusion_map = ctx.fusion_map
  if type(fusion_map) == "string" then fusion_map = json.decode(fusion_map) end
  local rows, cols = M.rows_of(ctx.ops)
  local extra
  if config.pre_process then rows, extra = config.pre_process(rows, category) end
  local metrics = json.obj("category", category, "status", "OK", "comparison_scope", scope)
  local t = M.time_metrics(rows, cols, meta)
  metrics.total_time_ms = t.total_time_ms
  metrics.percent_of_compute = t.percent_of_compute
  metrics.operation_count = t.operation_count
  metrics.operations = M.operations(rows, cols, meta, config, scope, fusion_map)
  metrics.category_specific = config.category_specific(rows, cols, meta, extra)
  local baseline = (meta.gpu_utilization or {}).total_time_ms or 0
  metrics.impact_estimates = config.compute_impact == false and json.arr()
    or M.impact_estimates(metrics.operations, category, baseline, scope)
  metrics.category_findings = M.category_findings(metrics.impact_estimates, scope)
  return metrics
end

return M

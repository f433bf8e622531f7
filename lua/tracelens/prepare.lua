-- tracelens.prepare — the category data every analyzer reads
-- (analysis-layer.md §3: orchestrator_prepare Steps 2-5.5, §11.4).
--
-- Owns: the output directory layout, GPU utilisation from the gpu_timeline
-- sheet, the per-category export (<cat>_ops.csv, <cat>_metadata.json), the
-- system-tier entries, the time breakdown, the manifest, the default
-- model_info.json, the model-identification inputs, and the GPU work no
-- launch links to (its share, its kernels' rows in the categories). Runs in the main
-- state (it writes files); the tables it returns are shared with the
-- analyzers' states.
local json = require "tracelens.json"
local py = require "tracelens.py"
local categories = require "tracelens.categories"
local callstack = require "tracelens.callstack"
local analysis = require "tracelens.analysis"
local classify_kernels = require "tracelens.classify_kernels"
local kernel_name = require "tracelens.kernel_name"

local M = {}

local UNKNOWN = "Cannot be inferred from trace"
local TIME_NOTE = "Use gpu_kernel_time_ms for bottleneck prioritization. sync_time_ms indicates host-device sync overhead."
local MANIFEST_NOTE = "Use gpu_kernel_time_ms for bottleneck prioritization. cpu_duration_ms includes sync/launch overhead."

local r3 = function(x) return py.round(x, 3) end
local num = py.num

local function write_json(path, v) tl.fs.write_file(path, json.encode(v)) end

--- get(type, column) over a gpu_timeline sheet (the last row of a type wins,
--- as a dict built from the CSV); a missing row or cell reads as the integer 0.
function M.timeline_getter(timeline)
  local by_type = {}
  if timeline then
    for _, row in timeline:rows() do by_type[row.type] = row end
  end
  return function(kind, col)
    local row = by_type[kind]
    return row and row[col] or 0
  end
end

--- §3.2: the five utilisation figures of a gpu_timeline sheet.
function M.gpu_utilization(timeline)
  local get = M.timeline_getter(timeline)
  return json.obj(
    "total_time_ms", get("total_time", "time ms"),
    "computation_time_percent", get("computation_time", "percent"),
    "exposed_comm_time_percent", get("exposed_comm_time", "percent"),
    "exposed_memcpy_time_percent", get("exposed_memcpy_time", "percent"),
    "idle_time_percent", get("idle_time", "percent"))
end

--- The diagnostics the reference prints about trace quality.
function M.quality_notes(util)
  local notes = {}
  if util.idle_time_percent > 15 then
    notes[#notes + 1] = string.format("[DIAG:trace_quality:HIGH_IDLE] GPU idle time %.1f%% exceeds 15%% threshold",
      util.idle_time_percent)
  end
  if util.computation_time_percent < 85 then
    notes[#notes + 1] = "[DIAG:trace_quality:HIGH_IDLE] Compute utilization < 85%"
  end
  return notes
end

-- Unlinked GPU work -------------------------------------------------------------
-- GPU events whose runtime call no launch links to a CPU operation (a trace
-- whose runtime events sit outside every cpu_op, or lost ones) have no row in
-- the perf report's op sheets. [FIX] The analysis counts them: in the GPU
-- utilisation (the timeline over every GPU event) and in the compute
-- categories, as rows "<kernel> (no launching op)" categorised from the kernel
-- name, and says how much GPU time that is (docs/analysis.md, "Unlinked GPU
-- work"; docs/compat.md).

local GPU_CATS = { "kernel", "gpu_memcpy", "gpu_memset" } -- the GPU timeline's events
M.UNLINKED_SUFFIX = kernel_name.UNLINKED_SUFFIX

local function backward_name(lname) return lname:find("bwd", 1, true) or lname:find("backward", 1, true) end

--- The op category of a GPU event no launch links to, from its name (the
--- kernel-name classifier, tracelens.classify_kernels, then the perf report's
--- kernel rule of categorize_torch_op); nil for a memory copy or a
--- communication kernel, which the GPU timeline does not count as computation.
-- The perf category of the classifier's fine kernel types that its map
-- leaves as "Others" (the first rules, e.g. "LayerNorm", win ties).
local function type_family(ktype)
  if ktype:find("Norm", 1, true) then return "Normalization" end
  if ktype:find("^Attention") or ktype:find("^Linear Attention") then return "SDPA" end
  if ktype:find("GEMM", 1, true) then return "GEMM" end
  if ktype:find("^Activation") or ktype:find("^Quantiz") or ktype:find("^MoE") or ktype == "KV Cache Store" then
    return "Elementwise"
  end
  return "Others"
end

-- The convolution category of a kernel name (lower case), or nil:
-- "CONV_bwd" for the gradients, "CONV_fwd" for the forward pass and the
-- NCHW/NHWC layout conversions (which the convolution analysis counts as
-- layout time, tracelens.categories).
local CONV_BWD = { "igemm_bwd", "igemm_wrw", "_dgrad_", "_wgrad_", "miopenconvbwd", "naive_conv_bwd",
  "naive_conv_wrw" }
local CONV_FWD = { "igemm_fwd", "_fprop_", "miopenconvfwd", "miopensp3asmconv", "naive_conv_fwd" }
local function conv_kernel(lname)
  for _, w in ipairs(CONV_BWD) do
    if lname:find(w, 1, true) then return "CONV_bwd" end
  end
  for _, w in ipairs(CONV_FWD) do
    if lname:find(w, 1, true) then return "CONV_fwd" end
  end
  if categories.is_layout_kernel(lname) then return "CONV_fwd" end
  return nil
end

function M.unlinked_category(name, cat)
  if cat == "gpu_memcpy" then return nil end
  name = tostring(name or "")
  local lname = name:lower()
  -- the GPU timeline's communication and legacy copy kernels: not computation
  if lname:find("nccl", 1, true) or lname:find("rccl", 1, true) or lname:find("cross_device_reduce", 1, true)
    or lname:find("^__amd_rocclr_copybuffer") or lname:find("^memory_copy_") then
    return nil
  end
  if lname:sub(1, 7) == "triton_" then return "triton" end
  -- convolution kernels and the layout conversions around them, which the
  -- reference's rule table (classify_kernels) has no rule for: MIOpen's
  -- implicit-GEMM convolutions (igemm_fwd/bwd/wrw_gtc*: forward, data and
  -- weight gradients) were GEMM work, its batched_transpose_* kernels other
  local conv = conv_kernel(lname)
  if conv then return conv end
  local ktype, perf = classify_kernels.classify(name)
  if perf == "Others" then perf = type_family(ktype) end
  if perf == "GEMM" or perf == "GEMM-MoE" then return "GEMM" end
  if perf == "SDPA" or perf == "SDPA-GDN" then return backward_name(lname) and "SDPA_bwd" or "SDPA_fwd" end
  if perf == "Normalization" then return backward_name(lname) and "NORM_bwd" or "NORM_fwd" end
  if perf == "Elementwise" or perf == "Elementwise-MoE" or perf == "Quantization" or perf == "MemCpy" then
    return "elementwise"
  end
  if name:sub(1, 15) == "void at::native" then
    if name:find("elementwise", 1, true) then return "elementwise" end
    if name:find("reduce", 1, true) then return "reduce" end
  end
  return "other"
end

--- The GPU events of a trace that no launch links to: {total_us (every GPU
--- event), unlinked_us, count, kernels = {{name, display (the short name,
--- unique among them: tracelens.kernel_name), cat, category, count, us, min,
--- max}} in order of first appearance}.
function M.unlinked_gpu(trace)
  -- the walk over the GPU events is trace:unlinked_gpu() (src/trace/health.c):
  -- sums in integer ns (exact), read as µs at the end
  local u = trace:unlinked_gpu()
  local r = { total_us = u.total_ns, unlinked_us = u.unlinked_ns, count = u.count, kernels = {} }
  for i, g in ipairs(u.groups) do
    local args = trace:node(g.first).args
    r.kernels[i] = { name = g.name, cat = g.cat, category = M.unlinked_category(g.name, g.cat), count = g.count,
      us = g.sum_ns, min = g.min_ns, max = g.max_ns, stream = args and args.stream }
  end
  r.total_us, r.unlinked_us = r.total_us / 1000, r.unlinked_us / 1000
  -- each kernel's short display name, unique among them (the full name can
  -- run past 1000 characters; it stays in kernel_details_summary)
  local full = {}
  for i, k in ipairs(r.kernels) do full[i] = k.name end
  local short = kernel_name.unique_short(full)
  for i, k in ipairs(r.kernels) do
    k.us, k.min, k.max = k.us / 1000, k.min / 1000, k.max / 1000
    k.display = short[i]
  end
  return r
end

--- The sentence and the DIAG line that say how much GPU time has no
--- launching op (nil when none).
function M.unlinked_text(u)
  if not u or u.unlinked_us <= 0 then return nil end
  local pct = u.total_us > 0 and u.unlinked_us / u.total_us * 100 or 0
  local sentence = string.format("%.2f ms of GPU time (%.1f%% of all GPU event time, %d events) has no launching "
    .. "CPU operation in the trace; it is analysed as kernels without a launching op, categorised from their "
    .. "kernel names.", u.unlinked_us / 1000, pct, u.count)
  local diag = string.format("[DIAG:trace_quality:UNLINKED_GPU] %.2f ms of GPU time (%.1f%% of %.2f ms) in %d GPU "
    .. "events has no launching CPU operation", u.unlinked_us / 1000, pct, u.total_us / 1000, u.count)
  return sentence, diag, pct
end

--- The five utilisation figures over every GPU event (trace:timeline with
--- the unlinked ones, except the work launched before the trace: the
--- tail of earlier work, of no profiled op), as gpu_utilization reads them
--- from the sheet.
local function utilization_all(trace)
  local ok, t = pcall(trace.timeline, trace, { include_unlinked = true, before_trace = false })
  if not ok or not t or (t.total_time or 0) <= 0 then return nil end
  local pct = function(x) return x / t.total_time * 100 end
  return json.obj(
    "total_time_ms", t.total_time / 1000,
    "computation_time_percent", pct(t.computation_time),
    "exposed_comm_time_percent", pct(t.exposed_comm_time),
    "exposed_memcpy_time_percent", pct(t.exposed_memcpy_time),
    "idle_time_percent", pct(t.idle_time))
end

-- Per kernel: the values of a unified_perf_summary-shaped row (the columns the
-- analysis reads; every other cell missing).
-- The columns of kernel_row's rows, in the order a table of them alone has
-- (pairs() would give another order each run: the gpu_only trace's CSVs
-- changed column order from one run to the next).
local KERNEL_ROW_COLUMNS = { "name", "op category", "operation_count", "Kernel Time (µs)_sum",
  "Kernel Time (µs)_mean", "Kernel Time (µs)_min", "Kernel Time (µs)_max", "kernel_details_summary",
  "trunc_kernel_details" }

local function kernel_row(k)
  local details = string.format("[{'name': %s, 'stream': %s, 'count': %d, 'total_duration_us': %s, "
    .. "'mean_duration_us': %s, 'min_duration_us': %s, 'max_duration_us': %s}]", py.repr(k.name),
    k.stream ~= nil and tostring(k.stream) or "None", k.count, py.repr(k.us + 0.0), py.repr(k.us / k.count),
    py.repr(k.min + 0.0), py.repr(k.max + 0.0))
  return {
    name = (k.display or k.name) .. M.UNLINKED_SUFFIX, ["op category"] = k.category, operation_count = k.count,
    ["Kernel Time (µs)_sum"] = k.us, ["Kernel Time (µs)_mean"] = k.us / k.count,
    ["Kernel Time (µs)_min"] = k.min, ["Kernel Time (µs)_max"] = k.max,
    kernel_details_summary = details, trunc_kernel_details = details,
  }
end

-- A Table of base's rows idx followed by the rows `extra` (kernel_row's, keyed
-- by column name), with base's columns (and the extra rows' own, appended).
-- Built with take/select/with_column: the template row is repeated, then
-- every column is written whole.
local function append_rows(base, idx, extra, template)
  local n = #idx + #extra
  local rows = {}
  for i, v in ipairs(idx) do rows[i] = v end
  local cols, seen = {}, {}
  local t
  if base and #base > 0 then
    for i = 1, #extra do rows[#idx + i] = idx[1] or 1 end
    t = base:take(rows)
    for _, c in ipairs(base:columns()) do
      cols[#cols + 1], seen[c] = c, true
    end
  else
    for i = 1, n do rows[i] = 1 end
    t = template:take(rows):select({})
  end
  for _, c in ipairs(KERNEL_ROW_COLUMNS) do
    if not seen[c] then
      seen[c] = true
      cols[#cols + 1] = c
    end
  end
  local len = { __len = function() return n end }
  for _, c in ipairs(cols) do
    local old = (base and #base > 0) and base:column(c) or {}
    local v = setmetatable({}, len)
    for i = 1, #idx do v[i] = old[idx[i]] end
    for i, r in ipairs(extra) do v[#idx + i] = r[c] end
    t = t:with_column(c, v)
  end
  return t
end

-- The metadata object's common first keys.
local function base_metadata(inp, util, category, name)
  local arch = inp.arch or {} -- nil: a GPU without an arch file, no peaks
  return json.obj(
    "platform", inp.platform,
    "peak_hbm_bw_tbs", arch.mem_bw_gbps and arch.mem_bw_gbps / 1000,
    "max_achievable_tflops", arch.max_achievable_tflops,
    "memory_gb", arch.memory_gb,
    "trace_path", inp.trace_path,
    "output_dir", inp.record_dir or inp.out_dir,
    "category", category,
    "category_name", name,
    "gpu_utilization", util)
end

--- §3.8: the time breakdown of a category's rows. [FIX] gpu_kernel_time_ms
--- leaves out the memory copies among the rows' kernels (e.g. `aten::copy_` →
--- `Memcpy HtoD`): the GPU timeline counts them as memory copies, not
--- computation, so with them a category could exceed the compute time it is a
--- share of (alexnet: elementwise at 528.8%). See docs/compat.md.
--- replayed (optional): row -> true for an op a graph launch replays (its
--- host duration is the launch's, see below). Also returns the names of the
--- rows counted in sync_time_ms.
function M.time_breakdown(rows, cols, replayed)
  local kt, dur = "Kernel Time (µs)_sum", "total_duration_us"
  local gpu, cpu = 0.0, 0.0
  local function sum(col, scale)
    local s = 0.0
    for _, row in ipairs(rows) do s = s + (num(row[col]) or 0) end
    return s * scale
  end
  if cols[kt] then
    local s = 0.0
    for _, row in ipairs(rows) do
      local k = num(row[kt]) or 0
      s = s + math.max(0, k - analysis.copy_time_us(row))
    end
    gpu = s / 1000
  elseif cols.total_direct_kernel_time_ms then gpu = sum("total_direct_kernel_time_ms", 1) end
  if cols[dur] then cpu = sum(dur, 1 / 1000)
  elseif cols["Duration (µs)_sum"] then cpu = sum("Duration (µs)_sum", 1 / 1000)
  else cpu = gpu end
  -- [FIX] a synthetic op (`launcher->kernel (Synthetic Op)`, perf-report §4) carries its
  -- launcher's host duration, which every kernel of that launch repeats: one
  -- graph launch's host time counted once per replayed kernel (sglang decode:
  -- 1307.8 ms in a 473.75 ms trace). So does a captured op the capture merge
  -- grafts under a graph launch (the spec retimes it to the launch's ts and
  -- dur; sglang decode with its capture folder: 1251.2 ms). Neither is the
  -- op's own host time, so such rows do not count as host time beyond kernel
  -- time.
  local sync, nsync, names = 0, 0, {}
  if cols[kt] and cols[dur] then
    for _, row in ipairs(rows) do
      local k, d = num(row[kt]), num(row[dur])
      local not_own = kernel_name.is_synthetic(row.name) or replayed ~= nil and replayed(row)
      if k and d and k > 0 and d > 5 * k and not not_own then
        sync = sync + (d - k) / 1000
        nsync = nsync + 1
        if type(row.name) == "string" then names[#names + 1] = row.name end
      end
    end
  end
  return json.obj("gpu_kernel_time_ms", r3(gpu), "cpu_duration_ms", r3(cpu), "sync_time_ms", r3(sync),
    "sync_ops_count", nsync, "has_sync_bottleneck", sync > 0.1 * gpu and sync > 1), names
end

-- (an op a graph launch replays, on a trace merged with its capture traces)
local replayed_op = require("tracelens.graph_replay").under_launch

-- Groups the unified rows by enhanced category, in first-appearance order.
local function group_rows(unified)
  local groups, order = {}, {}
  if not unified then return groups, order end
  local cats = unified:column("op category")
  for i = 1, #unified do
    local name = categories.enhanced(cats[i])
    local g = groups[name]
    if not g then
      g = { name = name, display = categories.display(cats[i]), idx = {} }
      groups[name] = g
      order[#order + 1] = g
    end
    g.idx[#g.idx + 1] = i
  end
  return groups, order
end

-- Synthetic ops of graph replays (`hipGraphLaunch-><kernel> (Synthetic Op)`,
-- the perf report's names) carry the whole kernel name, often hundreds of
-- characters of Tensile or mangled C++. The category data names them by the
-- kernel's short name (tracelens.kernel_name, unique among the trace's
-- synthetic kernels) so that titles and text stay readable; the perf
-- report's sheets and the rows' kernel_details_summary keep the full name.
-- Returns {full name = short name} for the names that change (nil: none).
local SYNTHETIC_SUFFIX = kernel_name.SYNTHETIC_SUFFIX
local function synthetic_names(unified)
  if not unified or #unified == 0 then return nil end
  local names = unified:column("name")
  local rows, kernels, index = {}, {}, {}
  for i = 1, #unified do
    local n = names[i]
    if type(n) == "string" and n:sub(-#SYNTHETIC_SUFFIX) == SYNTHETIC_SUFFIX then
      local launcher, kernel = n:sub(1, -#SYNTHETIC_SUFFIX - 1):match("^(.-)%->(.+)$")
      if launcher then
        rows[#rows + 1] = { full = n, launcher = launcher, kernel = kernel }
        if not index[kernel] then
          kernels[#kernels + 1] = kernel
          index[kernel] = #kernels
        end
      end
    end
  end
  if #kernels == 0 then return nil end
  local short = kernel_name.unique_short(kernels)
  local map, any = {}, false
  for _, r in ipairs(rows) do
    local k = short[index[r.kernel]]
    if k ~= r.kernel then
      map[r.full], any = r.launcher .. "->" .. k .. SYNTHETIC_SUFFIX, true
    end
  end
  return any and map or nil
end

-- ops with its synthetic ops renamed by map (synthetic_names).
local function rename_synthetic(ops, map)
  if not map then return ops end
  local names, out, changed = ops:column("name"), {}, false
  for i = 1, #ops do
    out[i] = names[i]
    if map[names[i]] then out[i], changed = map[names[i]], true end
  end
  return changed and ops:with_column("name", out) or ops
end

-- The rows of t as Lua tables holding the cells time_breakdown reads (the
-- columns it names, and the kernel details copy_time_us reads), a column
-- at a time; the set of t's columns.
local BREAKDOWN_COLS = { "Kernel Time (µs)_sum", "total_duration_us", "total_direct_kernel_time_ms",
  "Duration (µs)_sum", "name", "kernel_details_summary", "ex_UID" }
local function lua_rows(t)
  local rows, cols, seen = {}, {}, {}
  for _, c in ipairs(t:columns()) do
    cols[c] = true
    seen[c] = (seen[c] or 0) + 1
  end
  local n = #t
  for i = 1, n do rows[i] = {} end
  for _, c in ipairs(BREAKDOWN_COLS) do
    if seen[c] == 1 then
      local v = t:column(c)
      for i = 1, n do rows[i][c] = v[i] end
    elseif seen[c] then -- a name given twice: the row's last cell, as t:rows() gives it
      for i, row in t:rows() do rows[i][c] = row[c] end
    end
  end
  return rows, cols
end

-- Comparative mode: what Trace 2 itself runs of each operation of Trace 1,
-- from its own unified_perf_summary, by signature (name, Input Dims, Input
-- type, Concrete Inputs; any process, thread or strides) and by name alone.
-- tracelens.analysis compares an operation with Trace 2's calls of the same
-- signature when TraceDiff's alignment contradicts them (docs/compat.md
-- "Comparative: the same signature in Trace 2").
local SIGNATURE_COLS = { "Input Dims", "Input type", "Concrete Inputs" }

local function signature_key(row, name)
  local parts = { name or tostring(row.name) }
  for i, c in ipairs(SIGNATURE_COLS) do parts[i + 1] = tostring(row[c] or "") end
  return table.concat(parts, "\0")
end

local function trace2_index(unified2)
  local by_sig, by_name = {}, {}
  local function add(map, key, count, us)
    local e = map[key] or { count = 0, us = 0 }
    e.count, e.us = e.count + count, e.us + us
    map[key] = e
  end
  if not unified2 then return { by_sig = by_sig, by_name = by_name } end
  for _, row in unified2:rows() do
    local count = num(row.operation_count) or num(row.count) or 0
    local us = num(row["Kernel Time (µs)_sum"])
    if count > 0 and us and us >= 0 then
      add(by_sig, signature_key(row), count, us)
      add(by_name, tostring(row.name), count, us)
    end
  end
  return { by_sig = by_sig, by_name = by_name }
end

-- The columns trace2_same_signature_{count,kernel_time_us} and
-- trace2_same_name_{count,kernel_time_us} added to a category's operations
-- (the analyzers' table only: the category CSV keeps the reference's columns).
-- names: the operations' names as the perf report has them.
local function with_trace2_columns(ops, index, names)
  local cols = { sig_n = {}, sig_us = {}, name_n = {}, name_us = {} }
  local n = #ops
  for i, row in ops:rows() do
    local name = tostring(names[i])
    local s, m = index.by_sig[signature_key(row, name)], index.by_name[name]
    if s then cols.sig_n[i], cols.sig_us[i] = s.count, s.us end
    if m then cols.name_n[i], cols.name_us[i] = m.count, m.us end
  end
  local function sized(t) return setmetatable(t, { __len = function() return n end }) end
  return ops:with_column("trace2_same_signature_count", sized(cols.sig_n))
    :with_column("trace2_same_signature_kernel_time_us", sized(cols.sig_us))
    :with_column("trace2_same_name_count", sized(cols.name_n))
    :with_column("trace2_same_name_kernel_time_us", sized(cols.name_us))
end

local function add_time_keys(entry, tb)
  for _, k in ipairs({ "gpu_kernel_time_ms", "cpu_duration_ms", "sync_time_ms", "sync_ops_count", "has_sync_bottleneck" }) do
    entry[k] = tb[k]
  end
end

--- Runs Steps 2-5.5. inp = {out_dir, trace_path, platform, arch (the decoded
--- arch file), scope, sheets (trace:report tables), multi_kernel_data
--- (json.obj or nil), fusion_candidates (json.arr or nil), trace (trace 1's
--- handle: its unlinked GPU events; optional), unlinked (M.unlinked_gpu(trace)
--- when already computed; optional), log (fn),
--- record_dir (the output directory the files name, when out_dir is a
--- staging directory that becomes it; default out_dir)}.
--- Returns {manifest, util, compute = {{name, display, ops (Table), metadata}}, paths}.
function M.run(inp)
  local out, log = inp.out_dir, inp.log or function() end
  local rec = inp.record_dir or out
  local function recorded(path) return rec .. path:sub(#out + 1) end
  for _, d in ipairs({ "", "/metadata", "/category_data", "/category_findings", "/system_findings" }) do
    tl.fs.mkdir(out .. d)
  end
  local util = M.gpu_utilization(inp.sheets.gpu_timeline)
  -- unlinked GPU work (trace 1): the utilisation over every GPU event, and
  -- its kernels in the categories
  local unlinked = inp.unlinked or (inp.trace and M.unlinked_gpu(inp.trace))
  local unlinked_sentence, unlinked_diag, unlinked_pct = M.unlinked_text(unlinked)
  if unlinked_diag then util = utilization_all(inp.trace) or util end
  -- the quality notes are details; unlinked GPU work is a warning
  for _, note in ipairs(M.quality_notes(util)) do log(note) end
  if unlinked_diag then log(unlinked_diag, "warn") end

  local cats = json.arr()
  -- sync_op_names: the ops whose host time beyond kernel time the categories count (trace:host_calls' names)
  local result = { util = util, compute = {}, sync_op_names = {} }
  -- cpu_idle: always first
  local cpu_csv, cpu_meta = out .. "/category_data/cpu_idle_ops.csv", out .. "/metadata/cpu_idle_metadata.json"
  tl.fs.write_file(cpu_csv, "\n")
  write_json(cpu_meta, base_metadata(inp, util, "CPU/Idle Analysis", "cpu_idle"))
  cats[1] = json.obj("name", "cpu_idle", "display_name", "CPU/Idle Analysis", "skill", categories.skill("cpu_idle"),
    "tier", "system", "ops_count", 0, "csv_file", recorded(cpu_csv), "metadata_file", recorded(cpu_meta), "priority", 0)

  -- compute categories, in the order of unified_perf_summary
  local unified = inp.sheets.unified_perf_summary
  local groups, order = group_rows(unified)
  local extra = {}
  if unlinked_diag then
    -- the unlinked kernels join their category, after its operations, by time;
    -- categories only they have come last, by time
    local list = {}
    for _, k in ipairs(unlinked.kernels) do
      if k.category then list[#list + 1] = k end
    end
    table.sort(list, function(a, b)
      if a.us ~= b.us then return a.us > b.us end
      return a.name < b.name
    end)
    local new = {}
    for _, k in ipairs(list) do
      local name = categories.enhanced(k.category)
      local g = groups[name]
      if not g then
        g = { name = name, display = categories.display(k.category), idx = {} }
        groups[name] = g
        new[#new + 1] = g
      end
      extra[name] = extra[name] or {}
      table.insert(extra[name], kernel_row(k))
    end
    for _, g in ipairs(new) do order[#order + 1] = g end
  end
  local synthetic = synthetic_names(unified)
  local replayed = replayed_op(inp.trace)
  local index2 = inp.scope == "comparative" and inp.sheets2 and trace2_index(inp.sheets2.unified_perf_summary)
  for _, g in ipairs(order) do
    local ops = extra[g.name] and append_rows(unified, g.idx, extra[g.name], inp.sheets.gpu_timeline)
      or unified:take(g.idx)
    local perf_names = index2 and ops:column("name") -- the perf report's names, before the synthetic ones' renaming
    ops = rename_synthetic(ops, synthetic)
    local csv = out .. "/category_data/" .. g.name .. "_ops.csv"
    local meta_path = out .. "/metadata/" .. g.name .. "_metadata.json"
    ops:with_column("enhanced_category", g.name):with_column("display_name", g.display):write_csv(csv)
    if index2 then ops = with_trace2_columns(ops, index2, perf_names) end
    local rows, cols = lua_rows(ops)
    local tb, sync_names = M.time_breakdown(rows, cols, replayed)
    for _, n in ipairs(sync_names) do result.sync_op_names[#result.sync_op_names + 1] = n end
    local meta = base_metadata(inp, util, g.display, g.name)
    meta.trace_loading_policy = "DO_NOT_LOAD_TRACE_use_precomputed_tree_data"
    local breakdown = json.copy(tb)
    breakdown.note = TIME_NOTE
    meta.time_breakdown = breakdown
    write_json(meta_path, meta)
    local entry = json.obj("name", g.name, "display_name", g.display, "skill", categories.skill(g.name),
      "tier", "compute_kernel", "ops_count", #ops, "csv_file", recorded(csv), "metadata_file", recorded(meta_path))
    add_time_keys(entry, tb)
    cats[#cats + 1] = entry
    result.compute[#result.compute + 1] = { name = g.name, display = g.display, ops = ops, metadata = meta,
      metadata_text = json.encode(meta) }
  end

  -- system tier: multi-kernel issues, kernel fusion
  local mk = inp.multi_kernel_data
  if mk then
    local data_path = out .. "/category_data/multi_kernel_data.json"
    write_json(data_path, mk)
    local mc, nc = mk.memcpy_summary or {}, mk.nccl_summary or {}
    if (mc.total_count or 0) > 0 or (nc.total_count or 0) > 0 then
      local meta_path = out .. "/metadata/multi_kernel_metadata.json"
      local meta = base_metadata(inp, util, "Multi-Kernel Issues", "multi_kernel")
      meta.tier = "system"
      write_json(meta_path, meta)
      cats[#cats + 1] = json.obj("name", "multi_kernel", "display_name", "Multi-Kernel Issues",
        "skill", "multi-kernel-analyzer", "tier", "system", "ops_count", 0, "csv_file", json.null,
        "metadata_file", recorded(meta_path), "data_file", recorded(data_path))
    end
  end
  local fc = inp.fusion_candidates
  if fc then
    local data_path = out .. "/category_data/fusion_candidates.json"
    write_json(data_path, fc)
    if #fc > 0 then
      local entry = json.obj("name", "kernel_fusion", "display_name", "Kernel Fusion Opportunities",
        "skill", "kernel-fusion-analyzer", "tier", "system", "ops_count", #fc, "csv_file", json.null,
        "metadata_file", json.null, "data_file", recorded(data_path))
      add_time_keys(entry, M.time_breakdown({}, {})) -- [KEEP Q2] all zero
      cats[#cats + 1] = entry
    end
  end

  local manifest = json.obj("platform", inp.platform, "trace_path", inp.trace_path, "output_dir", rec,
    "comparison_scope", inp.scope or "standalone", "gpu_utilization", util, "categories", cats,
    "time_metric_note", MANIFEST_NOTE)
  if unlinked_diag then
    manifest.unlinked_gpu = json.obj("time_ms", r3(unlinked.unlinked_us / 1000),
      "percent_of_gpu_time", py.round(unlinked_pct, 1), "all_gpu_time_ms", r3(unlinked.total_us / 1000),
      "event_count", unlinked.count, "summary", unlinked_sentence, "diagnostic", unlinked_diag)
  end
  if inp.scope == "comparative" then
    -- §3.2 / §3.10: trace 2's utilisation and category times
    -- trace 2's unlinked GPU work counts as trace 1's does (utilisation over
    -- every GPU event, its categorised kernels in the category times), so a
    -- trace compared with itself gives the same numbers in both columns
    local unlinked2 = inp.trace2 and M.unlinked_gpu(inp.trace2)
    local has_unlinked2 = unlinked2 and unlinked2.unlinked_us > 0
    local util2 = has_unlinked2 and utilization_all(inp.trace2) or M.gpu_utilization(inp.sheets2.gpu_timeline)
    write_json(out .. "/metadata/trace2_gpu_utilization.json", util2)
    manifest.trace2_gpu_utilization = util2
    manifest.trace2_ops_summary_by_category = M.ops_summary_by_category(inp.sheets2, has_unlinked2 and unlinked2 or nil)
    -- trace 2's display names by enhanced category (the manifest's records
    -- name categories in lower case), for the report
    result.trace2_names = {}
    for name, g in pairs((group_rows(inp.sheets2.unified_perf_summary))) do result.trace2_names[name] = g.display end
  end
  write_json(out .. "/category_data/category_manifest.json", manifest)
  M.default_model_info(out)
  result.manifest = manifest
  --- the metadata object of another category (a user rule's)
  result.metadata_of = function(category, name) return base_metadata(inp, util, category, name) end
  return result
end

--- §3.10: a trace's time per enhanced category from its unified_perf_summary
--- (falling back to ops_summary_by_category), as the records the manifest
--- holds (floats at 10 decimals, as pandas' to_json writes them [KEEP Q17]).
--- [FIX] Without memory copies, as trace 1's gpu_kernel_time_ms (time_breakdown).
--- unlinked: M.unlinked_gpu's result, whose categorised kernels join their
--- category (as trace 1's do), or nil.
function M.ops_summary_by_category(sheets, unlinked)
  local unified = sheets.unified_perf_summary
  local cols = {}
  for _, c in ipairs(unified and unified:columns() or {}) do cols[c] = true end
  local time_col, scale = nil, 1
  if cols["Kernel Time (µs)_sum"] then time_col, scale = "Kernel Time (µs)_sum", 1 / 1000
  elseif cols.total_direct_kernel_time_ms then time_col = "total_direct_kernel_time_ms" end
  local r10 = function(x) return py.round(x + 0.0, 10) end
  local out = json.arr()
  if not time_col then
    for _, row in (sheets.ops_summary_by_category or unified):rows() do
      local rec = json.obj()
      for _, c in ipairs(sheets.ops_summary_by_category:columns()) do rec[c] = row[c] end
      out[#out + 1] = rec
    end
    return out
  end
  local groups, names = {}, {}
  local rows = {}
  for _, row in unified:rows() do rows[#rows + 1] = row end
  if unlinked and time_col == "Kernel Time (µs)_sum" then
    for _, k in ipairs(unlinked.kernels) do
      if k.category then rows[#rows + 1] = kernel_row(k) end
    end
  end
  for _, row in ipairs(rows) do
    local name = categories.enhanced(row["op category"])
    local g = groups[name]
    if not g then
      g = { name = name, count = 0, time = 0.0 }
      groups[name] = g
      names[#names + 1] = name
    end
    g.count = g.count + (cols.operation_count and (num(row.operation_count) or 0) or 1)
    local t = num(row[time_col]) or 0
    if time_col == "Kernel Time (µs)_sum" then t = math.max(0, t - analysis.copy_time_us(row)) end -- as time_breakdown
    g.time = g.time + t * scale
  end
  table.sort(names) -- groupby order, then a stable sort by time
  local list, total = {}, 0.0
  for i, n in ipairs(names) do
    list[i] = groups[n]
    total = total + groups[n].time
  end
  list = analysis.stable_sort_desc(list, "time")
  local cum = 0.0
  for _, g in ipairs(list) do
    local pct = total > 0 and g.time / total * 100 or 0.0
    cum = cum + pct
    out[#out + 1] = json.obj("op category", g.name, "Count", math.tointeger(g.count) or g.count,
      "total_direct_kernel_time_ms", r10(g.time), "Percentage (%)", r10(pct), "Cumulative Percentage (%)", r10(cum))
  end
  return out
end

local read_file = tl.fs.read_file

--- metadata/model_info.json: the four fields, "Cannot be inferred from
--- trace" unless an existing file says otherwise (its extra keys are kept).
function M.default_model_info(out)
  local path = out .. "/metadata/model_info.json"
  local info = json.obj("model", UNKNOWN, "architecture", UNKNOWN, "scale", UNKNOWN, "precision", UNKNOWN)
  local text = read_file(path)
  local ok, existing = pcall(json.decode, text or "")
  if text and ok and json.is_obj(existing) then
    for k, v in pairs(existing) do info[k] = v end
  end
  write_json(path, info)
  return info
end

--- §11.4: metadata/condensed_op_info.csv and metadata/nn_modules.txt; returns
--- the sorted module names, or nil when the unified sheet lacks a column.
function M.model_identification_data(out, unified)
  if not unified then return nil end
  local have = {}
  for _, c in ipairs(unified:columns()) do have[c] = true end
  for _, c in ipairs({ "name", "Input type", "Input Dims", "call_stack_full" }) do
    if not have[c] then return nil end
  end
  unified:select({ "name", "Input type", "Input Dims" }):write_csv(out .. "/metadata/condensed_op_info.csv")
  local seen, modules = {}, {}
  for _, cs in ipairs(unified:column("call_stack_full")) do
    for _, m in ipairs(callstack.module_names(cs)) do
      if not seen[m] then
        seen[m] = true
        modules[#modules + 1] = m
      end
    end
  end
  table.sort(modules)
  tl.fs.write_file(out .. "/metadata/nn_modules.txt", #modules > 0 and table.concat(modules, "\n") .. "\n" or "")
  return modules
end

return M

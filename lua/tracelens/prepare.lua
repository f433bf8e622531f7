-- tracelens.prepare — the category data every analyzer reads
-- (analysis-layer.md §3: orchestrator_prepare Steps 2-5.5, §11.4).
--
-- Owns: the output directory layout, GPU utilisation from the gpu_timeline
-- sheet, the per-category export (<cat>_ops.csv, <cat>_metadata.json), the
-- system-tier entries, the time breakdown, the manifest, the default
-- model_info.json and the model-identification inputs. Runs in the main
-- state (it writes files); the tables it returns are shared with the
-- analyzers' states.
local json = require "tracelens.json"
local py = require "tracelens.py"
local categories = require "tracelens.categories"
local callstack = require "tracelens.callstack"
local analysis = require "tracelens.analysis"

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
function M.time_breakdown(rows, cols)
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
  -- 1307.8 ms in a 473.75 ms trace). It is not the op's own host time, so
  -- synthetic rows do not count as host time beyond kernel time.
  local sync, nsync = 0, 0
  if cols[kt] and cols[dur] then
    for _, row in ipairs(rows) do
      local k, d = num(row[kt]), num(row[dur])
      local synthetic = type(row.name) == "string" and row.name:sub(-15) == " (Synthetic Op)"
      if k and d and k > 0 and d > 5 * k and not synthetic then
        sync = sync + (d - k) / 1000
        nsync = nsync + 1
      end
    end
  end
  return json.obj("gpu_kernel_time_ms", r3(gpu), "cpu_duration_ms", r3(cpu), "sync_time_ms", r3(sync),
    "sync_ops_count", nsync, "has_sync_bottleneck", sync > 0.1 * gpu and sync > 1)
end

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

local function lua_rows(t)
  local rows, cols = {}, {}
  for _, c in ipairs(t:columns()) do cols[c] = true end
  for i, row in t:rows() do rows[i] = row end
  return rows, cols
end

local function add_time_keys(entry, tb)
  for _, k in ipairs({ "gpu_kernel_time_ms", "cpu_duration_ms", "sync_time_ms", "sync_ops_count", "has_sync_bottleneck" }) do
    entry[k] = tb[k]
  end
end

--- Runs Steps 2-5.5. inp = {out_dir, trace_path, platform, arch (the decoded
--- arch file), scope, sheets (trace:report tables), multi_kernel_data
--- (json.obj or nil), fusion_candidates (json.arr or nil), log (fn),
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
  for _, note in ipairs(M.quality_notes(util)) do log(note) end

  local cats = json.arr()
  local result = { util = util, compute = {} }
  -- cpu_idle: always first
  local cpu_csv, cpu_meta = out .. "/category_data/cpu_idle_ops.csv", out .. "/metadata/cpu_idle_metadata.json"
  tl.fs.write_file(cpu_csv, "\n")
  write_json(cpu_meta, base_metadata(inp, util, "CPU/Idle Analysis", "cpu_idle"))
  cats[1] = json.obj("name", "cpu_idle", "display_name", "CPU/Idle Analysis", "skill", categories.skill("cpu_idle"),
    "tier", "system", "ops_count", 0, "csv_file", recorded(cpu_csv), "metadata_file", recorded(cpu_meta), "priority", 0)

  -- compute categories, in the order of unified_perf_summary
  local unified = inp.sheets.unified_perf_summary
  local _, order = group_rows(unified)
  for _, g in ipairs(order) do
    local ops = unified:take(g.idx)
    local csv = out .. "/category_data/" .. g.name .. "_ops.csv"
    local meta_path = out .. "/metadata/" .. g.name .. "_metadata.json"
    ops:with_column("enhanced_category", g.name):with_column("display_name", g.display):write_csv(csv)
    local rows, cols = lua_rows(ops)
    local tb = M.time_breakdown(rows, cols)
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
  if inp.scope == "comparative" then
    -- §3.2 / §3.10: trace 2's utilisation and category times
    local util2 = M.gpu_utilization(inp.sheets2.gpu_timeline)
    write_json(out .. "/metadata/trace2_gpu_utilization.json", util2)
    manifest.trace2_gpu_utilization = util2
    manifest.trace2_ops_summary_by_category = M.ops_summary_by_category(inp.sheets2)
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
function M.ops_summary_by_category(sheets)
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
  for _, row in unified:rows() do
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

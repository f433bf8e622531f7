-- tracelens.inference — the inference part of the analysis (`--inference`,
-- inference-and-comparative spec §1): what the iteration annotations say
-- about a serving trace and how much of its GPU time the graph replays hide.
--
--   data(trace, opts) -> d     the numbers, computed once from the trace
--                               (trace:iterations(), tl.steady_state, the
--                               graph launches' GPU events); opts =
--                               {capture_folder = DIR or nil}
--   json(d) -> table            d as written to metadata/inference.json
--   section(d, ctx) -> lines    the "## Inference" section of analysis.md;
--                               ctx = {items = the compute P-items of the
--                               report (report_md), manifest = the category
--                               manifest, comparative = true when Trace 1 of
--                               a comparison}
--
-- Owns the section's wording. Every number is a sum, count or extreme of
-- the trace's events (times in integer ns, shown in ms), so every share is
-- of a whole that contains its part: a share never exceeds 100%.
local categories = require "tracelens.categories"
local json = require "tracelens.json"
local md = require "tracelens.md"

local M = {}

local GRAPH_LAUNCH = { cudaGraphLaunch = true, hipGraphLaunch = true }
local GPU_CATS = { "kernel", "gpu_memcpy", "gpu_memset" }
local RUNTIME_CATS = { "cuda_runtime", "cuda_driver" }
local STEADY_STEPS = 32

-- How to collect the capture traces (spec §1.1).
M.CAPTURE_HOWTO = "collect the capture traces of the graphs and pass their folder with `--capture_folder DIR`: "
  .. "vLLM writes them with `--profiler-config.capture_torch_profiler True` (into "
  .. "`TORCH_PROFILER_DIR/capture_traces`), SGLang with the server flag `--enable-profile-cuda-graph` (add "
  .. "`--enable-shape-discovery-for-cuda-graph-profile`, and `SGLANG_GRAPH_BATCH_CAPTURE=1` on 0.5.13 and later), "
  .. "xDiT with `--profile --profile_capture_phase`"

local function ms(ns) return string.format("%.3f", ns / 1e6) end
local function pct(part, whole)
  if whole <= 0 then return "0.0%" end
  return string.format("%.1f%%", 100 * part / whole)
end

-- mean, median, min, max of a list of numbers (nil when empty)
local function stats(list)
  local n = #list
  if n == 0 then return nil end
  local s = {}
  local sum = 0
  for i, v in ipairs(list) do
    s[i] = v
    sum = sum + v
  end
  table.sort(s)
  local median = n % 2 == 1 and s[(n + 1) // 2] or (s[n // 2] + s[n // 2 + 1]) / 2
  return { n = n, mean = sum / n, median = median, min = s[1], max = s[n], sum = sum }
end

-- The graph launches and the GPU work they replay: every GPU event linked
-- under a graph launch, once; attributed = its launcher is an op inside the
-- graph launch's subtree (the capture merge put it there), not the launch
-- itself nor an op around it.
local function graph_replay(trace)
  local r = { launches = 0, gpu_ns = 0, graph_ns = 0, graph_events = 0, attributed_ns = 0, attributed_events = 0,
    counted_under = {} }
  for _, cat in ipairs(GPU_CATS) do
    for e in trace:events({ cat = cat }) do r.gpu_ns = r.gpu_ns + math.max(0, e.dur_ns or 0) end
  end
  local seen = {}
  for _, cat in ipairs(RUNTIME_CATS) do
    for e in trace:events({ cat = cat }) do
      if GRAPH_LAUNCH[e.name] then
        r.launches = r.launches + 1
        local launch = e.uid
        for _, k in ipairs(e:kernels()) do
          if not seen[k.uid] then
            seen[k.uid] = true
            local d = math.max(0, k.dur_ns or 0)
            r.graph_ns, r.graph_events = r.graph_ns + d, r.graph_events + 1
            local l = k:launcher()
            local inside = false
            if l and l.uid ~= launch then
              local p = l:parent()
              while p do
                if p.uid == launch then inside = true; break end
                p = p:parent()
              end
            end
            if inside then
              r.attributed_ns, r.attributed_events = r.attributed_ns + d, r.attributed_events + 1
            else -- counted by the perf report under its launcher (or under no op)
              local name = l and l.name or ""
              r.counted_under[name] = (r.counted_under[name] or 0) + d
            end
          end
        end
      end
    end
  end
  return r
end

--- The inference numbers of a loaded trace.
function M.data(trace, opts)
  opts = opts or {}
  local its = trace:iterations()
  local d = { iterations = its, n = #its, capture_folder = opts.capture_folder, formats = {}, tiers = {} }
  local durs, busy, spans, shares = {}, {}, {}, {}
  local bs, req, ctxr, genr = {}, {}, {}, {}
  local phases = { prefill_only = 0, prefilldecode = 0, decode_only = 0, idle = 0 }
  local kv_per_req, all_sqsk = {}, #its > 0
  for _, it in ipairs(its) do
    local f = it.format or "unparsed"
    d.formats[f] = (d.formats[f] or 0) + 1
    d.tiers[it.tier] = true
    durs[#durs + 1] = it.dur_us * 1000
    busy[#busy + 1] = it.gpu_busy_us * 1000
    if it.num_gpu_events > 0 then
      local span = (it.gpu_end_us - it.gpu_start_us) * 1000
      spans[#spans + 1] = span
      if span > 0 then shares[#shares + 1] = math.min(1, (it.gpu_busy_us * 1000) / span) end
    end
    bs[#bs + 1], req[#req + 1] = it.batch_size, it.num_requests
    ctxr[#ctxr + 1], genr[#genr + 1] = it.context_requests, it.generation_requests
    phases[it.phase or "idle"] = phases[it.phase or "idle"] + 1
    if not it.has_sqsk then all_sqsk = false end
    if it.has_sqsk and it.generation_requests > 0 then kv_per_req[#kv_per_req + 1] = it.g_sk / it.generation_requests end
  end
  d.dur, d.busy, d.span, d.share = stats(durs), stats(busy), stats(spans), stats(shares)
  d.batch, d.requests, d.context_requests, d.generation_requests = stats(bs), stats(req), stats(ctxr), stats(genr)
  d.phases, d.all_sqsk, d.kv_per_request = phases, all_sqsk, stats(kv_per_req)
  if #its > 0 then
    d.steady = tl.steady_state(its, { num_steps = STEADY_STEPS })
    d.steady_decode = tl.steady_state(its, { num_steps = STEADY_STEPS, mode = "decode_only" })
  end
  d.graph = graph_replay(trace)
  -- the capture merge's counts and notes (nil when the trace was not merged)
  local ok, cs = pcall(function() return trace:capture_summary() end)
  d.capture = ok and type(cs) == "table" and cs or nil
  return d
end

--- What metadata/inference.json holds: the per-iteration rows and the
--- summary numbers of the section (times in µs).
function M.json(d)
  local rows = json.arr()
  for i, it in ipairs(d.iterations) do
    rows[i] = { name = it.name, format = it.format, ts_us = it.ts_us, dur_us = it.dur_us, phase = it.phase,
      batch_size = it.batch_size, num_requests = it.num_requests, context_requests = it.context_requests,
      generation_requests = it.generation_requests, gpu_busy_us = it.gpu_busy_us, num_gpu_events = it.num_gpu_events }
  end
  local g = d.graph
  return { num_iterations = d.n, iterations = rows, phases = d.phases,
    steady_state = d.steady and d.steady.window or nil,
    graph_replay = { launches = g.launches, gpu_us = g.gpu_ns / 1000, graph_us = g.graph_ns / 1000,
      attributed_us = g.attributed_ns / 1000, graph_events = g.graph_events, attributed_events = g.attributed_events },
    capture_folder = d.capture_folder }
end

local FORMAT_NAMES = { vllm_detailed = "vLLM detailed", vllm_native = "vLLM", sglang_detailed = "SGLang detailed",
  sglang_native = "SGLang", atom_detailed = "ATOM detailed", atom_native = "ATOM", diffusion_native = "diffusion",
  unparsed = "unparsed" }

local function formats_text(d)
  local parts = {}
  for f, n in pairs(d.formats) do parts[#parts + 1] = { f, n } end
  table.sort(parts, function(a, b) return a[2] > b[2] or (a[2] == b[2] and a[1] < b[1]) end)
  local out = {}
  -- the format, not the engine: an SGLang trace can carry annotations in vLLM's format
  for _, p in ipairs(parts) do
    out[#out + 1] = p[1] == "unparsed" and string.format("%d unparsed", p[2])
      or string.format("%d in the %s format", p[2], FORMAT_NAMES[p[1]] or p[1])
  end
  return table.concat(out, ", ")
end

local function plural(n, one, many) return n == 1 and one or (many or one .. "s") end

local function num_text(x)
  if math.type(x) == "integer" or x == math.floor(x) then return string.format("%d", x) end
  return string.format("%.1f", x)
end

local function iteration_lines(d)
  local out = {}
  out[#out + 1] = string.format("The trace holds %d iteration %s (%s), found by the %s grammars of the "
    .. "serving engines.", d.n, plural(d.n, "annotation"), formats_text(d),
    d.tiers[1] and "detailed (tier 1)" or "native (tier 2)")
  out[#out + 1] = ""
  out[#out + 1] = "| Per iteration | Mean | Median | Min | Max |"
  out[#out + 1] = "|---|---|---|---|---|"
  local function row(label, s, fmt)
    if s then
      out[#out + 1] = string.format("| %s | %s | %s | %s | %s |", label, fmt(s.mean), fmt(s.median), fmt(s.min),
        fmt(s.max))
    end
  end
  row("Annotation duration on the host (ms)", d.dur, ms)
  row("GPU busy time (ms)", d.busy, ms)
  row("GPU span, first start to last end (ms)", d.span, ms)
  row("GPU busy share of the GPU span (%)", d.share, function(x) return string.format("%.1f", 100 * x) end)
  row("Batch size (tokens; diffusion: images)", d.batch, num_text)
  row("Requests", d.requests, num_text)
  row("Prefill (context) requests", d.context_requests, num_text)
  row("Decode (generation) requests", d.generation_requests, num_text)
  if d.kv_per_request then row("Mean KV length per decode request (tokens)", d.kv_per_request, num_text) end
  out[#out + 1] = ""
  out[#out + 1] = "An iteration's GPU work is that of the runtime calls (kernel and graph launches, copies) made "
    .. "inside its annotation on the annotation's thread; the host returns before the GPU finishes, so the "
    .. "GPU span can end after the annotation does."
  out[#out + 1] = ""
  return out
end

local function phase_lines(d)
  local p = d.phases
  local out = { "| Phase | Iterations | Share of iterations |", "|---|---|---|" }
  for _, r in ipairs({ { "Prefill only", p.prefill_only }, { "Mixed (prefill and decode)", p.prefilldecode },
    { "Decode only", p.decode_only }, { "No requests", p.idle } }) do
    if r[2] > 0 or r[1] ~= "No requests" then
      out[#out + 1] = string.format("| %s | %d | %s |", r[1], r[2], pct(r[2], d.n))
    end
  end
  out[#out + 1] = ""
  return out
end

local function steady_lines(d)
  local s = d.steady
  local out = {}
  if not s or not s.window then return out end
  local w = s.window
  if d.n == 1 then
    out[#out + 1] = "Steady state: with a single iteration the steady-state window is that iteration."
  elseif s.fallback then
    out[#out + 1] = string.format("Steady state (the splitter's rule, windows of %d steps): no run of iterations "
      .. "stays near the peak of %d requests, so the window is taken from the middle of the trace: iterations %d to "
      .. "%d (%d %s: %d prefill only, %d mixed, %d decode only; mean batch size %d, mean %d requests).",
      STEADY_STEPS, s.global_max, w.first, w.last, w.num_steps, plural(w.num_steps, "step"), w.num_prefill,
      w.num_prefilldecode, w.num_decode, w.avg_bs, w.avg_conc)
  else
    out[#out + 1] = string.format("Steady state (the splitter's rule, windows of %d steps): %d %s near the "
      .. "peak of %d requests; the representative window is iterations %d to %d (%d %s: %d prefill only, %d mixed, "
      .. "%d decode only; mean batch size %d, mean %d requests).", STEADY_STEPS, #s.regions,
      plural(#s.regions, "region"), s.global_max, w.first, w.last, w.num_steps, plural(w.num_steps, "step"),
      w.num_prefill, w.num_prefilldecode, w.num_decode, w.avg_bs, w.avg_conc)
    local dw = d.steady_decode and d.steady_decode.window
    if dw then
      out[#out + 1] = string.format("The longest run of decode-only iterations in the largest region starts at iteration %d "
        .. "and is %d %s long (capped at %d).", dw.first, dw.num_steps, plural(dw.num_steps, "step"), STEADY_STEPS)
    end
  end
  out[#out + 1] = ""
  return out
end

-- The ops the perf report counts unattributed graph kernels under, by time.
local function counted_under_text(g)
  local list = {}
  for name, ns in pairs(g.counted_under) do list[#list + 1] = { name, ns } end
  table.sort(list, function(a, b) return a[2] > b[2] or (a[2] == b[2] and a[1] < b[1]) end)
  local out = {}
  for i = 1, math.min(3, #list) do
    out[i] = list[i][1] == "" and "no op (unlinked)" or md.code(list[i][1])
  end
  if #list > 3 then out[#out + 1] = string.format("%d more", #list - 3) end
  return table.concat(out, ", ")
end

local function graph_lines(d)
  local g = d.graph
  local out = {}
  if g.launches == 0 then
    out[#out + 1] = "Graph replay: the trace has no CUDA/HIP graph launch; every kernel was launched eagerly."
    out[#out + 1] = ""
    return out
  end
  out[#out + 1] = string.format("Graph replay: %d graph %s %s %d GPU %s taking %s ms (%s of the trace's "
    .. "GPU kernel time, %s ms as the sum of kernel, copy and memset durations).", g.launches,
    plural(g.launches, "launch", "launches"), g.launches == 1 and "replays" or "replay", g.graph_events, plural(g.graph_events, "event"), ms(g.graph_ns),
    pct(g.graph_ns, g.gpu_ns), ms(g.gpu_ns))
  local unattributed = g.graph_ns - g.attributed_ns
  if g.attributed_ns > 0 then
    local rest = unattributed == 0 and "every replayed GPU event has its captured op."
      or string.format("%s ms (%s of the graph-replay time) stays without a captured op; the perf report counts "
        .. "it under %s.", ms(unattributed), pct(unattributed, g.graph_ns), counted_under_text(g))
    out[#out + 1] = string.format("The capture traces attribute %s ms of it (%s of the graph-replay time) to the "
      .. "captured ops, with their shapes and module stacks; %s", ms(g.attributed_ns),
      pct(g.attributed_ns, g.graph_ns), rest)
  elseif d.capture_folder then
    out[#out + 1] = string.format("A capture folder was given (%s), but no graph-replay kernel got a captured op "
      .. "from it, so %s ms (%s of the GPU kernel time) is not attributed to the ops that ran in the graph; the "
      .. "perf report counts it under %s.", md.code(d.capture_folder), ms(unattributed), pct(unattributed, g.gpu_ns),
      counted_under_text(g))
  else
    out[#out + 1] = string.format("Without capture traces these kernels have no CPU op, shapes or call stack: "
      .. "%s ms (%s of the GPU kernel time) is not attributed to the ops that ran in the graph; the perf report "
      .. "counts it under %s, so the per-category analysis below cannot judge it op by op. To attribute it, %s.",
      ms(unattributed), pct(unattributed, g.gpu_ns), counted_under_text(g), M.CAPTURE_HOWTO)
  end
  if d.capture and type(d.capture.notes) == "table" then
    for _, note in ipairs(d.capture.notes) do out[#out + 1] = "- Capture merge: " .. md.text(note) end
  end
  out[#out + 1] = ""
  return out
end

-- The attention (the sdpa analyzer's categories: SDPA_fwd / _bwd,
-- InferenceAttention) and MoE (moe_fused / moe_unfused) categories of the
-- report and the compute P-items they produced.
local ANALYZERS = { { "sdpa", "Attention", "SDPA, InferenceAttention" }, { "moe", "MoE", "moe_fused, moe_unfused" } }

local function analyzer_lines(d, ctx)
  local out = {}
  for _, a in ipairs(ANALYZERS) do
    local names, ops, ms_sum = {}, 0, 0
    for _, e in ipairs((ctx.manifest or {}).categories or {}) do
      if e.tier == "compute_kernel" and categories.agent(e.name) == a[1] then
        names[#names + 1] = md.text(e.display_name or e.name)
        ops, ms_sum = ops + (tonumber(e.ops_count) or 0), ms_sum + (tonumber(e.gpu_kernel_time_ms) or 0)
      end
    end
    local refs = {}
    for i, item in ipairs(ctx.items or {}) do
      if categories.agent(item.category or "") == a[1] then
        refs[#refs + 1] = string.format("P%d %s", i, md.one_line(item.title or "")) -- titles are Markdown already
      end
    end
    local line
    if #names > 0 then
      line = string.format("- %s (%s, the %s analyzer): %d %s, %.3f ms of GPU kernel time. ", a[2],
        table.concat(names, ", "), a[1], ops, plural(ops, "operation"), ms_sum)
      if #refs > 0 then
        line = line .. "Findings in Compute Kernel Optimizations: " .. table.concat(refs, "; ") .. "."
      else
        line = line .. "No P-item in Compute Kernel Optimizations comes from it."
      end
    else
      line = string.format("- %s: no operation of the report is in an %s category (%s)", a[2],
        a[2] == "MoE" and "MoE" or "attention", a[3])
      if d.graph.graph_ns > d.graph.attributed_ns then
        line = line .. "; kernels replayed by graphs without a captured op are in no such category"
      end
      line = line .. "."
    end
    out[#out + 1] = line
  end
  out[#out + 1] = ""
  return out
end

--- The "## Inference" section.
function M.section(d, ctx)
  ctx = ctx or {}
  local out = { "## Inference", "" }
  if ctx.comparative then
    out[#out + 1] = "> **Comparative Note:** this section describes Trace 1 (the trace being optimised)."
    out[#out + 1] = ""
  end
  if d.n == 0 then
    out[#out + 1] = "No iteration annotation was found (vLLM `execute_…`, SGLang `step[…]`, ATOM `prefill[…]` / "
      .. "`decode[…]`, diffusion `execute_diffusion_…`), so the trace is not split into iterations. vLLM adds them "
      .. "with `--profiler-config.detailed_trace_annotation True`, ATOM with `ATOM_ENABLE_DETAILED_ANNOTATION=1`, "
      .. "SGLang with the profile request's `detailed_annotations=True`."
    out[#out + 1] = ""
  else
    for _, part in ipairs({ iteration_lines(d), phase_lines(d), steady_lines(d) }) do
      for _, l in ipairs(part) do out[#out + 1] = l end
    end
  end
  for _, part in ipairs({ graph_lines(d), analyzer_lines(d, ctx) }) do
    for _, l in ipairs(part) do out[#out + 1] = l end
  end
  out[#out + 1] = "---"
  out[#out + 1] = ""
  return out
end

return M

-- orchestrator.lua — the standalone analysis of one trace:
--   perf report -> category data -> analyzers (in parallel) -> priority data
--   -> validation -> model identification -> chart -> analysis.md
--
--   tracelens run orchestrator.lua TRACE [options]     (see usage() below)
--
-- The steps follow the reference's analysis orchestrator (shared spec
-- agents-and-report.md §1); every number comes from the C core or from the
-- shared Lua library (lua/tracelens/*), the words from the analyzers in
-- agents/ and the user rules in rules/ (docs/rules.md).
local json = require "tracelens.json"
local prepare = require "tracelens.prepare"
local categories = require "tracelens.categories"
local priority = require "tracelens.priority"
local cpu_idle = require "tracelens.cpu_idle"
local multi_kernel = require "tracelens.multi_kernel"
local fusion = require "tracelens.fusion"
local validate = require "tracelens.validate"
local plot = require "tracelens.plot"
local report_md = require "tracelens.report_md"
local runner = require "tracelens.runner"

local USAGE = [[
usage: tracelens run orchestrator.lua TRACE [options]
       tracelens run orchestrator.lua TRACE --compare TRACE2 [options]

Runs the full analysis of a PyTorch profiler (Kineto) trace: the perf report,
the category data, every analyzer and user rule (in parallel), the priority
ranking, the chart and a prioritised report OUT/analysis.md. With --compare,
TRACE is the baseline being optimised and TRACE2 the reference it is compared
with: both perf reports are written (perf_report_trace1* with the TraceDiff
columns and diff_stats, perf_report_trace2*) and the report explains where
trace 1 loses time against trace 2.

options:
  -o, --output DIR   output directory (default: <trace dir>/analysis_output)
  --platform NAME    GPU platform of the shipped arch files (MI300X, MI325X,
                     MI355X, H100, H200, B200, A100); default: detected from
                     the trace's deviceProperties (the report says which)
  --arch FILE        a custom arch JSON file instead of --platform
  --compare TRACE2   the comparative analysis against TRACE2
  --platform2 NAME   the name of trace 2's GPU in the report (default: detected
                     from TRACE2, else "Trace 2"); both reports use the
                     roofline of --platform, as the reference does
  --rules DIR        also run the rule scripts DIR/*.lua (repeatable; the
                     directory ./rules is used when it exists)
  --no-rules         do not run any user rule
  -j, --jobs N       analyzers run at once (default: one per core)
  --timeout S        wall-clock limit per analyzer in seconds (default 120)
  --memory-mb M      Lua heap limit per analyzer (default 1024)
  --inference        inference-mode analysis (not yet supported)
  -q, --quiet        no progress on stderr
  -h, --help         this text
]]

local function fail(msg, code)
  io.stderr:write("orchestrator: ", msg, "\n")
  os.exit(code or 2, true) -- closing the state waits for report files being written
end

local function parse_args(argv)
  local o = { rules = {}, jobs = nil, timeout = 120, memory_mb = 1024, use_default_rules = true }
  local i = 1
  local function value(flag)
    i = i + 1
    if argv[i] == nil then fail(flag .. " needs a value\n" .. USAGE) end
    return argv[i]
  end
  while i <= #argv do
    local a = argv[i]
    if a == "-h" or a == "--help" then
      io.write(USAGE)
      os.exit(0)
    elseif a == "-o" or a == "--output" or a == "--output-dir" then o.out = value(a)
    elseif a == "--platform" then o.platform = value(a)
    elseif a == "--arch" then o.arch = value(a)
    elseif a == "--compare" then o.compare = value(a)
    elseif a == "--platform2" then o.platform2 = value(a)
    elseif a == "--rules" then o.rules[#o.rules + 1] = value(a)
    elseif a == "--no-rules" then o.use_default_rules, o.no_rules = false, true
    elseif a == "-j" or a == "--jobs" then o.jobs = tonumber(value(a)) or fail("-j needs a number")
    elseif a == "--timeout" then o.timeout = tonumber(value(a)) or fail("--timeout needs seconds")
    elseif a == "--memory-mb" then o.memory_mb = tonumber(value(a)) or fail("--memory-mb needs a number")
    elseif a == "--inference" then
      fail("--inference: the inference-mode analysis is not yet supported; run without it for the standard analysis")
    elseif a == "-q" or a == "--quiet" then o.quiet = true
    elseif a:sub(1, 1) == "-" then fail("unknown option " .. a .. "\n" .. USAGE)
    elseif not o.trace then o.trace = a
    else fail("unexpected argument " .. a .. "\n" .. USAGE) end
    i = i + 1
  end
  if not o.trace then fail("no trace given\n" .. USAGE) end
  if o.platform and o.arch then fail("--platform and --arch are mutually exclusive") end
  if not o.out then
    local dir = o.trace:match("^(.*)/[^/]*$") or "."
    o.out = dir .. "/analysis_output"
  end
  return o
end

local t_start = tl.now()
local function progress(opts, fmt, ...)
  if not opts.quiet then io.stderr:write(string.format("[%6.2fs] ", tl.now() - t_start), string.format(fmt, ...), "\n") end
end

local read_file = tl.fs.read_file

local function write_json(path, v) tl.fs.write_file(path, json.encode(v)) end

local LOAD_OPTS = { include_call_stack = true, enable_pseudo_ops = true }

-- A copy of the options table base with the fields of extra set too.
local function with(base, extra)
  local t = {}
  for k, v in pairs(base) do t[k] = v end
  for k, v in pairs(extra) do t[k] = v end
  return t
end

-- The error of a tl.parallel task without the chunk's position (the task's
-- code is a one-line string; the message after it names the file).
local function task_error(r)
  return (tostring(r.error):gsub('^%[string "[^"]*"%]:%d+: ', ""))
end

-- The trace(s): as the reference's Step 1 and orchestrator_prepare, python
-- functions in the tree and pseudo ops on (the trace walks see them too). Two
-- traces load at once, each in its own state (the handles are shared back).
local function load_traces(opts)
  if not opts.compare then
    progress(opts, "loading %s", opts.trace)
    local ok, t = pcall(tl.load, opts.trace, with(LOAD_OPTS, { progress = not opts.quiet }))
    if not ok then fail(tostring(t), 1) end
    return t
  end
  progress(opts, "loading %s and %s", opts.trace, opts.compare)
  -- each load scans on half the cores: two loads that each split the file
  -- over every core would only contend (and pay for joining the parts)
  local lo = with(LOAD_OPTS, { threads = math.max(1, tl.cores() // 2) })
  local code = "local path, opts = ...; return tl.load(path, opts)"
  local r = tl.parallel({ { code = code, args = { opts.trace, lo }, name = "load trace 1" },
    { code = code, args = { opts.compare, lo }, name = "load trace 2" } }, { jobs = 2 })
  for i = 1, 2 do
    if not r[i].ok then fail(task_error(r[i]), 1) end -- "FILE: byte N (event K): ..." as tl.load says
  end
  return r[1].value, r[2].value
end

-- The perf report(s). Comparative: trace 1's with the TraceDiff columns and
-- diff_stats, trace 2's plain, both with the one platform, built side by side.
local function perf_reports(trace, trace2, ro)
  if not trace2 then return trace:report(ro) end
  local code = "local t, o = ...; return t:report(o)"
  local o1 = with(ro, { compare = trace2 })
  local r = tl.parallel({ { code = code, args = { trace, o1 }, name = "report trace 1" },
    { code = code, args = { trace2, ro }, name = "report trace 2" } }, { jobs = 2 })
  for i = 1, 2 do
    if not r[i].ok then fail(task_error(r[i]), 1) end
  end
  return r[1].value, r[2].value
end

-- The perf report files (perf_report_csvs/ + perf_report.xlsx; comparative:
-- perf_report_trace1* and perf_report_trace2*) are written on threads of
-- their own while the analysis goes on (it reads the tables, not the files);
-- the returned function waits for them.
local function write_perf_reports(out, sheets, sheets2)
  local jobs = {}
  if not sheets2 then
    jobs[1] = tl.write_report(sheets, out, { background = true })
  else
    jobs[1] = tl.write_report(sheets, out, { name = "perf_report_trace1", background = true })
    jobs[2] = tl.write_report(sheets2, out, { name = "perf_report_trace2", background = true })
  end
  return function()
    for _, job in ipairs(jobs) do
      local ok, err = pcall(job.wait, job)
      if not ok then fail(tostring(err), 1) end
    end
  end
end

local function main(argv)
  local opts = parse_args(argv)
  local warnings = {}
  local function warn(msg)
    warnings[#warnings + 1] = msg
    progress(opts, "warning: %s", msg)
  end
  local timings = {}
  local function timed(name, fn)
    local t0 = tl.now()
    local r = table.pack(fn())
    timings[#timings + 1] = { name, tl.now() - t0 }
    return table.unpack(r, 1, r.n)
  end

  -- Step 1: load and the perf report (written as the reference's layout)
  local scope = opts.compare and "comparative" or "standalone"
  local trace, trace2 = timed("load", function() return load_traces(opts) end)
  local plat = trace:platform({ platform = opts.platform, arch = opts.arch })
  if not plat.path then
    fail("no GPU platform: " .. plat.how .. ". Name one with --platform (MI300X, MI325X, MI355X, H100, H200, "
      .. "B200, A100) or give an arch file with --arch FILE", 2)
  end
  local arch = json.decode(assert(read_file(plat.path), "cannot read " .. plat.path))
  local platform = opts.platform or plat.name
  progress(opts, "%s", plat.how)
  local report_opts = { platform = opts.platform, arch = opts.arch, group_by_num_kernels = true,
    include_call_stack = true }
  local sheets, sheets2 = timed("perf report", function() return perf_reports(trace, trace2, report_opts) end)
  tl.fs.mkdir(opts.out) -- once the reports are built: a failed run leaves no empty directory
  local wait_perf_reports = write_perf_reports(opts.out, sheets, sheets2)
  local platform2 = trace2 and (opts.platform2 or trace2:platform().name or "Trace 2")

  -- Steps 2-5: category data
  local mk_data = timed("multi-kernel data", function() return multi_kernel.data(trace) end)
  local candidates = timed("fusion candidates", function()
    if trace2 then return fusion.candidates_comparative(trace, sheets.diff_stats) end
    return fusion.candidates(trace, sheets.unified_perf_summary)
  end)
  local prep = timed("category data", function()
    return prepare.run({ out_dir = opts.out, trace_path = opts.trace, platform = platform, arch = arch,
      scope = scope, sheets = sheets, sheets2 = sheets2, multi_kernel_data = mk_data, fusion_candidates = candidates,
      log = function(msg) progress(opts, "%s", msg) end })
  end)
  local manifest, util = prep.manifest, prep.util
  local in_manifest = {}
  for _, e in ipairs(manifest.categories) do in_manifest[e.name] = e end
  local manifest_text = json.encode(manifest)

  -- System metrics computed here (small), so the analyzers only render.
  local metrics_files = {}
  local function keep_metrics(name, obj, written)
    local file = name .. "_metrics.json"
    if not written then write_json(opts.out .. "/category_data/" .. file, obj) end
    metrics_files[#metrics_files + 1] = { file = file, metrics = obj }
  end
  keep_metrics("cpu_idle", cpu_idle.metrics(sheets))
  local mk_metrics
  if in_manifest.multi_kernel or util.exposed_comm_time_percent > 0 or util.exposed_memcpy_time_percent > 0 then
    mk_metrics = multi_kernel.analyze(mk_data, sheets.gpu_timeline)
    keep_metrics("multi_kernel", mk_metrics)
  end
  -- the fusion numbers are always computed (NO_DATA without candidates): the
  -- compute analyzers read their kernel map; the analyzer runs only when the
  -- manifest lists kernel_fusion (a non-empty candidate list)
  local kf_metrics = fusion.analyze(candidates, { baseline_ms = util.total_time_ms, scope = scope,
    platform = platform, peak_hbm_bw_tbs = arch.mem_bw_gbps / 1000, max_achievable_tflops = arch.max_achievable_tflops,
    unified = sheets.unified_perf_summary })
  keep_metrics("kernel_fusion", kf_metrics)
  local fusion_map = kf_metrics.high_confidence_kernel_map and json.encode(kf_metrics.high_confidence_kernel_map)

  -- Steps 6-7: the analyzers and user rules, all at once
  local tasks = runner.tasks({
    out_dir = opts.out, scope = scope, manifest_text = manifest_text, manifest = manifest, util = util,
    compute = prep.compute, fusion_map = fusion_map, sheets = sheets, trace = trace,
    mk_data = mk_data, mk_metrics = mk_metrics, kf_metrics = in_manifest.kernel_fusion and kf_metrics,
    candidates = candidates,
    cpu_idle_metrics = metrics_files[1].metrics, rule_dirs = runner.rule_dirs(opts),
    nn_modules = prepare.model_identification_data(opts.out, sheets.unified_perf_summary),
    metadata_of = prep.metadata_of,
  }, warn)
  progress(opts, "running %d analyzers", #tasks)
  local outcome = timed("analyzers", function()
    return runner.run(tasks, { jobs = opts.jobs, timeout = opts.timeout, memory_mb = opts.memory_mb,
      out_dir = opts.out, scope = scope }, warn)
  end)
  for _, m in ipairs(outcome.metrics) do keep_metrics(m.name, m.metrics, true) end

  -- Step 7.5: priority data; Step 8: the analyzers' outputs checked
  local prio = timed("priority data", function()
    local ok, p = pcall(priority.build, manifest, metrics_files)
    if not ok then
      warn("priority data: " .. tostring(p))
      return priority.empty()
    end
    return p
  end)
  write_json(opts.out .. "/priority_data.json", prio)
  local ok2, level2 = pcall(validate.validate_subagent_outputs, opts.out)
  for _, name in ipairs(ok2 and level2 and { "time_check", "coverage_check", "priority_check" } or {}) do
    local c = level2[name]
    if c and c.status ~= "PASS" then
      for _, msg in ipairs(c.messages or {}) do progress(opts, "check %s: %s", name, msg) end
    end
  end

  -- Step 9: model identification
  local model_info = json.decode(read_file(opts.out .. "/metadata/model_info.json"))
  if outcome.model_info then
    model_info = outcome.model_info
    write_json(opts.out .. "/metadata/model_info.json", model_info)
  end
  local model = model_info.model
  if model == nil or model == "Cannot be inferred from trace" then model = "Workload" end

  -- Step 10: the chart
  timed("chart", function()
    local ok, err = pcall(plot.generate_perf_plot, opts.out, string.format("%s on %s — Performance Breakdown", model,
      platform), manifest)
    if not ok then warn("chart: " .. tostring(err)) end
  end)

  -- Step 11: analysis.md, checked, with the chart embedded
  local metrics_by_cat = {}
  for _, m in ipairs(metrics_files) do metrics_by_cat[m.metrics.category or m.file:gsub("_metrics%.json$", "")] = m.metrics end
  local text = timed("analysis.md", function()
    return report_md.render({ scope = scope, manifest = manifest, priority = prio,
      findings = outcome.findings, failed = outcome.failed, metrics = metrics_by_cat, model_info = model_info,
      arch = arch, platform = platform, platform2 = platform2, platform_note = plat.how, warnings = warnings })
  end)
  local report_path = opts.out .. "/analysis.md"
  tl.fs.write_file(report_path, text)
  pcall(plot.embed_plot_in_report, opts.out, "analysis.md", "{{PERF_PLOT}}")
  local passed, messages = validate.validate_report(opts.out, scope)
  for _, msg in ipairs(messages or {}) do progress(opts, "report check: %s", msg) end
  timed("perf report files", wait_perf_reports)
  if trace2 then
    progress(opts, "perf reports written to %s/perf_report_trace1_csvs and perf_report_trace2_csvs", opts.out)
  else
    progress(opts, "perf report written to %s/perf_report_csvs", opts.out)
  end

  -- Summary
  local total = tl.now() - t_start
  io.write(string.format("analysis: %s\n", report_path))
  io.write(string.format("  platform: %s\n", plat.how))
  io.write(string.format("  findings: %d compute, %d analyzers failed, report checks %s\n", #prio.findings,
    #outcome.failed, passed and "passed" or "FAILED"))
  if not opts.quiet then
    for _, t in ipairs(timings) do io.stderr:write(string.format("  %-20s %7.3f s\n", t[1], t[2])) end
    io.stderr:write(runner.concurrency_note(outcome), "\n")
    io.stderr:write(string.format("  %-20s %7.3f s\n", "total", total))
  end
  return passed and 0 or 1
end

os.exit(main(arg))

-- orchestrator.lua — the standalone analysis of one trace:
--   perf report -> category data -> analyzers (in parallel) -> priority data
--   -> validation -> model identification -> chart -> analysis.md
--
--   tracelens run orchestrator.lua TRACE [options]     (see usage() below)
--
-- The steps follow the reference's analysis orchestrator (shared spec
-- agents-and-report.md §1); every number comes from the C core or from the
-- shared Lua library (lua/tracelens/*), the words from the analyzers in
-- agents/ and the rules (--rules DIR, else the shipped rules/; docs/rules.md).
--
-- Owns the command line (options checked before the trace is loaded), the
-- one-line errors (`tracelens: ...`, exit 2 for usage errors), and OUT: the
-- analysis is written into a staging directory next to OUT that replaces it
-- whole at the end (docs/analysis.md, "Options, errors and the output
-- directory"), with metadata/tracelens_run.json naming its files.
local json = require "tracelens.json"
local prepare = require "tracelens.prepare"
local categories = require "tracelens.categories"
local priority = require "tracelens.priority"
local cpu_idle = require "tracelens.cpu_idle"
local multi_kernel = require "tracelens.multi_kernel"
local fusion = require "tracelens.fusion"
local fusion_choose = require "tracelens.fusion.choose"
local validate = require "tracelens.validate"
local plot = require "tracelens.plot"
local report_md = require "tracelens.report_md"
local shared_regions = require "tracelens.shared_regions"
local runner = require "tracelens.runner"
local inference = require "tracelens.inference"
local ranks_md = require "tracelens.ranks_md"

local USAGE = [[
usage: tracelens run orchestrator.lua TRACE [options]
       tracelens run orchestrator.lua TRACE --compare TRACE2 [options]
       tracelens run orchestrator.lua TRACE --inference [--capture_folder DIR] [options]
       tracelens run orchestrator.lua --ranks DIR [--rank R] [options]
       tracelens run orchestrator.lua --trace_glob G [--rank_regex R] [--rank R] [options]

Runs the full analysis of a PyTorch profiler (Kineto) trace: the perf report,
the category data, every analyzer and user rule (in parallel), the priority
ranking, the chart and a prioritised report OUT/analysis.md. With --compare,
TRACE is the baseline being optimised and TRACE2 the reference it is compared
with: both perf reports are written (perf_report_trace1* with the TraceDiff
columns and diff_stats, perf_report_trace2*) and the report explains where
trace 1 loses time against trace 2. With --ranks, DIR holds one trace per rank
(rank<i>_trace.json[.gz], as `tracelens ranks DIR`; with --trace_glob, the
files a glob matches, each rank from --rank_regex on its name): OUT gets the
collective report of all ranks (collective_report_csvs/) and the standalone
analysis of one representative rank, with a Multi-rank section on top (the
straggler, the slowest collectives and their bus bandwidth, the imbalance
between ranks).

OUT is written whole: the analysis goes into a staging directory next to it
and replaces OUT at the end, so nothing of an earlier analysis is left in it.
An existing OUT must be empty or hold only what tracelens writes there.

options:
  -o, --output DIR   output directory (default: <trace dir>/<trace name>_analysis,
                     <trace name>_vs_<trace2 name>_analysis with --compare,
                     DIR_analysis with --ranks DIR; with --trace_glob, -o is
                     required)
  --ranks DIR        the multi-rank analysis of the rank traces in DIR (no TRACE)
  --trace_glob G     the same of the files G matches ('**' crosses
                     directories), as `tracelens ranks --trace_glob G`
  --rank_regex R     with --trace_glob: the rank in a file name (default
                     rank[\[\-_/]?(?P<rank>\d+), the named group rank)
  --rank R           with --ranks: the rank analysed in full (default: the
                     median rank by mean step wall time, by GPU busy time when
                     a rank has no ProfilerStep annotations)
  --world_size N     with --ranks: the number of ranks, 0..N-1 (default: the
                     files found; as `tracelens ranks --world_size`)
  --gpus_per_node G  with --ranks: GPUs per node, for the node columns
                     (default: rank 0's deviceProperties count)
  --rank-from WHAT   with --ranks: name (the default: the rank from the file
                     name, checked against distributedInfo.rank) or distinfo
                     (from distributedInfo.rank; --trace_glob files need no
                     rank in their names)
  --platform NAME    GPU platform of the shipped arch files (arch/*.json:
                     MI300X, H100, V100-SXM2, L40S, ...), or none for no
                     roofline; default: detected from the trace's
                     deviceProperties (the report says which). A GPU with no
                     arch file is analysed without efficiency figures
  --arch FILE        a custom arch JSON file instead of --platform
  --compare TRACE2   the comparative analysis against TRACE2
  --platform2 NAME   the name of trace 2's GPU in the report (default: detected
                     from TRACE2, else the name it reports, else "Unknown
                     GPU"); both reports use the roofline of --platform, as
                     the reference does
  --rules DIR        run the rule scripts DIR/*.lua (repeatable) instead of
                     the rules shipped with tracelens; a rules/ folder in the
                     current directory is not run unless named here
  --no-rules         do not run any rule
  -j, --jobs N       analyzers run at once, 1-4096 (default: one per core)
  --timeout S        wall-clock limit per analyzer in seconds, more than 0 and
                     at most 604800 (default 120)
  --memory-mb M      Lua heap limit per analyzer in MB, 1-1048576 (default 1024)
  --max-value-mb N   the largest single JSON value (a string, an event) a
                     trace may hold, in MiB, 1-4095 (default 64)
  --inference        the analysis of a serving trace (vLLM, SGLang, ATOM, xDiT):
                     the inference perf report (op sheets by parent module)
                     and an Inference section in analysis.md: per-iteration
                     time, phases, batch sizes and requests from the
                     iteration annotations, the steady-state window, the
                     GPU time of graph replays and how much of it is
                     attributed to named ops, attention and MoE findings
  --capture_folder DIR
                     with --inference: the capture traces of the graphs the
                     trace replays (merged under each graph launch, so the
                     replayed kernels get ops, shapes and module stacks).
                     When DIR has no execution_details.json it is classified
                     and written there, as the reference does; nothing else
                     in DIR is changed
  --comparison_capture_folder DIR
                     with --inference --compare: the capture folder of TRACE2
  --extension-file F.lua
                     a report extension module (extra op categories, perf
                     models and sheets; docs/report-columns.md) for the perf
                     report(s) [--extension_file]
  -q, --quiet        no progress on stderr; stdout holds only the summary
  -v, --verbose      also the analyzers' checks, the trace-quality notes and
                     the time of each step
  -h, --help         this text
]]

local HELP_HINT = "see `tracelens run orchestrator.lua --help`"
local MAX_JOBS, MAX_TIMEOUT_S, MAX_MEMORY_MB, MAX_VALUE_MB = 4096, 7 * 24 * 3600, 1024 * 1024, 4095

-- Every error of the orchestrator is raised as a Failure and printed once,
-- as one line "tracelens: ...", by the handler at the bottom of this file
-- (which also removes the staging directory). Exit status 2: a usage error
-- or an option value that cannot work; 1: anything else.
local Failure = {}
local function fail(msg, code) error(setmetatable({ msg = msg, code = code or 1 }, Failure), 0) end
local function usage(msg) fail(msg .. " (" .. HELP_HINT .. ")", 2) end

-- A whole number from 1 to max, or a usage error.
local function count_arg(flag, s, max)
  local n = tonumber(s)
  if not n or n ~= n or n % 1 ~= 0 or n < 1 or n > max then
    usage(string.format("%s %s: expected a whole number from 1 to %d", flag, s, max))
  end
  return math.tointeger(n)
end

-- A number of seconds above 0 and at most max, or a usage error.
local function seconds_arg(flag, s, max)
  local n = tonumber(s)
  if not n or n ~= n or n <= 0 or n > max then
    usage(string.format("%s %s: expected seconds above 0 and at most %d", flag, s, max))
  end
  return n
end

local function parse_args(argv)
  local o = { rules = {}, jobs = nil, timeout = 120, memory_mb = 1024 }
  local i = 1
  local function value(flag)
    i = i + 1
    if argv[i] == nil then usage(flag .. " needs a value") end
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
    elseif a == "--no-rules" then o.no_rules = true
    elseif a == "-j" or a == "--jobs" then o.jobs = count_arg(a, value(a), MAX_JOBS)
    elseif a == "--timeout" then o.timeout = seconds_arg(a, value(a), MAX_TIMEOUT_S)
    elseif a == "--memory-mb" then o.memory_mb = count_arg(a, value(a), MAX_MEMORY_MB)
    elseif a == "--max-value-mb" then o.max_value_mb = count_arg(a, value(a), MAX_VALUE_MB)
    elseif a == "--inference" then o.inference = true
    elseif a == "--ranks" then o.ranks = value(a)
    elseif a == "--trace_glob" or a == "--trace-glob" then o.trace_glob = value(a)
    elseif a == "--rank_regex" or a == "--rank-regex" then o.rank_regex = value(a)
    elseif a == "--world_size" or a == "--world-size" then o.world_size = count_arg(a, value(a), 1000000)
    elseif a == "--gpus_per_node" or a == "--gpus-per-node" then o.gpus_per_node = count_arg(a, value(a), 1000000)
    elseif a == "--rank-from" or a == "--rank_from" then
      o.rank_from = value(a)
      if o.rank_from ~= "name" and o.rank_from ~= "distinfo" then
        usage("--rank-from takes name or distinfo, got " .. o.rank_from)
      end
    elseif a == "--rank" then
      local r = math.tointeger(tonumber(value(a)))
      if not r or r < 0 or r > 1000000 then
        usage(string.format("--rank %s: expected a rank from 0 to 1000000", argv[i]))
      end
      o.rank = r
    elseif a == "--capture_folder" or a == "--capture-folder" then o.capture_folder = value(a)
    elseif a == "--comparison_capture_folder" or a == "--comparison-capture-folder" then
      o.comparison_capture_folder = value(a)
    elseif a == "-q" or a == "--quiet" then o.quiet = true
    elseif a == "-v" or a == "--verbose" then o.verbose = true
    elseif a == "--extension-file" or a == "--extension_file" then o.extension = value(a)
    elseif a:sub(1, 1) == "-" and a ~= "-" then usage("unknown option " .. a)
    elseif not o.trace then o.trace = a
    else usage("unexpected argument " .. a) end
    i = i + 1
  end
  if o.rank_regex and not o.trace_glob then usage("--rank_regex needs --trace_glob") end
  if o.ranks and o.trace_glob then usage("--ranks and --trace_glob are mutually exclusive") end
  if o.trace_glob then
    if not o.out then usage("--trace_glob needs -o OUT") end
    o.ranks = o.trace_glob -- where the rank traces come from, as said in analysis.md
  end
  if o.ranks then
    if o.trace then usage("--ranks takes the rank traces from DIR: give no TRACE") end
    if o.compare or o.inference then usage("--ranks cannot be combined with --compare or --inference") end
    o.ranks = o.ranks:gsub("(.)/+$", "%1")
    if not o.out then o.out = o.ranks .. "_analysis" end
  else
    for _, f in ipairs({ { "rank", "--rank" }, { "world_size", "--world_size" },
      { "gpus_per_node", "--gpus_per_node" }, { "rank_from", "--rank-from" } }) do
      if o[f[1]] then usage(f[2] .. " needs --ranks or --trace_glob") end
    end
  end
  if not o.trace and not o.ranks then usage("no trace given") end
  if o.platform and o.arch then usage("--platform and --arch are mutually exclusive") end
  if o.no_rules and #o.rules > 0 then usage("--rules and --no-rules are mutually exclusive") end
  if o.capture_folder and not o.inference then usage("--capture_folder needs --inference") end
  if o.comparison_capture_folder and not (o.inference and o.compare) then
    usage("--comparison_capture_folder needs --inference and --compare")
  end
  if o.quiet and o.verbose then usage("--quiet and --verbose are mutually exclusive") end
  if not o.out then -- one directory per trace (pair): runs of other traces do not mix
    local function stem(path)
      local base = path:match("([^/]*)$")
      return (base:gsub("%.gz$", ""):gsub("%.json$", ""):gsub("%.pt%.trace$", ""))
    end
    local dir = o.trace:match("^(.*)/[^/]*$")
    local name = stem(o.trace)
    if o.compare then name = name .. "_vs_" .. stem(o.compare) end
    o.out = (dir and dir .. "/" or "") .. (name ~= "" and name or "trace") .. "_analysis"
  end
  return o
end

-- Option checks that need no trace ----------------------------------------------

-- Where the shipped arch files are: $TRACELENS_ARCH_DIR, else arch/ next to lua/.
local function arch_dir() return os.getenv("TRACELENS_ARCH_DIR") or runner.project_dir("arch") end

-- --platform NAME among the shipped arch files (the directory tracelens
-- reads them from: $TRACELENS_ARCH_DIR, else arch/ next to lua/); --arch
-- FILE a readable file. The library checks both again when it loads them.
local function check_platform(opts)
  if opts.arch then
    local kind = tl.fs.kind(opts.arch)
    if kind ~= "file" then
      fail("--arch " .. opts.arch .. ": " .. (kind and "not a file" or "no such file"), 2)
    end
  end
  if not opts.platform or opts.platform:lower() == "none" then return end
  local dir = arch_dir()
  local names = tl.fs.listdir(dir)
  if not names then return end -- no arch directory here: the library says what it finds
  local available = {}
  for _, f in ipairs(names) do
    local stem = f:match("^([^.].*)%.json$")
    if stem then
      if stem:lower() == opts.platform:lower() then return end
      available[#available + 1] = stem
    end
  end
  fail(string.format("--platform %s: unknown GPU platform (available: %s)", opts.platform,
    table.concat(available, ", ")), 2)
end

-- What the orchestrator writes at the top of OUT: an existing OUT holding
-- only these (or nothing) is a previous analysis and is replaced whole.
local OWN_ENTRIES = { ["analysis.md"] = true, category_data = true, category_findings = true, system_findings = true,
  metadata = true, ["priority_data.json"] = true, ["perf_improvement.png"] = true,
  ["perf_improvement_base64.txt"] = true, collective_report_csvs = true }
for _, base in ipairs({ "perf_report", "perf_report_trace1", "perf_report_trace2" }) do
  OWN_ENTRIES[base .. ".xlsx"], OWN_ENTRIES[base .. "_csvs"] = true, true
end

local function parent_of(path)
  local parent = path:match("^(.*)/[^/]*$")
  if parent == nil then return "." end
  if parent == "" then return "/" end
  return parent
end

-- Why an existing OUT cannot be replaced, or nil (it is absent, empty, or a
-- previous analysis). Links are not followed: a link at OUT is refused.
local function replace_refusal(path, given)
  local kind = tl.fs.lkind(path)
  if kind == nil then return nil end
  if kind == "link" then return given .. ": is a symbolic link; give the directory itself" end
  if kind ~= "directory" then return given .. ": exists and is not a directory" end
  local names, err = tl.fs.listdir(path)
  if not names then return err end
  for _, n in ipairs(names) do
    if not OWN_ENTRIES[n] then
      return string.format("%s: exists and holds %s, which tracelens does not write; choose another directory "
        .. "or remove it", given, n)
    end
  end
  return nil
end

-- -o OUT: a name (not . or ..) whose existing directory may be replaced,
-- under a parent that exists (or can be created) and is writable (tried by
-- creating and removing a staging directory in the nearest existing
-- ancestor). Returns {path, parent, name}.
local function check_output(opts)
  local path = opts.out:gsub("(.)/+$", "%1")
  local name = path:match("([^/]+)$")
  if not name or name == "." or name == ".." then
    fail("-o " .. opts.out .. ": give the output directory by its name (not /, . or ..)", 2)
  end
  local why = replace_refusal(path, "-o " .. opts.out)
  if why then fail(why, 2) end
  local parent = parent_of(path)
  local probe = parent
  while tl.fs.lkind(probe) == nil and probe ~= "." and probe ~= "/" do probe = parent_of(probe) end
  if tl.fs.kind(probe) ~= "directory" then fail(string.format("-o %s: %s is not a directory", opts.out, probe), 2) end
  local ok, stage = pcall(tl.fs.stage_open, probe)
  if not ok then fail(string.format("-o %s: %s", opts.out, tostring(stage)), 1) end
  tl.fs.remove_tree(stage)
  return { path = path, parent = parent, name = name }
end

local t_start = tl.now()
local function say(opts, fmt, ...)
  -- one line each: names from the trace in a message cannot break it
  local msg = string.format(fmt, ...):gsub("%c", " ")
  io.stderr:write(string.format("[%6.2fs] ", tl.now() - t_start), msg, "\n")
end
-- Details (analyzer checks, trace-quality notes) only with --verbose.
local function detail(opts, fmt, ...)
  if opts.verbose then say(opts, fmt, ...) end
end
local function progress(opts, fmt, ...)
  if not opts.quiet then
    -- one line each: names from the trace in a message cannot break it
    local msg = string.format(fmt, ...):gsub("%c", " ")
    io.stderr:write(string.format("[%6.2fs] ", tl.now() - t_start), msg, "\n")
  end
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
    local ok, t = pcall(tl.load, opts.trace, with(LOAD_OPTS, { progress = not opts.quiet,
      max_value_mb = opts.max_value_mb, capture_folder = opts.capture_folder }))
    if not ok then fail(tostring(t), 1) end
    return t
  end
  progress(opts, "loading %s and %s", opts.trace, opts.compare)
  if opts.capture_folder or opts.comparison_capture_folder then
    -- one after the other in this state: a capture folder without
    -- execution_details.json gets it written, as the reference does, and
    -- tasks (sandboxed) write no file
    local handles = {}
    for i, p in ipairs({ { opts.trace, opts.capture_folder }, { opts.compare, opts.comparison_capture_folder } }) do
      local ok, t = pcall(tl.load, p[1], with(LOAD_OPTS, { max_value_mb = opts.max_value_mb, capture_folder = p[2] }))
      if not ok then fail(tostring(t), 1) end
      handles[i] = t
    end
    return handles[1], handles[2]
  end
  -- each load scans on half the cores: two loads that each split the file
  -- over every core would only contend (and pay for joining the parts)
  local lo = with(LOAD_OPTS, { threads = math.max(1, tl.cores() // 2), max_value_mb = opts.max_value_mb })
  local code = "local path, opts = ...; return tl.load(path, opts)"
  local lo1 = with(lo, { capture_folder = opts.capture_folder })
  local lo2 = with(lo, { capture_folder = opts.comparison_capture_folder })
  local r = tl.parallel({ { code = code, args = { opts.trace, lo1 }, name = "load trace 1" },
    { code = code, args = { opts.compare, lo2 }, name = "load trace 2" } }, { jobs = 2 })
  for i = 1, 2 do
    if not r[i].ok then fail(task_error(r[i]), 1) end -- "FILE: byte N (event K): ..." as tl.load says
  end
  return r[1].value, r[2].value
end

-- The perf report(s). Comparative: trace 1's with the TraceDiff columns and
-- diff_stats, trace 2's plain, both with the one platform, built side by side.
-- Returns a function that waits for them: the standalone report (without an
-- extension) builds in the background meanwhile; the others are built here.
-- The background report also gives its kernel sequences (the second
-- function: trace:kernel_sequences() without computing them again).
local function start_perf_reports(trace, trace2, ro)
  if not trace2 then
    if ro.extension then
      local sheets = trace:report(ro)
      return function() return sheets end
    end
    local job = trace:report(with(ro, { background = true }))
    return function() return job:wait() end, function() return job:kernel_sequences() end
  end
  -- an extension runs in a Lua state of its own, which tasks may not
  -- start: with one, the two reports are built one after the other here
  local s1, s2
  if ro.extension then
    s1, s2 = trace:report(with(ro, { compare = trace2 })), trace2:report(ro)
  else
    local code = "local t, o = ...; return t:report(o)"
    local o1 = with(ro, { compare = trace2 })
    local r = tl.parallel({ { code = code, args = { trace, o1 }, name = "report trace 1" },
      { code = code, args = { trace2, ro }, name = "report trace 2" } }, { jobs = 2 })
    for i = 1, 2 do
      if not r[i].ok then fail(task_error(r[i]), 1) end
    end
    s1, s2 = r[1].value, r[2].value
  end
  return function() return s1, s2 end
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

-- The staging directory of this run and the perf report writers still
-- running: what the error handler cleans up.
local run_state = {}

-- The rules to run, checked before the trace is loaded.
local function check_rules(opts)
  local dirs, err = runner.rule_dirs(opts)
  if not dirs then fail(err, 2) end
  local rules, why = runner.find_rules(dirs, runner.reserved_names())
  if not rules then fail(why, 2) end
  return rules
end

-- metadata/tracelens_run.json: which trace this directory analyses and
-- every findings and metrics file this run wrote (`tracelens validate`
-- fails on any other), the rules that ran and the run's id.
local RUN_FILE = "metadata/tracelens_run.json"
local function run_record(work, opts, scope, rules, run_id)
  local files = json.arr()
  for _, sub in ipairs({ { "category_findings", "_findings%.md$" }, { "system_findings", "_findings%.md$" },
    { "category_data", "_metrics%.json$" } }) do
    for _, f in ipairs(tl.fs.listdir(work .. "/" .. sub[1]) or {}) do
      if f:find(sub[2]) then files[#files + 1] = sub[1] .. "/" .. f end
    end
  end
  local list = json.arr()
  for i, r in ipairs(rules) do list[i] = json.obj("name", r.name, "path", r.path) end
  return json.obj("tool", "tracelens", "version", tl.VERSION, "run_id", run_id, "trace_path", opts.trace,
    "trace2_path", opts.compare or json.null, "comparison_scope", scope, "output_dir", opts.out, "rules", list,
    "files", files)
end

-- The trace's first deviceProperties entry (a table), or nil.
local function device_props(trace)
  local ok, info = pcall(trace.info, trace)
  local props = ok and type(info) == "table" and info.device_properties
  local first = type(props) == "table" and props[1]
  return type(first) == "table" and first or nil
end

-- The GPU name the trace's deviceProperties report, or nil (absent, empty).
local function device_name(trace)
  local first = device_props(trace)
  local name = first and first.name
  if type(name) ~= "string" then return nil end
  name = name:gsub("%c", " "):match("^%s*(.-)%s*$")
  return name ~= "" and name or nil
end

-- The shipped arch files whose GPU could be the trace's, by what its
-- deviceProperties say: the memory (totalGlobalMem within 6% of the file's
-- memory_gb, read as GiB) and the vendor (64-wide wavefronts: AMD, the MI
-- files; 32-wide warps: NVIDIA, the others). {names (file order), gib,
-- warp}, or nil when the trace gives no memory size.
-- The shipped arch files, by file name: {{stem =, arch = decoded table}, ...}
-- (a file that does not decode is left out).
local function shipped_archs()
  local dir = arch_dir()
  local files = tl.fs.listdir(dir) or {}
  table.sort(files)
  local out = {}
  for _, f in ipairs(files) do
    local stem = f:match("^([^.].*)%.json$")
    local aok, a = pcall(function() return json.decode(assert(read_file(dir .. "/" .. f))) end)
    if stem and aok and type(a) == "table" then out[#out + 1] = { stem = stem, arch = a } end
  end
  return out
end

local function arch_candidates(trace)
  local first = device_props(trace)
  local bytes = first and tonumber(first.totalGlobalMem)
  if not bytes or bytes <= 0 then return nil end
  local c = { names = {}, gib = bytes / 2 ^ 30, warp = tonumber(first.warpSize) }
  for _, f in ipairs(shipped_archs()) do
    local gb = tonumber(f.arch.memory_gb)
    local amd = f.stem:match("^MI") ~= nil
    if gb and math.abs(c.gib - gb) <= 0.06 * gb and (c.warp ~= 32 and c.warp ~= 64 or (c.warp == 64) == amd) then
      c.names[#c.names + 1] = f.stem
    end
  end
  return c
end

-- Without an arch file: for each compute spec, the lowest ridge point
-- (max-achievable or peak TFLOPS over HBM bandwidth, in FLOP/B) of the
-- shipped arch files that have it, with the file's name: an op whose
-- intensity is below it is memory-bound on every one of them
-- (prose.remedy.profile_unmodeled). {spec = {ridge =, name =}} or nil.
local function shipped_ridges()
  local out, any = {}, false
  for _, f in ipairs(shipped_archs()) do
    local a = f.arch
    local bw = tonumber(a.mem_bw_gbps)
    if bw and bw > 0 and type(a.max_achievable_tflops) == "table" then
      for spec, tf in pairs(a.max_achievable_tflops) do
        local ridge = tonumber(tf) and tonumber(tf) * 1000 / bw
        if ridge and ridge > 0 and (not out[spec] or ridge < out[spec].ridge) then
          out[spec], any = { ridge = ridge, name = f.stem }, true
        end
      end
    end
  end
  return any and out or nil
end

-- The one sentence of an analysis without an arch file; without
-- --platform, it adds the shipped arch files the GPU's memory and vendor
-- match (candidates: arch_candidates' result, or nil).
local function no_arch_sentence(device, platform, candidates)
  local what = device and string.format('the trace reports the GPU "%s"', device)
    or "the trace does not name its GPU (no deviceProperties name)"
  if platform then
    what = "with --platform " .. platform .. " there is no roofline (" .. what .. ")"
  elseif device then
    what = what .. ", for which tracelens has no arch file"
  end
  local s = "Efficiency against the GPU's peak needs --platform or --arch: " .. what .. ", so this analysis "
    .. "has no roofline figures and judges operations by their share of GPU time."
  local names = candidates and candidates.names or {}
  if platform or #names == 0 then return s end
  local shape = candidates.warp == 64 and " and 64-wide wavefronts" or candidates.warp == 32 and " and 32-wide warps"
    or ""
  local one = #names == 1
  return s .. string.format(" Its %.1f GiB of memory%s %s the arch file%s %s: if %s the GPU, --platform %s gives the "
    .. "roofline.", candidates.gib, shape, (shape == "" and "matches" or "match"), one and "" or "s",
    require("tracelens.prose").list(names), one and "that is" or "one of them is", one and names[1] or "NAME")
end

-- What the CPU/idle analyzer reads of the GPU feed figures (the idle_breakdown
-- sheet's `all` row): the idle time with launched work waiting to start.
local function idle_waits(feed)
  local all = feed and feed.all
  if not (all and all.queued_idle_us) then return nil end
  -- the busiest stream's host wait, and the part of it after a blocking call (the host drained the queue)
  local s = require("tracelens.gpu_feed").busiest(feed) or {}
  return { idle_ms = all.idle_us / 1000, queued_idle_ms = all.queued_idle_us / 1000,
    longest_queued = all.longest_queued, longest_queued_idle_ms = all.longest_queued_idle_us
      and all.longest_queued_idle_us / 1000,
    stream = s.stream, stream_idle_ms = s.idle_us and s.idle_us / 1000, host_wait_ms = s.host_wait_us
      and s.host_wait_us / 1000, host_sync_wait_ms = s.host_sync_wait_us and s.host_sync_wait_us / 1000,
    host_wait_gaps = s.host_wait_gaps, host_sync_wait_gaps = s.host_sync_wait_gaps,
    graph_share = feed.graph_share, compiled = feed.compiled, with_stack = feed.with_stack }
end

-- --capture_folder / --comparison_capture_folder: existing directories (what
-- they hold is checked when the trace is merged with them); exit 1 as
-- `tracelens report --inference` (bad input, not a usage error).
local function check_capture_folders(opts)
  for _, f in ipairs({ { "--capture_folder", opts.capture_folder },
    { "--comparison_capture_folder", opts.comparison_capture_folder } }) do
    if f[2] then
      local kind = tl.fs.kind(f[2])
      if kind ~= "directory" then
        fail(f[1] .. " " .. f[2] .. ": " .. (kind and "not a directory" or "no such directory"), 1)
      end
    end
  end
end

local function main(argv)
  local opts = parse_args(argv)
  -- everything that can be checked without the trace, before loading it
  check_platform(opts)
  check_capture_folders(opts)
  local rules = check_rules(opts)
  local dest = check_output(opts)

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
  -- --ranks: the collective report of every rank, then the representative
  -- rank is the trace analysed (docs/analysis.md "Multi-rank analysis")
  local ranks_inp
  if opts.ranks then
    progress(opts, "collective report of the ranks in %s", opts.ranks)
    local ropts = { world_size = opts.world_size, gpus_per_node = opts.gpus_per_node, rank_from = opts.rank_from }
    if opts.trace_glob then ropts.glob, ropts.rank_regex = opts.trace_glob, opts.rank_regex end
    local rok, rsheets, rlist = pcall(tl.ranks, not opts.trace_glob and opts.ranks or nil, ropts)
    if not rok then fail(tostring(rsheets), 1) end
    local rep, how = ranks_md.representative(rlist, opts.rank)
    if not rep then fail(how, 2) end
    opts.trace = rep.path
    ranks_inp = { dir = opts.ranks, sheets = rsheets, ranks = rlist, rep = rep, how = how }
    progress(opts, "rank %d is analysed in full (%s)", rep.rank, how)
  end
  local trace, trace2 = timed("load", function() return load_traces(opts) end)
  local pok, plat = pcall(trace.platform, trace, { platform = opts.platform, arch = opts.arch })
  if not pok then fail(tostring(plat), 2) end
  -- No arch file for the trace's GPU (or --platform none): the analysis runs
  -- without the roofline (no efficiency, no peaks; arch is nil) and says so
  -- once, in analysis.md and on stderr (docs/analysis.md, "Unknown GPUs").
  local arch, platform, no_arch_note
  if plat.path then
    local aok, a = pcall(function() return json.decode(assert(read_file(plat.path))) end)
    if not aok then fail(plat.path .. ": not a JSON arch file: " .. tostring(a), 2) end
    arch, platform = a, opts.platform or plat.name
  else
    local device = device_name(trace)
    platform = device or "Unknown GPU"
    no_arch_note = no_arch_sentence(device, opts.platform, arch_candidates(trace))
  end
  progress(opts, "%s", plat.how)
  local report_opts = { platform = opts.platform, arch = opts.arch, group_by_num_kernels = true,
    include_call_stack = true, extension = opts.extension }
  if opts.inference then -- the inference report (spec §1.6), op sheets by parent module
    report_opts.inference, report_opts.group_by_parent_module = true, true
  end
  -- the perf report builds on threads of its own while the trace's own
  -- figures below are computed (both only read the trace)
  local report_wait, report_sequences = start_perf_reports(trace, trace2, report_opts)
  -- the trace health check (docs/check.md) and the steps, for the Warnings and Steps sections
  -- (comparative: trace 2's too, so the Warnings cover both traces)
  local health_checks, steps, health_checks2, health_figures = timed("trace health", function()
    local health = require "tracelens.health"
    local checks, figures = health.checks(trace)
    return checks, trace:steps(), trace2 and health.checks(trace2) or nil, figures
  end)
  -- the critical path of the representative step, for the Critical Path line (issue 16)
  local cpath = timed("critical path", function() return require("tracelens.critical_path_md").data(trace, steps) end)
  -- copies are judged against the host link (the arch file's host_link_gbps, read
  -- by the C loader) and device-to-device ones against HBM
  local link = { name = plat.host_link, gbps = plat.host_link_gbps, hbm_gbps = arch and arch.mem_bw_gbps,
    source = arch and type(arch.figure_sources) == "table" and arch.figure_sources.host_link_gbps or nil }
  -- more of the trace's own figures while the report builds; their errors
  -- are raised where the figures are used, after the report's own
  local early = {}
  local function ahead(name, fn)
    early[name] = timed(name, function() return table.pack(pcall(fn)) end)
  end
  local function use(name)
    local r = early[name]
    if not r[1] then error(r[2], 0) end
    return table.unpack(r, 2, r.n)
  end
  ahead("multi-kernel data", function() return multi_kernel.data(trace, link) end)
  if not trace2 then
    if not report_sequences then -- else the report's, once it is built
      ahead("kernel sequences", function() return trace:kernel_sequences() end)
    end
  end
  -- comparative too: trace 1's own candidates are named when the traces differ in none
  ahead("fusion walks", function() return fusion.walks(trace) end)
  ahead("unlinked GPU work", function() return prepare.unlinked_gpu(trace) end)
  local sheets, sheets2 = timed("perf report", report_wait)
  -- said even with --quiet (the report's figures depend on it), once the
  -- report is built: a trace without GPU work gets only its one-line error
  if no_arch_note then io.stderr:write("tracelens: note: ", (no_arch_note:gsub("%c", " ")), "\n") end
  -- Everything is written into a staging directory next to OUT that
  -- replaces it at the end (once the reports are built: a failed load
  -- leaves nothing behind; a failure later removes the stage).
  local sok, stage = pcall(function()
    tl.fs.mkdir(dest.parent)
    return tl.fs.stage_open(dest.parent)
  end)
  if not sok then fail(tostring(stage), 1) end
  run_state.stage = stage
  local run_id = stage:match("%.tracelens%-([^/]*)$") or tostring(tl.now())
  local work = stage .. "/" .. dest.name
  tl.fs.mkdir(work)
  local wait_perf_reports = write_perf_reports(work, sheets, sheets2)
  run_state.wait = wait_perf_reports
  if ranks_inp then -- the ranks report's CSVs (no workbook), as `tracelens ranks DIR` writes them
    local wok, werr = pcall(tl.write_report, ranks_inp.sheets, work, { name = "collective_report", xlsx = false })
    if not wok then fail(tostring(werr), 1) end
    ranks_inp.arch, ranks_inp.platform = arch, platform
  end
  -- trace 2's GPU named as trace 1's: its arch file, else the name it reports, else "Unknown GPU"
  local platform2 = trace2 and (opts.platform2 or trace2:platform().name or device_name(trace2) or "Unknown GPU")
  -- trace 2's arch file, when it has one, for the cards' hardware context (its peaks against trace 1's)
  local arch2
  if trace2 then
    local pok2, plat2 = pcall(trace2.platform, trace2, { platform = opts.platform2 })
    local path2 = pok2 and type(plat2) == "table" and plat2.path
    local aok2, a2 = pcall(function() return path2 and json.decode(assert(read_file(path2))) end)
    if aok2 and type(a2) == "table" and tonumber(a2.mem_bw_gbps) then
      arch2 = { name = platform2, mem_bw_gbps = tonumber(a2.mem_bw_gbps), max_achievable_tflops = a2.max_achievable_tflops }
    end
  end

  -- Steps 2-5: category data
  local mk_data, copy_bw = use("multi-kernel data")
  write_json(work .. "/category_data/memcpy_bandwidth.json", copy_bw)
  local candidates = timed("fusion candidates", function()
    if trace2 then return fusion.candidates_comparative(trace, sheets.diff_stats) end
    return fusion.candidates(trace, sheets.unified_perf_summary, use("fusion walks"))
  end)
  -- issue 16: the GPU feed and memory lines (their figures from the perf
  -- report's sheets), and repeated short-kernel sequences as a fusion hint
  local feed, seq_hints = timed("gpu feed and kernel sequences", function()
    local seqs = not trace2 and (report_sequences and report_sequences() or use("kernel sequences"))
    local h = health_figures
    local facts = { graph_share = h and h.gpu_us > 0 and h.gpu_graph_us / h.gpu_us or 0,
      with_stack = h and h.python_functions > 0 }
    local graphs = facts.graph_share >= require("tracelens.gpu_feed").GRAPH_SHARE
    local lines = not trace2 and fusion.sequence_hints(seqs, candidates, graphs)
    return require("tracelens.gpu_feed").data(trace, arch, sheets, facts), lines or nil
  end)
  local prep = timed("category data", function()
    return prepare.run({ out_dir = work, record_dir = opts.out, trace_path = opts.trace, platform = platform,
      arch = arch, scope = scope, sheets = sheets, sheets2 = sheets2, multi_kernel_data = mk_data, trace = trace,
      trace2 = trace2, unlinked = use("unlinked GPU work"), fusion_candidates = candidates, log = function(msg, level)
        if level == "warn" then progress(opts, "%s", msg) else detail(opts, "%s", msg) end
      end })
  end)
  local manifest, util = prep.manifest, prep.util
  local in_manifest, category_names = {}, {}
  for _, e in ipairs(manifest.categories) do
    in_manifest[e.name] = e
    category_names[#category_names + 1] = e.name
  end
  -- a rule named like a category of this trace would replace its findings
  local reserved = runner.reserved_names(category_names)
  for _, r in ipairs(rules) do
    if reserved(r.name:lower()) then
      fail(string.format("rule %s: %s is the name of %s; rename the rule file", r.path, r.name,
        reserved(r.name:lower())), 2)
    end
  end
  local manifest_text = json.encode(manifest)

  -- System metrics computed here (small), so the analyzers only render.
  local metrics_files = {}
  local function keep_metrics(name, obj, written)
    local file = name .. "_metrics.json"
    if not written then write_json(work .. "/category_data/" .. file, obj) end
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
  -- each candidate kernel's stream and launching op (trace 1's), for the fusion rules
  local kf_facts = fusion.kernel_facts(trace, candidates)
  local kf_metrics, kf_not_estimated = fusion.analyze(candidates, { baseline_ms = util.total_time_ms, scope = scope,
    platform = platform, peak_hbm_bw_tbs = arch and arch.mem_bw_gbps and arch.mem_bw_gbps / 1000,
    max_achievable_tflops = arch and arch.max_achievable_tflops,
    unified = sheets.unified_perf_summary, kernel_facts = kf_facts })
  keep_metrics("kernel_fusion", kf_metrics)
  -- comparative: trace 1's own fusion candidates, as its standalone analysis
  -- reports them (same candidates, estimates and rules), for the report's text
  -- (nil when they cannot be had: the report then says where to find them)
  local own_fusion = trace2 and timed("trace 1 fusion candidates", function()
    local wok, walks = pcall(use, "fusion walks")
    if not wok then return nil end
    local own = fusion.candidates(trace, sheets.unified_perf_summary, walks)
    local own_facts = fusion.kernel_facts(trace, own)
    local m = fusion.analyze(own, { baseline_ms = util.total_time_ms, scope = "standalone", platform = platform,
      peak_hbm_bw_tbs = arch and arch.mem_bw_gbps and arch.mem_bw_gbps / 1000,
      max_achievable_tflops = arch and arch.max_achievable_tflops, unified = sheets.unified_perf_summary,
      kernel_facts = own_facts })
    return (fusion_choose.choose(m, own, false, own_facts))
  end) or nil
  -- the GPU events of each reported fusion estimate, for the consistency
  -- check (no event claimed twice)
  tl.fs.write_file(work .. "/category_data/kernel_fusion_gpu_events.json", fusion.gpu_events_file(kf_metrics))
  local fusion_map = kf_metrics.high_confidence_kernel_map and json.encode(kf_metrics.high_confidence_kernel_map)

  -- Steps 6-7: the analyzers and user rules, all at once
  local tasks = runner.tasks({
    out_dir = work, scope = scope, manifest_text = manifest_text, manifest = manifest, util = util,
    compute = prep.compute, fusion_map = fusion_map, sheets = sheets, trace = trace,
    mk_data = mk_data, mk_metrics = mk_metrics, kf_metrics = in_manifest.kernel_fusion and kf_metrics,
    copy_bandwidth = copy_bw,
    kf_not_estimated = kf_not_estimated,
    candidates = candidates, kf_facts = kf_facts,
    cpu_idle_metrics = metrics_files[1].metrics, idle_waits = idle_waits(feed), rules = rules,
    nn_modules = prepare.model_identification_data(work, sheets.unified_perf_summary),
    metadata_of = prep.metadata_of, peak_kind = arch and arch.kind, sync_op_names = prep.sync_op_names,
    shipped_ridges = not arch and shipped_ridges() or nil,
    trace2_arch = arch and arch2 or nil,
    -- the compute units (SMs, CUs) the trace's device reports: the waves of a GEMM's tiles
    num_cus = tonumber((device_props(trace) or {}).numSms),
  }, warn)
  progress(opts, "running %d analyzers", #tasks)
  local outcome = timed("analyzers", function()
    return runner.run(tasks, { jobs = opts.jobs, timeout = opts.timeout, memory_mb = opts.memory_mb,
      out_dir = work, scope = scope }, warn)
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
  write_json(work .. "/priority_data.json", prio)
  local ok2, level2 = pcall(validate.validate_subagent_outputs, work)
  for _, name in ipairs(ok2 and level2 and { "time_check", "coverage_check", "priority_check" } or {}) do
    local c = level2[name]
    if c and c.status ~= "PASS" then
      for _, msg in ipairs(c.messages or {}) do detail(opts, "check %s: %s", name, msg) end
    end
  end

  -- Step 9: model identification
  local model_info = json.decode(read_file(work .. "/metadata/model_info.json"))
  if outcome.model_info then
    model_info = outcome.model_info
    write_json(work .. "/metadata/model_info.json", model_info)
  end
  local model = model_info.model
  if model == nil or model == "Cannot be inferred from trace" then model = "Workload" end

  -- Step 10: the chart
  -- (comparative: one bar per trace, named as the report's columns)
  timed("chart", function()
    local on = trace2 and string.format("%s vs %s", platform, platform2) or platform
    local ok, err = pcall(plot.generate_perf_plot, work, string.format("%s on %s — Performance Breakdown", model,
      on), manifest, trace2 and { trace2_names = prep.trace2_names,
      bar_labels = { string.format("Trace 1 - (%s)", platform), string.format("Trace 2 - (%s)", platform2) } })
    if not ok then warn("chart: " .. tostring(err)) end
  end)

  -- Inference mode: the iteration annotations, steady state and graph
  -- replays (metadata/inference.json, the Inference section of analysis.md)
  local inference_data
  if opts.inference then
    inference_data = timed("inference", function()
      return inference.data(trace, { capture_folder = opts.capture_folder })
    end)
    write_json(work .. "/metadata/inference.json", inference.json(inference_data))
  end

  -- Step 11: analysis.md, checked, with the chart embedded
  local metrics_by_cat = {}
  for _, m in ipairs(metrics_files) do metrics_by_cat[m.metrics.category or m.file:gsub("_metrics%.json$", "")] = m.metrics end
  local text = timed("analysis.md", function()
    return report_md.render({ scope = scope, manifest = manifest, priority = prio,
      findings = outcome.findings, failed = outcome.failed, metrics = metrics_by_cat, model_info = model_info,
      arch = arch, platform = platform, platform2 = platform2, platform_note = plat.how, no_arch_note = no_arch_note,
      warnings = warnings, rules = rules, no_rules = opts.no_rules, trace2_names = prep.trace2_names,
      inference = inference_data, health = health_checks, health2 = health_checks2, steps = steps, ranks = ranks_inp, gpu_feed = feed,
      sequence_hints = seq_hints, critical_path = cpath, own_fusion = own_fusion,
      shared_regions = trace2 and shared_regions.find(prep.compute) or nil })
  end)
  tl.fs.write_file(work .. "/analysis.md", text)
  pcall(plot.embed_plot_in_report, work, "analysis.md", "{{PERF_PLOT}}", "perf_improvement.png")
  write_json(work .. "/" .. RUN_FILE, run_record(work, opts, scope, rules, run_id))
  local passed, messages = validate.validate_report(work, scope)
  for _, msg in ipairs(messages or {}) do detail(opts, "report check: %s", msg) end
  -- Level 4 (docs/validate.md): a statement that cannot be true is printed
  -- even with -q, and fails the run (exit 1) after OUT is written
  local consistent, wrong = validate.validate_consistency(work)
  for _, msg in ipairs(wrong) do io.stderr:write("tracelens: consistency: ", (msg:gsub("%c", " ")), "\n") end
  timed("perf report files", wait_perf_reports)
  run_state.wait = nil

  -- The analysis replaces OUT whole (checked again: it may have changed
  -- while the analysis ran); the old directory goes with the stage.
  local why = replace_refusal(dest.path, "-o " .. opts.out)
  if why then fail(why, 2) end
  local cok, cerr = pcall(tl.fs.stage_commit, stage, dest.name, dest.path)
  if not cok then fail(tostring(cerr), 1) end
  run_state.stage = nil
  local rok, rerr = pcall(tl.fs.remove_tree, stage)
  if not rok then warn("the previous analysis could not be removed: " .. tostring(rerr)) end
  if trace2 then
    progress(opts, "perf reports written to %s/perf_report_trace1_csvs and perf_report_trace2_csvs", opts.out)
  else
    progress(opts, "perf report written to %s/perf_report_csvs", opts.out)
  end

  -- Summary
  local report_path = opts.out .. "/analysis.md"
  local total = tl.now() - t_start
  io.write(string.format("analysis: %s\n", report_path))
  io.write(string.format("  roofline: %s\n", (plat.how:gsub("%c", " "))))
  io.write(string.format("  findings: %d compute, %d analyzers failed, report checks %s, consistency %s\n",
    #prio.findings, #outcome.failed, passed and "passed" or "FAILED", consistent and "passed" or "FAILED"))
  if opts.verbose then
    for _, t in ipairs(timings) do io.stderr:write(string.format("  %-20s %7.3f s\n", t[1], t[2])) end
    io.stderr:write(runner.concurrency_note(outcome), "\n")
    io.stderr:write(string.format("  %-20s %7.3f s\n", "total", total))
  end
  return (passed and consistent) and 0 or 1
end

-- One line, without the "FILE.lua:LINE: " position a Lua error carries and
-- without control characters.
local function one_line(msg)
  msg = tostring(msg)
  repeat
    local n
    msg, n = msg:gsub("^[^\n]-%.lua:%d+: ", "", 1)
  until n == 0
  return (msg:match("^[^\n]*"):gsub("%c", "?"))
end

local ok, result = xpcall(main, function(e)
  if getmetatable(e) == Failure then return e end
  return { msg = e, code = 1 }
end, arg)
if not ok then
  -- the perf report writers first (they write into the stage), then the stage
  if run_state.wait then pcall(run_state.wait) end
  if run_state.stage then pcall(tl.fs.remove_tree, run_state.stage) end
  io.stderr:write("tracelens: ", one_line(result.msg), "\n")
  os.exit(result.code, true)
end
os.exit(result)

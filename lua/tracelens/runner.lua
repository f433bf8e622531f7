-- tracelens.runner — running the analyzers and user rules as parallel Lua
-- states (tl.parallel), with the reference's retry policy: a failed analyzer
-- (it raised, ran out of time or memory, or a compute findings file fails
-- the Level-1 checks) is run once more; if it fails again it is left out of
-- the report and listed under ## Warnings.
--
-- Owns: which rules run (the --rules folders, else the shipped rules/; never
-- the current directory's) and the names they may not take, the task list
-- (which analyzer runs, with which context), where each output file goes,
-- and the failure bookkeeping. Runs in the main state.
local json = require "tracelens.json"
local categories = require "tracelens.categories"
local validate = require "tracelens.validate"

local M = {}

local IDLE_GATE_PERCENT = 15

--- A directory of the project (agents/, rules/, arch/): next to lua/ in the
--- source tree and in the installed share dir.
function M.project_dir(name)
  local p = package.searchpath("tracelens.json", package.path)
  local root = p and p:match("^(.*)/lua/tracelens/json%.lua$")
  return (root or ".") .. "/" .. name
end
local function agents_dir() return M.project_dir("agents") end

--- The rules shipped with tracelens (rules/ next to agents/).
function M.shipped_rules_dir() return M.project_dir("rules") end

-- The system analyzers and the model identification: their findings and
-- metrics files have these names too.
local BUILTIN = { "cpu_idle", "multi_kernel", "kernel_fusion", "model_id" }

--- What a rule may not be named: a function of the lower-case name that
--- gives the reason, or nil. Reserved are every built-in analyzer
--- (agents/*.lua, the system analyzers, model_id), every category an
--- analyzer serves by name, "other", and the names in `extra` (the
--- categories of the trace at hand, once known: the orchestrator checks
--- again then).
function M.reserved_names(extra)
  local set = {}
  for _, n in ipairs(BUILTIN) do set[n] = "a built-in analyzer" end
  for _, f in ipairs(tl.fs.listdir(agents_dir()) or {}) do
    local stem = f:match("^(.+)%.lua$")
    if stem then set[stem:lower()] = "a built-in analyzer" end
  end
  set.other = "a built-in category"
  for _, n in ipairs(extra or {}) do set[n:lower()] = set[n:lower()] or "a category of this trace" end
  return function(key)
    return set[key] or (categories.agent(key) ~= "generic" and "a built-in category" or nil)
  end
end

--- The rule directories to run: the --rules DIRs when given, else the
--- shipped rules/ (when it exists); none with --no-rules. The current
--- directory's rules/ is never used unless named with --rules. Returns the
--- list, or nil and a message when a --rules DIR is not a directory.
function M.rule_dirs(opts)
  local dirs = {}
  if opts.no_rules then return dirs end
  for _, d in ipairs(opts.rules or {}) do
    if tl.fs.kind(d) ~= "directory" then
      return nil, "--rules " .. d .. ": " .. (tl.fs.kind(d) and "not a directory" or "no such directory")
    end
    dirs[#dirs + 1] = (d:gsub("(.)/+$", "%1"))
  end
  if #dirs == 0 then
    local shipped = M.shipped_rules_dir()
    if tl.fs.kind(shipped) == "directory" then dirs[1] = shipped end
  end
  return dirs
end

--- The rules of dirs, in directory then name order: {{name =, path =}}.
--- A rule file's stem is its name; it must be letters, digits, `_` and `-`,
--- be a regular file (not a symbolic link),
--- name no built-in analyzer or category (reserved: see reserved_names())
--- and no rule of another directory (names compared ignoring case, as the
--- findings files would collide on a case-insensitive file system).
--- Returns the list, or nil and a one-line message naming the file.
function M.find_rules(dirs, reserved)
  local list, seen = {}, {}
  for _, dir in ipairs(dirs) do
    local names, err = tl.fs.listdir(dir)
    if not names then return nil, "--rules " .. tostring(err) end
    for _, f in ipairs(names) do
      local stem = f:match("^(.*)%.lua$")
      if stem then
        local path = dir .. "/" .. f
        local key = stem:lower()
        if not stem:find("^[%w_%-]+$") then
          return nil, string.format("rule %s: a rule's file name must be letters, digits, _ or - and .lua", path)
        elseif tl.fs.lkind(path) == "link" then
          -- a link can name any file (~/.aws/credentials): loaded as a rule,
          -- a syntax error would quote a word of it into analysis.md
          return nil, string.format("rule %s: is a symbolic link; copy the rule file into the folder", path)
        elseif tl.fs.kind(path) ~= "file" then
          return nil, string.format("rule %s: not a file", path)
        elseif reserved(key) then
          return nil, string.format("rule %s: %s is the name of %s; rename the rule file", path, stem, reserved(key))
        elseif seen[key] then
          return nil, string.format("rule %s: a rule named %s already comes from %s; rename one of them", path,
            stem, seen[key])
        end
        seen[key] = path
        list[#list + 1] = { name = stem, path = path }
      end
    end
  end
  return list
end

local function task(name, tier, script, ctx)
  return { name = name, tier = tier, script = script, ctx = ctx }
end

--- The task list. spec: see orchestrator.lua (compute, manifest_text, ...).
function M.tasks(spec, warn)
  local dir = agents_dir()
  local tasks = {}
  local function agent(stem) return dir .. "/" .. stem .. ".lua" end
  -- peak_kind: the arch file's "kind" (datasheet_peak, max_achievable), so
  -- that a card giving a % of peak says which figure it is
  -- shipped_ridges: without an arch file, the lowest ridge point per compute spec of the shipped ones
  local base = { out_dir = spec.out_dir, scope = spec.scope, manifest = spec.manifest_text, peak_kind = spec.peak_kind,
    shipped_ridges = spec.shipped_ridges and json.encode(spec.shipped_ridges), num_cus = spec.num_cus,
    -- comparative: trace 2's arch file (name, mem_bw_gbps, max_achievable_tflops), for its peaks against trace 1's
    trace2_arch = spec.trace2_arch and json.encode(spec.trace2_arch) }

  local function with(extra)
    local ctx = {}
    for k, v in pairs(base) do ctx[k] = v end
    for k, v in pairs(extra) do ctx[k] = v end
    return ctx
  end

  -- system tier (agents-and-report.md §1.2 invocation conditions)
  if spec.util.idle_time_percent > IDLE_GATE_PERCENT then
    tasks[#tasks + 1] = task("cpu_idle", "system", agent("cpu_idle"),
      with({ metrics = json.encode(spec.cpu_idle_metrics), waits = spec.idle_waits and json.encode(spec.idle_waits),
        -- the runtime calls of the ops whose host time the categories count (prepare's sync_op_names)
        host_calls = spec.trace and json.encode(spec.trace:host_calls(spec.sync_op_names
          and { names = spec.sync_op_names } or nil)) }))
  end
  if spec.mk_metrics then
    tasks[#tasks + 1] = task("multi_kernel", "system", agent("multi_kernel"),
      with({ data = json.encode(spec.mk_data), metrics = json.encode(spec.mk_metrics),
        copies = spec.copy_bandwidth and json.encode(spec.copy_bandwidth) }))
  end
  if spec.kf_metrics then
    tasks[#tasks + 1] = task("kernel_fusion", "fusion", agent("kernel_fusion"),
      with({ candidates = json.encode(spec.candidates), metrics = json.encode(spec.kf_metrics),
        not_estimated = spec.kf_not_estimated and json.encode(spec.kf_not_estimated),
        unified = spec.sheets.unified_perf_summary,
        kernel_facts = spec.kf_facts and json.encode(spec.kf_facts) }))
  end
  -- compute tier: one analyzer per manifest category
  for _, c in ipairs(spec.compute) do
    tasks[#tasks + 1] = task(c.name, "compute", agent(categories.agent(c.name)),
      with({ category = c.name, display_name = c.display, ops = c.ops, metadata = c.metadata_text,
        fusion_map = spec.fusion_map }))
  end
  -- model identification (its inputs: prepare.model_identification_data)
  if spec.nn_modules then
    tasks[#tasks + 1] = task("model_id", "model", agent("model_id"),
      { scope = spec.scope, unified = spec.sheets.unified_perf_summary, nn_modules = spec.nn_modules })
  end
  -- user rules: the compute contract, with the whole report and the trace
  local sheets = {}
  for k, v in pairs(spec.sheets) do
    if type(v) == "userdata" then sheets[k] = v end
  end
  for _, r in ipairs(spec.rules or {}) do
    tasks[#tasks + 1] = task(r.name, "compute", r.path,
      with({ category = r.name, display_name = r.name, rule = true, trace = spec.trace, sheets = sheets,
        metadata = json.encode(spec.metadata_of(r.name, r.name)) }))
  end
  for _, t in ipairs(tasks) do
    if tl.fs.kind(t.script) ~= "file" then
      warn(string.format("analyzer %s: %s not found", t.name, t.script))
      t.missing = true
    end
  end
  return tasks
end

-- The consistency messages of text, as "line N: <check>" without the text
-- they quote (a rule chose it: quoted again, it would trip the check again).
local function consistency_problems(text_, rel)
  local seen, list = {}, {}
  for _, msg in ipairs(validate.consistency_text(text_, rel)) do
    local line, what = msg:match(":(%d+): ([^\"]-):? \"") -- "REL:LINE: what: \"quote\""
    local item = line and string.format("line %s: %s", line, what) or "a statement that cannot be true"
    if not seen[item] then
      seen[item] = true
      list[#list + 1] = item
    end
  end
  return list
end

--- A failure reason as the report shows it. A rule chooses its own error
--- messages, and "table: 0x…", "nan" or "250% of total time" in one would
--- fail the consistency checks (Level 4) of the whole run once the reason is
--- written into analysis.md and the rule's findings file: a rule's reason
--- that holds such text is replaced by one that says why it is not shown.
function M.shown_reason(why, is_rule)
  why = tostring(why)
  if not is_rule or #validate.consistency_text(why, "reason") == 0 then return why end
  return "its error message is not shown: it holds text the consistency checks refuse"
end

local function findings_path(out, t)
  local sub = (t.tier == "compute") and "category_findings" or "system_findings"
  return string.format("%s/%s/%s_findings.md", out, sub, t.name)
end

-- Writes one analyzer's outputs; returns nil or the reason it failed.
local function accept(t, r, opts)
  if not r.ok then return (r.error or "failed") end
  local v = r.value
  if type(v) ~= "table" then return "returned " .. type(v) .. ", expected a table" end
  if t.tier == "model" then
    if type(v.model_info) ~= "string" then return "model_info missing" end
    local ok, info = pcall(json.decode, v.model_info)
    if not ok or not json.is_obj(info) then return "model_info is not a JSON object" end
    t.model_info = info
    return nil
  end
  if v.metrics ~= nil then
    local ok, m = pcall(json.decode, v.metrics)
    if not ok or not json.is_obj(m) then return "metrics are not a JSON object: " .. tostring(m) end
    -- the ranking files a finding under its metrics' category: a rule's
    -- (or an analyzer's) metrics name its own, never a built-in one's
    if m.category ~= t.name then
      return string.format("metrics are for category %s, not %s", tostring(m.category), t.name)
    end
    t.metrics = m
    tl.fs.write_file(string.format("%s/category_data/%s_metrics.json", opts.out_dir, t.name), v.metrics)
  end
  if type(v.findings) ~= "string" then return "findings text missing" end
  local path = findings_path(opts.out_dir, t)
  tl.fs.write_file(path, v.findings)
  t.findings = v.findings
  if v.findings:find("Status: ERROR", 1, true) then return "the analyzer reported Status: ERROR" end
  if t.tier == "compute" then
    local passed, errors = validate.validate_findings_file(path, "compute", opts.scope)
    if not passed then return "findings fail the checks: " .. table.concat(errors or {}, "; ") end
  end
  -- a rule's text is written into analysis.md: a statement in it that cannot
  -- be true ("table: 0x…", a share above 100%) would fail the consistency
  -- checks of the whole run, so it fails the rule instead
  if t.ctx and t.ctx.rule then
    local wrong = consistency_problems(v.findings, "findings")
    if #wrong > 0 then
      return "findings fail the consistency checks (docs/validate.md, Level 4): " .. table.concat(wrong, "; ", 1,
        math.min(#wrong, 5)) .. (#wrong > 5 and string.format("; %d more", #wrong - 5) or "")
    end
  end
  return nil
end

local function run_batch(list, opts)
  local ptasks = {}
  for i, t in ipairs(list) do
    ptasks[i] = { script = t.script, args = { t.ctx }, name = t.name }
  end
  return tl.parallel(ptasks, { jobs = opts.jobs, timeout = opts.timeout, memory_mb = opts.memory_mb })
end

--- Runs the tasks (one retry for failures). Returns {findings = {system =,
--- compute =}, failed = {{category, tier, error}}, metrics = {{name, metrics}},
--- model_info, runs = {{name, started, finished, seconds}}}.
function M.run(tasks, opts, warn)
  local pending = {}
  for _, t in ipairs(tasks) do
    if not t.missing then pending[#pending + 1] = t end
  end
  local out = { findings = { system = {}, compute = {} }, failed = {}, metrics = {}, runs = {} }
  local errors = {}
  for attempt = 1, 2 do
    if #pending == 0 then break end
    local results = run_batch(pending, opts)
    local again = {}
    for i, t in ipairs(pending) do
      local r = results[i]
      out.runs[#out.runs + 1] = { name = t.name, started = r.started, finished = r.finished, seconds = r.seconds,
        attempt = attempt }
      local why = accept(t, r, opts)
      if why then
        why = M.shown_reason(why, t.ctx and t.ctx.rule)
        errors[t] = why
        if attempt == 1 and why:find("abandoned", 1, true) then
          -- stuck in a C call past its time: its thread still runs, so a
          -- second run would only take another core for as long
          warn(string.format("analyzer %s failed (%s); not run again", t.name, why:gsub("\n.*", "")))
        elseif attempt == 1 then
          warn(string.format("analyzer %s failed (%s); running it again", t.name, why:gsub("\n.*", "")))
          again[#again + 1] = t
        end
      else
        errors[t] = nil
      end
    end
    pending = again
  end
  for _, t in ipairs(tasks) do
    local why = errors[t] or (t.missing and "analyzer script not found")
    if why then
      local tier = t.tier == "compute" and "Compute Kernel" or "System"
      out.failed[#out.failed + 1] = { category = t.name, tier = tier, error = (why:gsub("\n.*", "")) }
      if t.tier ~= "model" then
        tl.fs.write_file(findings_path(opts.out_dir, t), string.format("# %s\n\nStatus: ERROR\n\n%s\n", t.name, why))
      end
    elseif t.tier == "model" then
      out.model_info = t.model_info
    else
      local bucket = t.tier == "compute" and out.findings.compute or out.findings.system
      bucket[t.name] = t.findings
      if t.metrics then out.metrics[#out.metrics + 1] = { name = t.name, metrics = t.metrics } end
    end
  end
  return out
end

--- One line on how the analyzers overlapped in time.
function M.concurrency_note(outcome)
  local first, last, busy = math.huge, -math.huge, 0
  for _, r in ipairs(outcome.runs or {}) do
    if r.started then
      first, last = math.min(first, r.started), math.max(last, r.finished)
      busy = busy + r.seconds
    end
  end
  if first == math.huge then return "  analyzers: none ran" end
  local span = last - first
  return string.format("  analyzers: %d runs, %.3f s of analyzer time in %.3f s wall (%.1fx overlap)",
    #outcome.runs, busy, span, span > 0 and busy / span or 1)
end

return M

-- tracelens.rule — what a user rule needs to join the analysis: pick the
-- operations it is about, and say what to do about them. The numbers
-- (efficiency, impact estimates, the findings that become P-items) come from
-- the same machinery as the built-in analyzers, so a rule's findings are
-- ranked with theirs in priority_data.json and analysis.md.
--
-- A rule script (rules/<name>.lua; docs/rules.md):
--   local rule = require "tracelens.rule"
--   return rule.run(..., {
--     sheet = "kernels",                              -- optional: the rows select() sees
--     select = function(row) return <boolean> end,   -- default: rows of unified_perf_summary
--     advice = function(v) return { {action = "...", mechanism = "..."} } end,
--     -- optional, as for the analyzers (tracelens.findings): title, insight,
--     -- identify, reasoning, notes, noun, summary, missing
--   })
--
-- The findings are always about operation signatures (rows of
-- unified_perf_summary, where the perf models and times are): the rows a
-- rule selects in another sheet stand for the signatures they belong to.
-- `sheet = "kernels"` is one row per GPU kernel launch of the trace (made
-- here from ctx.trace; no perf-report sheet has them), mapped to the
-- signature of the op that launched it; any other sheet is mapped on the
-- signature columns it shares with unified_perf_summary (see M.SIGNATURE).
local findings = require "tracelens.findings"
local kernel_name = require "tracelens.kernel_name"
local graph_replay = require "tracelens.graph_replay"

local M = {}

-- The columns that make an operation signature in unified_perf_summary, and
-- how other sheets spell them (kernel_summary's "Parent cpu_op", "Input dims").
M.SIGNATURE = {
  { "name", { "name", "Parent cpu_op" } },
  { "Input Dims", { "Input Dims", "Input dims" } },
  { "Input type", { "Input type" } },
  { "Input Strides", { "Input Strides", "Input strides" } },
  { "Concrete Inputs", { "Concrete Inputs" } },
}

-- A deterministic text for an event arg value (tables in order, numbers exact).
local function ser(v, out)
  local t = type(v)
  if t == "table" then
    out[#out + 1] = "["
    for i = 1, #v do
      ser(v[i], out)
      out[#out + 1] = ","
    end
    out[#out + 1] = "]"
  elseif t == "number" then
    out[#out + 1] = math.type(v) == "integer" and tostring(v) or string.format("%.17g", v)
  elseif t == "string" then
    out[#out + 1] = string.format("%q", v)
  else
    out[#out + 1] = tostring(v) -- nil, boolean, cjson.null
  end
  return out
end

-- The signature of a CPU op event: its name, thread and shape args, as text.
local function event_key(ev)
  local args = ev.args or {}
  local out = { tostring(ev.name), "\0", tostring(ev.pid), "\0", tostring(ev.tid) }
  for _, k in ipairs({ "Input Dims", "Input type", "Input Strides", "Concrete Inputs" }) do
    out[#out + 1] = "\0"
    ser(args[k], out)
  end
  return table.concat(out)
end

-- The op a GPU event's time is counted under in the perf report: the nearest
-- cpu_op above its launching runtime call (as kernel_summary's "Parent
-- cpu_op"; an op named `execute` counts, unlike ev:launcher()), or nil.
local function parent_op(ev)
  local p = ev:parent()
  while p and p.cat ~= "cpu_op" do p = p:parent() end
  return p
end

--- The rows of the `kernels` sheet: one per GPU kernel event of the trace
--- (cat "kernel"), in file order: UID, Kernel name, Kernel duration (µs)
--- (also under "(us)"), Kernel stream, Parent cpu_op (the op the report
--- counts the kernel under, nil when unlinked), Parent UID; and, second
--- result, that op's event for each row (false when unlinked).
function M.kernel_rows(trace)
  local rows, parents = {}, {}
  for ev in trace:events({ cat = "kernel" }) do
    local op = parent_op(ev)
    local args = ev.args or {}
    rows[#rows + 1] = { UID = ev.uid, ["Kernel name"] = ev.name, ["Kernel duration (µs)"] = ev.dur,
      ["Kernel duration (us)"] = ev.dur, ["Kernel stream"] = args.stream, ["Parent cpu_op"] = op and op.name,
      ["Parent UID"] = op and op.uid }
    parents[#rows] = op or false
  end
  return rows, parents
end

-- The unified_perf_summary row numbers the selected rows of ctx.sheets[name]
-- (or the kernels) stand for, in row order; or nil and why not.
local function unified_rows(ctx, spec, unified)
  local name = spec.sheet
  local picked, order = {}, {}
  local function pick(i)
    if i and not picked[i] then
      picked[i] = true
      order[#order + 1] = i
    end
  end
  if name == "kernels" then
    if not ctx.trace then return nil, "sheet \"kernels\" needs the trace (ctx.trace)" end
    local by_key = {}
    local uids = unified:column("ex_UID")
    for i = 1, #unified do
      local uid = math.tointeger(uids[i])
      local ev = uid and uid >= 0 and ctx.trace:node(uid)
      if ev then
        local k = event_key(ev)
        if by_key[k] == nil then by_key[k] = i end
      end
    end
    local rows, launchers = M.kernel_rows(ctx.trace)
    for j, row in ipairs(rows) do
      if launchers[j] and spec.select(row) then pick(by_key[event_key(launchers[j])]) end
    end
  else
    local sheet = ctx.sheets[name]
    if sheet == nil then return nil, "no sheet \"" .. tostring(name) .. "\" in this report" end
    local have, shared = {}, {}
    for _, c in ipairs(sheet:columns()) do have[c] = true end
    for _, s in ipairs(M.SIGNATURE) do
      for _, spelling in ipairs(s[2]) do
        if have[spelling] then
          shared[#shared + 1] = { s[1], spelling }
          break
        end
      end
    end
    if #shared == 0 or shared[1][1] ~= "name" then
      return nil, "sheet \"" .. name .. "\" has no column naming the operation (name, Parent cpu_op)"
    end
    local function key(row, which)
      local out = {}
      for i, s in ipairs(shared) do out[i] = tostring(row[s[which]]) end
      return table.concat(out, "\0")
    end
    local by_key = {}
    for i, row in unified:rows() do
      local k = key(row, 1)
      by_key[k] = by_key[k] or {}
      table.insert(by_key[k], i)
    end
    for _, row in sheet:rows() do
      if spec.select(row) then
        for _, i in ipairs(by_key[key(row, 2)] or {}) do pick(i) end
      end
    end
  end
  table.sort(order)
  return order
end

--- A predicate telling a row of unified_perf_summary whose kernels a graph
--- launch replays: they run as nodes of one replay, none launched on its
--- own, so the row's operation_count counts replays, not launches. Such a row
--- is a graph launch's synthetic op (`cudaGraphLaunch->kernel (Synthetic Op)`,
--- the perf report's name for a replayed kernel without a captured op) or, on
--- a trace merged with its capture traces (trace:capture_summary()), an op
--- whose example event (`ex_UID`) sits under a graph launch.
function M.graph_replayed(ctx)
  local under = graph_replay.under_launch(ctx and ctx.trace)
  return function(row)
    local name = row.name
    if kernel_name.is_synthetic(name) then return graph_replay.synthetic(name) end
    return under ~= nil and under(row)
  end
end

--- Runs a rule: ctx is the task argument the orchestrator passes (category =
--- the rule's name, sheets = every report Table, trace, metadata, scope).
function M.run(ctx, spec)
  assert(type(spec) == "table" and type(spec.select) == "function" and type(spec.advice) == "function",
    "a rule needs select(row) and advice(v) functions")
  assert(spec.sheet == nil or type(spec.sheet) == "string", "a rule's sheet is a sheet name")
  -- a rule's advice holds for its findings without a performance model too
  spec.advice_unmodeled = spec.advice_unmodeled or spec.advice
  local unified = ctx.sheets and ctx.sheets.unified_perf_summary
  if unified then
    if spec.sheet == nil or spec.sheet == "unified_perf_summary" then
      local picked = unified:filter(spec.select)
      if #picked > 0 then ctx.ops = picked end
    else
      local rows, why = unified_rows(ctx, spec, unified)
      if not rows then error("rule " .. tostring(ctx.category) .. ": " .. why, 0) end
      if #rows > 0 then ctx.ops = unified:take(rows) end
    end
  end
  if ctx.ops == nil then
    -- nothing selected: an empty, valid findings file
    local metrics = require("tracelens.json").obj("category", ctx.category, "status", "OK",
      "comparison_scope", ctx.scope or "standalone", "total_time_ms", 0, "percent_of_compute", 0,
      "operation_count", 0, "operations", {}, "category_specific", {}, "impact_estimates", {},
      "category_findings", {})
    return { metrics = require("tracelens.json").encode(metrics), findings = findings.render(ctx, metrics, spec) }
  end
  return findings.run(ctx, spec)
end

return M

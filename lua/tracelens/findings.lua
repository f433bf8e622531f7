-- tracelens.findings — the findings file of a compute-tier analyzer
-- (agents-and-report.md §2): P-item cards, Detailed Analysis candidate blocks,
-- the Compute Data table, impact markers, the heuristic warning line, the
-- no-data / error variants, and the sentences every analyzer shares.
--
-- An analyzer (agents/<name>.lua) is a table of rules; render() calls them for
-- each category_findings entry, in rank order. Numbers in the text come from
-- the metrics only: copied verbatim (Python repr) or, for sums and ratios,
-- rounded with Python's round(). See docs/analyzers.md. Names from the
-- trace are written through tracelens.md (cells, code spans, headings).
local json = require "tracelens.json"
local md = require "tracelens.md"
local py = require "tracelens.py"

local M = {}

local DASH = "—"
M.DASH = DASH

local STANDALONE_COLUMNS = { "Operation", "Args", "Kernel Path", "Kernel Name", "Time (ms)", "%E2E", "Count",
  "FLOPS/Byte", "Efficiency", "Bound" }
local COMPARATIVE_COLUMNS = { "Operation", "Args (T1)", "Kernel Path", "Kernel Name", "Trace 1 Time (ms)",
  "Trace 2 Time (ms)", "Count (T1/T2)", "Difference (ms)", "FLOPS/Byte (T1)", "Bound (T1)" }
M.STANDALONE_COLUMNS, M.COMPARATIVE_COLUMNS = STANDALONE_COLUMNS, COMPARATIVE_COLUMNS

-- The trace-observability fallbacks (§2.3): what to write instead of a claim
-- the trace cannot support. Analyzers add their own next to these.
M.FALLBACK = {
  bank_conflicts = "The trace cannot show why the efficiency is low; hardware counters (bank conflicts, stall reasons) "
    .. "can.",
  cache = "The working set may exceed the cache.",
  occupancy = "The kernel runs well below its roofline and the trace cannot show why; profile its occupancy with "
    .. "hardware counters.",
  shared_memory = "The trace does not show shared-memory use; hardware counters do.",
  warp_shuffle = "The trace does not show warp-shuffle efficiency; hardware counters do.",
  root_cause = "Without a perf model the trace cannot show why this op is slow; a minimal reproducer of it (same "
    .. "shapes and dtypes) lets you profile it in isolation or report it to the maintainers of its kernel library.",
}

--- The occupancy fallback for a modelled, standalone, compute-bound finding
--- below 30% of roofline (the trace cannot say why such a kernel is slow), or nil.
function M.occupancy_note(v)
  if not v.heuristic and not v.comparative and v.bound == "compute" and v.bucket == "0-30" then
    return M.FALLBACK.occupancy
  end
  return nil
end

-- Numbers ------------------------------------------------------------------

local present = json.present
M.present = present

--- A metrics number as Python prints it (`83.6`, `30.0`, `708`), or — when absent.
function M.num(v)
  if not present(v) then return DASH end
  if type(v) == "number" then
    if v ~= v or v == math.huge or v == -math.huge then return DASH end -- no nan / inf in the text
    return json.number_text(v)
  end
  return tostring(v)
end

--- Python round(x, n) printed as Python would.
function M.round(x, n) return json.number_text(py.round(x + 0.0, n)) end

--- The category metadata of ctx (metadata/<cat>_metadata.json), decoded; {} when absent.
local decoded = setmetatable({}, { __mode = "k" })
function M.metadata(ctx)
  local m = ctx.metadata
  if type(m) == "string" then
    if decoded[ctx] == nil then
      local ok, d = pcall(json.decode, m)
      decoded[ctx] = ok and d or false
    end
    m = decoded[ctx]
  end
  return type(m) == "table" and m or {}
end

--- True when the platform has a matrix peak for `spec` (e.g. "matrix_fp8").
function M.platform_has(ctx, spec)
  local maf = M.metadata(ctx).max_achievable_tflops
  return type(maf) == "table" and present(maf[spec]) and maf[spec] ~= 0
end

-- Members joined to operations ---------------------------------------------

local function same(a, b) return (not present(a) and not present(b)) or a == b end

-- An estimate (members[] entry) came from exactly one operation: same name and
-- time, and the same efficiency (quantified) or E2E share (heuristic).
local function matches(m, op)
  if op.name ~= m.operation or op.time_ms ~= m.time_ms or op.fusion_flagged then return false end
  if m.estimate_method == "heuristic" then return same(op.percent_of_total, m.percent_of_total) end
  return same((op.efficiency or {}).efficiency_percent, m.efficiency_pct)
end

-- An op with a bare, generic name (`execute` inside `aten::_fused_adamw_`,
-- the optimizer's launcher) is reported under the namespaced op that calls
-- it directly: that is the operation the user wrote and can act on. A copy,
-- so operations[] keeps the trace's name; nil when the op keeps its own.
local function outer_op(op)
  local name, chain = op.name, op.call_chain
  if type(name) ~= "string" or type(chain) ~= "table" or not name:match("^[%a_][%w_]*$") then return nil end
  for i = #chain, 2, -1 do
    if chain[i] == name then
      local parent = chain[i - 1]
      if type(parent) == "string" and parent:match("^[%a_][%w_]*::[%w_.]+$") then
        local copy = {}
        for k, x in pairs(op) do copy[k] = x end
        copy.name, copy.inner_name, copy.original = parent, name, op
        return copy
      end
      return nil
    end
  end
end

--- For every category_findings entry, its members joined to operations[]:
--- an array (parallel to category_findings) of arrays of {member=, op=}.
--- Each operation is used at most once.
function M.join(metrics)
  local used, out = {}, {}
  local ops = metrics.operations or {}
  local function take(m, strict)
    for i, op in ipairs(ops) do
      if not used[i] and (strict and matches(m, op) or (not strict and op.name == m.operation)) then
        used[i] = true
        return op
      end
    end
  end
  for fi, f in ipairs(metrics.category_findings or {}) do
    out[fi] = {}
    for mi, m in ipairs(f.members or {}) do out[fi][mi] = { member = m, op = take(m, true) } end
  end
  for fi, rows in ipairs(out) do
    for _, r in ipairs(rows) do
      r.op = r.op or take(r.member, false) or { name = r.member.operation }
      r.op = outer_op(r.op) or r.op
    end
  end
  return out
end

-- The Data table -------------------------------------------------------------

local function efficiency_cell(op, heuristic)
  local e = op.efficiency or {}
  if heuristic or not present(e.efficiency_percent) then return DASH end
  local pct = M.num(e.efficiency_percent) .. "%"
  if e.bound_type == "compute" and present(e.resolved_peak_maf) then
    return pct .. " of " .. M.num(e.resolved_peak_maf) .. " TFLOPS"
  elseif e.bound_type == "memory" and present(e.resolved_peak_hbm_bw) then
    return pct .. " of " .. M.num(e.resolved_peak_hbm_bw) .. " TB/s"
  end
  return pct .. " of roofline"
end

local function bound_cell(op, heuristic)
  local b = (op.efficiency or {}).bound_type
  if heuristic or not present(b) then return DASH end
  return b .. "-bound"
end

-- Args, Kernel Path and Kernel Name are the operations[] values as table
-- cells (md.cell: the validator compares md.cell(value) with the cell); an
-- op without args gets an empty Args cell.
local function common_cells(op)
  local kernel = op.kernel_name_trunc
  return present(op.args) and md.cell(op.args) or "", md.cell(op.launcher_path or "Not found"),
    (present(kernel) and kernel ~= "") and md.cell(kernel) or DASH
end

local function standalone_row(op, heuristic)
  local args, path, kernel = common_cells(op)
  return { md.cell(op.name), args, path, kernel, M.num(op.time_ms), M.num(op.percent_of_total), M.num(op.count),
    M.num((op.efficiency or {}).flops_per_byte), efficiency_cell(op, heuristic), bound_cell(op, heuristic) }
end

local function comparative_row(op, heuristic)
  local args, path, kernel = common_cells(op)
  return { md.cell(op.name), args, path, kernel, M.num(op.time_ms), M.num(op.t2_time_ms),
    M.num(op.count) .. " / " .. M.num(op.count_trace2), M.num(op.difference_ms),
    M.num((op.efficiency or {}).flops_per_byte), bound_cell(op, heuristic) }
end

local function table_line(cells) return "| " .. table.concat(cells, " | ") .. " |" end

--- The Compute Data table of one finding: the 10 canonical columns of the
--- scope, then the analyzer's extra columns ({name=, cell=function(op)}).
function M.data_table(v, extra)
  local header = {}
  for _, c in ipairs(v.comparative and COMPARATIVE_COLUMNS or STANDALONE_COLUMNS) do header[#header + 1] = c end
  for _, c in ipairs(extra or {}) do header[#header + 1] = c.name end
  local sep = {}
  for i = 1, #header do sep[i] = "---" end
  local lines = { table_line(header), table_line(sep) }
  for _, r in ipairs(v.rows) do
    local cells = (v.comparative and comparative_row or standalone_row)(r.op, v.heuristic)
    for _, c in ipairs(extra or {}) do
      local value = c.cell(r.op, v)
      cells[#cells + 1] = present(value) and md.cell(value) or DASH
    end
    lines[#lines + 1] = table_line(cells)
  end
  return table.concat(lines, "\n")
end

-- Markers, card, candidate block ---------------------------------------------

-- A marker attribute: the number verbatim (Python repr), null when absent.
local function attr(v) return present(v) and json.number_text(v) or "null" end

--- The p_item marker of a finding or estimate (impact_score_low / impact_score
--- / impact_score_high); with category, the report's form (category=...).
function M.p_item_marker(f, category)
  return string.format("<!-- impact-begin kind=p_item %slow=%s mid=%s high=%s -->",
    category and ("category=" .. category .. " ") or "", attr(f.impact_score_low), attr(f.impact_score),
    attr(f.impact_score_high))
end

function M.detail_marker(f)
  return string.format("<!-- impact-begin kind=detail_estimate low=%s high=%s -->",
    attr(f.impact_score_low), attr(f.impact_score_high))
end

--- True when the run has no arch file (no peaks): nothing is placed on a roofline.
function M.no_roofline(ctx)
  local meta = M.metadata(ctx)
  return not present(meta.peak_hbm_bw_tbs) and not present(meta.max_achievable_tflops)
end

--- An op's FLOPs per byte against the GPU's ridge (matrix peak / HBM peak,
--- both from its efficiency table): the ratio, or nil. A memory-bound op at
--- half the ridge or more is not far from balanced (the gemm and convolution
--- analyzers tune its tiles rather than its loads).
function M.ridge_ratio(op)
  local e = type(op) == "table" and type(op.efficiency) == "table" and op.efficiency or {}
  local fpb, maf, hbm = tonumber(e.flops_per_byte), tonumber(e.resolved_peak_maf), tonumber(e.resolved_peak_hbm_bw)
  if not (fpb and maf and hbm and maf > 0 and hbm > 0) then return nil end
  return fpb / (maf / hbm)
end

--- The row of an analyzer's ops table (ctx.ops: a Table, or {rows =, columns =})
--- behind a metrics operation (the same name and Input Dims), for the columns
--- the metrics leave out (`Input Strides`); nil when there is none.
function M.op_row(ctx, op)
  local ops = ctx and ctx.ops
  if type(ops) == "userdata" then
    for _, r in ops:rows() do
      if r.name == op.name and r["Input Dims"] == op["Input Dims"] then return r end
    end
  elseif type(ops) == "table" then
    for _, r in ipairs(ops.rows or {}) do
      if r.name == op.name and r["Input Dims"] == op["Input Dims"] then return r end
    end
  end
  return nil
end

--- The `Input Dims` and `Input Strides` of M.op_row's row as lists (Python
--- literals parsed), or nil when either is missing.
function M.op_dims_strides(ctx, op)
  local r = M.op_row(ctx, op)
  if not r then return nil end
  local dims, strides = py.literal(tostring(r["Input Dims"] or "")), py.literal(tostring(r["Input Strides"] or ""))
  if type(dims) ~= "table" or type(strides) ~= "table" then return nil end
  return dims, strides
end

--- Why the lead op of a heuristic finding (view v) has no roofline:
--- "no_arch" (no arch file: no operation has one), "no_peak" (its perf model
--- gives FLOPs and bytes, but the arch file has no peak for its compute spec:
--- MI300X and `matrix_fp4`), else "no_model"; with "no_peak", the op's
--- efficiency table (compute_spec, flops_per_byte, tflops_achieved, ...).
function M.unmodelled(v)
  if M.no_roofline(v.ctx) then return "no_arch" end
  local e = type(v.lead) == "table" and type(v.lead.efficiency) == "table" and v.lead.efficiency or {}
  if present(e.flops_per_byte) and type(e.compute_spec) == "string" and e.compute_spec ~= "" then
    return "no_peak", e
  end
  return "no_model"
end

--- The blockquote under a heuristic card (§2.2 item 5); why, spec: M.unmodelled's.
function M.heuristic_warning(f, why, spec)
  local what = "No performance model covers this operation."
  if why == "no_arch" then
    what = "Without the GPU's peak figures (no platform was resolved for this trace; analysis.md's roofline note "
      .. "says why) no roofline covers this operation."
  elseif why == "no_peak" then
    what = "No roofline covers this operation: the arch file has no peak for its compute spec " .. md.code(spec) .. "."
  end
  return "> **Warning — estimated:** " .. what .. " The impact is derived from its "
    .. "share of end-to-end GPU time (" .. M.num(f.percent_of_total) .. "%), not from a gap projection."
end

--- `### P<rank>: <title>` card lines (§2.2).
function M.card(c)
  local f = c.finding
  local lines = { "### P" .. M.num(f.rank) .. ": " .. c.title, "", "**Insight**: " .. c.insight, "",
    "**Action**: " .. c.action, "", M.p_item_marker(f), "**Impact**: impact_score: " .. M.num(f.impact_score),
    "<!-- impact-end -->" }
  if f.estimate_method == "heuristic" then
    lines[#lines + 1] = ""
    lines[#lines + 1] = M.heuristic_warning(f, c.unmodelled, c.unmodelled_spec)
  end
  return table.concat(lines, "\n")
end

--- The Detailed Analysis candidate block (§2.3): five labels, the Data table
--- alone after `**Data:**`, the detail_estimate marker.
function M.candidate(c)
  local f = c.finding
  return table.concat({
    "<!-- reasoning-candidate tier=compute rank=" .. M.num(f.rank) .. " -->",
    "#### " .. c.title,
    "**Identification:** " .. c.identification, "",
    "**Data:**", "",
    c.table, "",
    "**Reasoning for Slowdown:** " .. c.reasoning, "",
    "**Resolution:** " .. c.resolution, "",
    "**Impact estimate:**",
    M.detail_marker(f),
    "- Low end impact_score: " .. M.num(f.impact_score_low),
    "- High end impact_score: " .. M.num(f.impact_score_high),
    "<!-- impact-end -->",
  }, "\n")
end

-- The file ----------------------------------------------------------------

local function call(rule, ...)
  if type(rule) == "function" then return rule(...) end
  return rule
end

local function sentences(list)
  local out = {}
  for _, s in ipairs(list or {}) do
    if s and s ~= "" then out[#out + 1] = s end
  end
  return table.concat(out, " ")
end

local function append(dst, src)
  for _, s in ipairs(src or {}) do dst[#dst + 1] = s end
  return dst
end

-- The shared sentences (tracelens.prose formats its numbers with this module,
-- so it is required on first use, not at load time).
local function prose() return require "tracelens.prose" end

--- The view of one category_findings entry the rules read.
local function view(ctx, metrics, rules, f, rows)
  local v = {
    ctx = ctx, metrics = metrics, finding = f, rows = rows, lead = rows[1] and rows[1].op or {},
    bound = f.bound_type, bucket = f.eff_bucket,
    library = (present(f.library) and f.library ~= "Unknown") and f.library or nil,
    heuristic = f.estimate_method == "heuristic",
    comparative = metrics.comparison_scope == "comparative",
    category = metrics.category, display = ctx.display_name or metrics.category,
    source = (metrics.category or "category") .. "_metrics.json",
  }
  -- the library the kernels' names show, for the Identification (the title keeps §6.8's)
  v.kernels_library = require("tracelens.analysis").prose_library(v.lead.kernel_details_summary, v.library)
  v.describe = function(op) return rules.describe and rules.describe(op, v) or nil end
  v.noun = call(rules.noun, v) or v.display
  v.qualifier = call(rules.qualifier, v)
  v.meets_expectation = call(rules.meets_expectation, v)
  return v
end

-- The advice for a finding. Without a performance model the first step is
-- the same for every analyzer (profile the kernels to learn the bound) unless
-- the analyzer has its own advice_unmodeled.
local function advice_of(v, rules)
  if v.heuristic then
    if rules.advice_unmodeled then return rules.advice_unmodeled(v) end
    return { prose().remedy.profile_unmodeled(v) }
  end
  return rules.advice(v)
end

--- One card and one candidate block.
local function finding_text(v, rules)
  local advice = advice_of(v, rules)
  local actions, mechanisms = {}, {}
  for i = 1, math.min(#advice, 2) do
    actions[#actions + 1] = advice[i].action
    mechanisms[#mechanisms + 1] = advice[i].mechanism
  end
  local why, why_e
  if v.heuristic then why, why_e = M.unmodelled(v) end
  local title = call(rules.title, v) or prose().title(v)
  if v.library then title = title .. " (" .. md.text(v.library) .. ")" end
  local identification = append(append({ prose().flag_reason(v) }, call(rules.identify, v)),
    { prose().backend(v), prose().layers(v) })
  local keys = append(prose().source_keys(v), call(rules.source_keys, v))
  local c = {
    finding = v.finding, title = title, unmodelled = why, unmodelled_spec = why_e and why_e.compute_spec,
    insight = call(rules.insight, v) or prose().insight(v),
    action = sentences(actions),
    identification = sentences(identification) .. " " .. prose().source(v, keys),
    table = M.data_table(v, call(rules.columns, v)),
    reasoning = sentences(append(prose().measurements(v), call(rules.reasoning, v))),
    resolution = sentences(append(mechanisms, call(rules.notes, v))),
  }
  return M.card(c), M.candidate(c)
end

local function missing_note(ctx, rules)
  return call(rules.missing, ctx) or ("No " .. md.text(ctx.display_name or ctx.category) .. " operations found in trace")
end

-- "# Reduce Analysis Findings": the category's name with a capital first
-- letter, as a heading (the name itself stays as the report spells it).
local function header(ctx, metrics)
  local name = tostring(ctx.display_name or metrics.category or ctx.category)
  return "# " .. md.text((name:gsub("^%l", string.upper))) .. " Analysis Findings"
end

--- The findings file of a failed analysis: the literal `Status: ERROR` the
--- orchestrator looks for, the error, and no findings.
function M.error_file(ctx, metrics)
  return table.concat({ header(ctx, metrics), "", "Status: ERROR", "",
    "The " .. md.text(ctx.display_name or ctx.category) .. " analysis failed: "
      .. md.text(metrics.error or "unknown error"),
    "", "No findings are given for this category.", "" }, "\n")
end

--- The findings file of a category without operations.
function M.no_data_file(ctx, metrics, rules)
  return table.concat({ header(ctx, metrics), "", missing_note(ctx, rules), "", "## Recommendations", "",
    "## Detailed Analysis", "" }, "\n")
end

--- The whole findings file of a compute-tier analyzer.
function M.render(ctx, metrics, rules)
  if metrics.status == "ERROR" then return M.error_file(ctx, metrics) end
  if metrics.status == "NO_DATA" or #(metrics.operations or {}) == 0 then
    return M.no_data_file(ctx, metrics, rules)
  end
  local out = { header(ctx, metrics), "", "## Summary", "" }
  append(out, prose().summary(ctx, metrics, call(rules.summary, metrics, ctx)))
  out[#out + 1] = ""
  for _, line in ipairs(call(rules.sections, metrics, ctx) or {}) do out[#out + 1] = line end
  local cards, blocks = {}, {}
  local joined = M.join(metrics)
  for i, f in ipairs(metrics.category_findings or {}) do
    cards[i], blocks[i] = finding_text(view(ctx, metrics, rules, f, joined[i]), rules)
  end
  out[#out + 1] = "## Recommendations"
  out[#out + 1] = ""
  if #cards == 0 then
    out[#out + 1] = prose().nothing_to_report(ctx, metrics)
    out[#out + 1] = ""
  end
  for _, c in ipairs(cards) do
    out[#out + 1] = c
    out[#out + 1] = ""
  end
  out[#out + 1] = "## Detailed Analysis"
  out[#out + 1] = ""
  for _, b in ipairs(blocks) do
    out[#out + 1] = b
    out[#out + 1] = ""
  end
  return table.concat(out, "\n")
end

--- The numeric step, guarded: the metrics of ctx's category, or an ERROR
--- metrics object carrying the error text when the analysis raised.
function M.analyze(ctx)
  local analysis = require "tracelens.analysis"
  local ok, metrics = pcall(analysis.run_category, ctx)
  if ok then return metrics end
  return json.obj("category", ctx.category, "status", "ERROR", "error", tostring(metrics),
    "comparison_scope", ctx.scope or "standalone")
end

--- An analyzer's whole job: metrics, then the findings file rendered by its rules.
function M.run(ctx, rules)
  local metrics = M.analyze(ctx)
  return { metrics = json.encode(metrics), findings = M.render(ctx, metrics, rules) }
end

return M

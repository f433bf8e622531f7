-- tracelens.validate.report — Level 3: the final analysis.md
-- (analysis-layer.md §12.5, agents-and-report.md §6.3). Messages come in the
-- reference's order: sections, executive-summary table, placeholders, Args
-- cells, Kernel Fusion Impact format, priority consistency (R1-R4),
-- reasoning-candidate counts (R5), report markers.
local json = require "tracelens.json"
local md = require "tracelens.md"
local markers = require "tracelens.validate.markers"
local outdir = require "tracelens.validate.outdir"
local rules = require "tracelens.validate.rules"
local text = require "tracelens.validate.text"

local M = {}

local function append(dst, src)
  for _, v in ipairs(src) do dst[#dst + 1] = v end
end

-- From the header at `at` to the next "\n## " (or the end).
local function section_from(s, at)
  local stop = text.find(s, "\n## ", at + 1)
  return s:sub(at, stop and stop - 1 or #s)
end

local function exec_summary_messages(s)
  local at = text.find(s, "## Executive Summary")
  if not at then return {} end
  local block = section_from(s, at)
  if not text.contains(block, "|") then return { "No metrics table found under ## Executive Summary" } end
  local messages = {}
  for _, row in ipairs(rules.METRICS_ROWS) do
    if not text.contains(block, row) then messages[#messages + 1] = "Missing metrics row: " .. row end
  end
  for _, p in ipairs(rules.METRICS_PLACEHOLDERS) do
    if text.contains(block, "| " .. p) then
      messages[#messages + 1] = "Placeholder value '" .. p .. "' in Executive Summary table"
    end
  end
  return messages
end

-- [FIX, Q3]: each known placeholder searched literally.
local function placeholder_messages(s)
  local found = {}
  for _, p in ipairs(rules.REPORT_PLACEHOLDERS) do
    if text.contains(s, p) then found[#found + 1] = p end
  end
  if #found == 0 then return {} end
  return { "Unfilled placeholders: " .. table.concat(found, ", ") }
end

-- Cells split as the reference's report scan does: strip("|") only, so an
-- indented row shifts its cells [KEEP, Q13]; an escaped `\|` is part of a
-- cell (GFM).
local function pipe_cells(line)
  local cells = md.split_pipes(text.strip(line, "|"))
  for i, c in ipairs(cells) do cells[i] = text.strip(c) end
  return cells
end

local function index_of(list, value)
  for i, v in ipairs(list) do
    if v == value then return i end
  end
  return nil
end

--- The non-empty Args cells of every table with an Args / Args (T1)
--- column: an array of {line = n, cell = text}.
function M.args_cells(s)
  local lines, out = text.splitlines(s), {}
  for h, header in ipairs(lines) do
    if rules.TABLE_HEADER:search(header) then
      local cols = pipe_cells(header)
      local col = index_of(cols, "Args (T1)") or index_of(cols, "Args")
      local r = h + 2
      while col and lines[r] and text.startswith(text.strip(lines[r]), "|") do
        local cell = pipe_cells(lines[r])[col]
        if cell and cell ~= "" then out[#out + 1] = { line = r, cell = cell } end
        r = r + 1
      end
    end
  end
  return out
end

local function args_messages(s, valid_args)
  if not valid_args or next(valid_args) == nil then return {} end
  local messages = {}
  for _, a in ipairs(M.args_cells(s)) do
    if not valid_args[a.cell] then
      messages[#messages + 1] = string.format("analysis.md line %d: Args cell does not match any operations[].args "
        .. "in category_data/*_metrics.json (paste verbatim, keep <br>): %s", a.line, a.cell)
    end
  end
  return messages
end

local function impact_format_error(impact, scope)
  if scope == "standalone" then
    if not rules.KF_IMPACT_STANDALONE:test(impact) then
      return "Kernel Fusion Impact format error: standalone mode requires 'impact_score: X.X (perf-model coverage "
        .. "Y/Z kernels)' but got: " .. impact
    end
  elseif rules.KF_COVERAGE:test(impact) then
    return "Kernel Fusion Impact format error: comparative mode should not include perf-model coverage "
      .. "parenthetical but got: " .. impact
  elseif not rules.KF_IMPACT_COMPARATIVE:test(impact) then
    return "Kernel Fusion Impact format error: comparative mode requires 'impact_score: X.X' but got: " .. impact
  end
  return nil
end

-- Every **Impact** line of the Kernel Fusion section; any scope but
-- "standalone" gets the comparative rule.
local function fusion_impact_messages(s, scope)
  local at = text.find(s, "## Kernel Fusion Opportunities")
  if not at then return {} end
  local messages = {}
  for _, line in ipairs(text.splitlines(section_from(s, at))) do
    if text.startswith(text.strip(line), "**Impact**") then
      local parts = text.split(line, "**Impact**")
      local impact = text.strip(text.lstrip(text.strip(parts[#parts]), ":"))
      local err = impact ~= "" and impact_format_error(impact, scope)
      if err then messages[#messages + 1] = err end
    end
  end
  return messages
end

-- Python `==` between a marker attribute (a string or None) and a JSON value.
local function same(attr, value) return attr == value end

local R3_KEYS = { { "low", "impact_score_low" }, { "mid", "impact_score" }, { "high", "impact_score_high" } }

-- R3: a marker value against its finding's value: within 0.005 when both
-- read as floats, else the same text ("null" for a null source).
local function r3_message(k, idx, attr, got, key, raw)
  local g, r = text.float(got), text.float(raw)
  local bad
  if g and r then bad = math.abs(g - r) > rules.MARKER_NUMERIC_TOL
  else bad = got ~= (raw == nil and "null" or text.str(raw)) end
  if not bad then return nil end
  return string.format("R3: P-item marker #%d %s=%s != findings[%d].%s=%s", k, attr, got, idx, key, text.str(raw))
end

local function p_item_messages(section, findings, messages)
  local k = 0
  for _, inner in ipairs(markers.begins(section)) do
    if markers.kind(inner) == "p_item" then
      k = k + 1
      local idx = k - 1
      if k > #findings then
        messages[#messages + 1] = string.format(
          "R2: extra kind=p_item marker #%d in Compute Kernel Optimizations beyond %d findings", k, #findings)
        return
      end
      local attrs, f = markers.attrs(inner), findings[k]
      local cat = outdir.field(f, "category")
      if not same(attrs.category, cat) then
        messages[#messages + 1] = string.format("R2: P-item marker #%d category=%s != findings[%d].category=%s",
          k, text.repr(attrs.category), idx, text.repr(cat))
      end
      for _, pair in ipairs(R3_KEYS) do
        local got = attrs[pair[1]]
        local err = got ~= nil and r3_message(k, idx, pair[1], got, pair[2], outdir.field(f, pair[2]))
        if err then messages[#messages + 1] = err end
      end
    end
  end
end

local function top_ops_rows(s)
  local _, _, body = rules.TOP_OPS_BLOCK:search(s)
  if not body then return nil end
  local n = 0
  for _, line in ipairs(text.splitlines(body)) do
    if text.startswith(text.lstrip(line), "|") and not rules.TABLE_SEPARATOR:test(line) then n = n + 1 end
  end
  return math.max(0, n - 1)
end

-- R1-R4 against priority_data.json.
local function priority_messages(s, pd)
  local at = text.find(s, "## Compute Kernel Optimizations")
  if not pd or not at then return {} end
  local findings, priorities = outdir.list(pd, "findings"), outdir.list(pd, "priorities")
  local section = section_from(s, at)
  local messages = {}
  local n_items = rules.count(rules.P_ITEM, section)
  if n_items ~= #findings then
    messages[#messages + 1] = string.format(
      "R1: Compute Kernel Optimizations has %d P-item headings but priority_data.json has %d findings",
      n_items, #findings)
  end
  p_item_messages(section, findings, messages)
  local rows = top_ops_rows(s)
  if rows and rows ~= #priorities then
    messages[#messages + 1] = string.format(
      "R4: Top Operations table has %d data rows but priority_data.json::priorities has %d entries", rows, #priorities)
  end
  return messages
end

-- The text of a Detailed Analysis subsection: after its header to the next
-- line starting "### " or "## ".
local function da_subsection(s, header)
  local da = text.find(s, "## Detailed Analysis")
  if not da then return nil end
  local da_text = s:sub(da)
  local at = text.find(da_text, header)
  if not at then return nil end
  local sub = da_text:sub(at + #header)
  local stop = #sub + 1
  for _, rx in ipairs({ rules.H3_LINE, rules.H2_LINE }) do
    local p = rx:search(sub)
    if p and p < stop then stop = p end
  end
  return sub:sub(1, stop - 1)
end

-- R5: #### P<N>: headings against candidate markers of the subsection's tier.
local function candidate_count_messages(s)
  local messages = {}
  for _, sub in ipairs(rules.DA_SUBSECTIONS) do
    local body = da_subsection(s, sub.header)
    if body then
      local n_headings, n_markers = rules.count(rules.DA_HEADING, body), 0
      for _, c in ipairs(rules.matches(rules.CANDIDATE, body)) do
        if c[1]:lower() == sub.tier then n_markers = n_markers + 1 end
      end
      if n_headings > 0 and n_markers ~= n_headings then
        messages[#messages + 1] = string.format("R5: %s has %d #### P<N>: headings but %d reasoning-candidate tier=%s markers",
          text.lstrip(sub.header, "# "), n_headings, n_markers, sub.tier)
      end
    end
  end
  return messages
end

--- Level 3 on the report's text. opts: scope (nil = "standalone"),
--- valid_args (a set of operations[].args strings, or nil to skip),
--- priority (decoded priority_data.json, or nil to skip R1-R4), rel (the
--- report's base name). Returns passed, messages.
function M.validate_text(s, opts)
  opts = opts or {}
  if text.len(text.strip(s)) < 100 then return false, { "<report is empty or too short>" } end
  local messages = {}
  for _, h in ipairs(rules.REPORT_HEADERS) do
    if not text.contains(s, "## " .. h) then messages[#messages + 1] = "Missing section: " .. h end
  end
  append(messages, exec_summary_messages(s))
  append(messages, placeholder_messages(s))
  append(messages, args_messages(s, opts.valid_args))
  append(messages, fusion_impact_messages(s, opts.scope or "standalone"))
  append(messages, priority_messages(s, opts.priority))
  append(messages, candidate_count_messages(s))
  append(messages, markers.check_report_text(s, opts.rel or "analysis.md"))
  return #messages == 0, messages
end

--- The union of operations[].args (strings) over every
--- category_data/*_metrics.json, as table cells (md.cell, as written); nil
--- when the directory is missing.
function M.valid_args(out)
  local dir = text.join(out, "category_data")
  if outdir.kind(dir) ~= "directory" then return nil end
  local valid = {}
  for _, name in ipairs(outdir.listdir(dir) or {}) do
    if text.endswith(name, "_metrics.json") then
      for _, op in ipairs(outdir.list(outdir.load_json(text.join(dir, name)), "operations")) do
        local args = outdir.field(op, "args")
        if type(args) == "string" then valid[text.strip(md.cell(args))] = true end
      end
    end
  end
  return valid
end

--- validate_report(out [, scope]) -> passed, messages. A nil scope is
--- resolved from the manifest [FIX, Q4].
function M.validate(out, scope)
  local path = text.join(out, "analysis.md")
  if not outdir.kind(path) then return false, { "<file not found>" } end
  local s = text.read(path)
  if not s then return false, { "<file not found>" } end
  local pd = outdir.load_json(text.join(out, "priority_data.json"))
  return M.validate_text(s, {
    scope = outdir.resolve_scope(out, scope),
    valid_args = M.valid_args(out),
    priority = json.is_obj(pd) and pd or nil,
    rel = "analysis.md",
  })
end

--- How the orchestrator's Step 11.1 prints the result.
function M.format(passed, messages) return text.pass_fail("All required sections present", passed, messages) end

return M

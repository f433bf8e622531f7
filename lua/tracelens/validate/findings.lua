-- tracelens.validate.findings — Level 1: one subagent findings file
-- (analysis-layer.md §12.3, agents-and-report.md §6.1).
local json = require "tracelens.json"
local md = require "tracelens.md"
local markers = require "tracelens.validate.markers"
local outdir = require "tracelens.validate.outdir"
local rules = require "tracelens.validate.rules"
local text = require "tracelens.validate.text"

local M = {}

-- "Relaxed empty": a compute file whose metrics say category_findings == [].
local function relaxed_empty(tier, metrics)
  if tier ~= "compute" then return false end
  local cf = outdir.field(metrics, "category_findings")
  return json.is_arr(cf) and #cf == 0
end

-- The non-empty strings of operations[].<key> as table cells (md.cell, as
-- the writers escape them; a value without Markdown specials is itself), as
-- a set (nil when none).
local function operation_strings(metrics, key)
  local set, any = {}, false
  for _, op in ipairs(outdir.list(metrics, "operations")) do
    local v = outdir.field(op, key)
    if type(v) == "string" and v ~= "" then
      set[text.strip(md.cell(v))] = true
      any = true
    end
  end
  return any and set or nil
end

-- Cells of a table line: strip, trim the outer pipes, split at the
-- unescaped pipes (an escaped `\|` is part of a cell, as GFM reads it),
-- strip each.
local function cells_of(line)
  local cells = md.split_pipes(text.strip(text.strip(line), "|"))
  for i, c in ipairs(cells) do cells[i] = text.strip(c) end
  return cells
end

-- Python's repr of a list of strings.
local function list_repr(items)
  local parts = {}
  for i, s in ipairs(items) do parts[i] = text.repr(s) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

-- Line ranges [first, stop) (1-based) of the tier=compute candidate blocks:
-- from a line holding a compute candidate marker to the next line holding
-- any candidate marker, or the end.
local function compute_blocks(lines)
  local starts = {}
  for i, line in ipairs(lines) do
    local s, e = rules.CANDIDATE:search(line)
    if s then starts[#starts + 1] = { line = i, marker = line:sub(s, e) } end
  end
  local blocks = {}
  for k, st in ipairs(starts) do
    if text.contains(st.marker, "tier=compute") then
      blocks[#blocks + 1] = { first = st.line, stop = starts[k + 1] and starts[k + 1].line or #lines + 1 }
    end
  end
  return blocks
end

-- The first table after a line that is exactly **Data:** within a block:
-- the header's line number and cells, and the body rows as {line, cells}.
local function data_table(lines, first, stop)
  local data
  for i = first, stop - 1 do
    if text.strip(lines[i]) == "**Data:**" then data = i break end
  end
  if not data then return nil end
  local header
  for i = data + 1, stop - 1 do
    if text.startswith(text.lstrip(lines[i]), "|") and text.endswith(text.rstrip(lines[i]), "|") then
      header = i
      break
    end
  end
  if not header or header + 1 >= stop then return nil end
  local rows = {}
  for i = header + 2, stop - 1 do
    if not text.startswith(text.strip(lines[i]), "|") then break end
    rows[#rows + 1] = { line = i, cells = cells_of(lines[i]) }
  end
  return { line = header, cells = cells_of(lines[header]), rows = rows }
end

local function starts_with_columns(cells, columns)
  for i, c in ipairs(columns) do
    if cells[i] ~= c then return false end
  end
  return true
end

-- Per Data table row: a non-empty cell at a fixed column must be one of the
-- metrics' values (skipped when there are none).
local CELL_CHECKS = {
  { cell = rules.ARGS_CELL, key = "args", what = "Args cell", hint = "(paste verbatim, keep <br>)" },
  { cell = rules.KERNEL_PATH_CELL, key = "launcher_path", what = "Kernel Path cell", hint = "(paste verbatim)" },
  { cell = rules.KERNEL_NAME_CELL, key = "kernel_name_trunc", what = "Kernel Name cell", hint = "(paste verbatim)",
    skip = "—" },
}

local function row_errors(row, metrics, metrics_name, errors)
  for _, check in ipairs(CELL_CHECKS) do
    local valid = operation_strings(metrics, check.key)
    local cell = row.cells[check.cell]
    if valid and cell and cell ~= "" and cell ~= check.skip and not valid[cell] then
      errors[#errors + 1] = string.format("%s on line %d does not match operations[].%s in %s %s: %s",
        check.what, row.line, check.key, metrics_name, check.hint, cell)
    end
  end
end

-- The compute-tier Data table checks of every compute candidate block.
local function data_table_errors(s, scope, metrics, metrics_name)
  local columns = scope == "comparative" and rules.DATA_COLUMNS.comparative or rules.DATA_COLUMNS.standalone
  local lines = text.splitlines(s)
  local errors = {}
  for _, block in ipairs(compute_blocks(lines)) do
    local tbl = data_table(lines, block.first, block.stop)
    if not tbl then
      errors[#errors + 1] = string.format("compute-tier reasoning-candidate block at line %d: no **Data:** table found",
        block.first)
    elseif not starts_with_columns(tbl.cells, columns) then
      errors[#errors + 1] = string.format("compute Data table at line %d: header must start with the %d canonical "
        .. "columns in order %s; got %s (sub_agent_spec.md § Operations Table Schema)",
        tbl.line, #columns, list_repr(columns), list_repr(tbl.cells))
    else
      for _, row in ipairs(tbl.rows) do row_errors(row, metrics, metrics_name, errors) end
    end
  end
  return errors
end

local function append(dst, src)
  for _, v in ipairs(src) do dst[#dst + 1] = v end
end

--- Level 1 on a findings file's text. opts: tier ("compute" | "system" |
--- "fusion"), scope (nil = "standalone"), rel (the file's base name, used in
--- marker messages), metrics (the decoded <stem>_metrics.json or nil),
--- metrics_name (its base name; default <stem of rel>_metrics.json).
--- Returns passed, errors.
function M.validate_text(s, opts)
  local tier = opts.tier
  local errors = {}
  local rec = text.find(s, "## Recommendations")
  local da = text.find(s, "## Detailed Analysis")
  for _, h in ipairs(rules.FINDINGS_HEADERS) do
    if not text.find(s, h) then errors[#errors + 1] = "Missing required section: " .. h end
  end
  if rec and da and rec > da then
    errors[#errors + 1] = "## Recommendations must appear before ## Detailed Analysis"
  end

  local relaxed = relaxed_empty(tier, opts.metrics)
  local n_items = 0
  if rec then
    local section = s:sub(rec, (da and da > rec) and da - 1 or #s)
    n_items = rules.count(rules.P_ITEM, section)
    if not relaxed then
      if n_items == 0 then errors[#errors + 1] = "No ### P<N>: items found under ## Recommendations" end
      for _, label in ipairs(rules.CARD_LABELS) do
        if not text.contains(section, label) then
          errors[#errors + 1] = string.format("Missing label %s in ## Recommendations (required for %s tier)", label, tier)
        end
      end
    end
  end

  local candidates = da and rules.matches(rules.CANDIDATE, s:sub(da)) or {}
  if da and not relaxed and #candidates == 0 then
    errors[#errors + 1] = "No <!-- reasoning-candidate --> blocks in ## Detailed Analysis"
  end
  if not relaxed and n_items > 0 and #candidates > 0 and n_items ~= #candidates then
    errors[#errors + 1] = string.format("P-item count (%d) does not match reasoning-candidate count (%d)",
      n_items, #candidates)
  end
  local wrong = {}
  for _, c in ipairs(candidates) do
    if c[1]:lower() ~= tier then wrong[#wrong + 1] = string.format("tier=%s rank=%s", c[1], c[2]) end
  end
  if #wrong > 0 then
    errors[#errors + 1] = string.format("reasoning-candidate tier mismatch: expected tier=%s, found %s",
      tier, table.concat(wrong, ", "))
  end

  if tier == "compute" then
    local metrics_name = opts.metrics_name or (outdir.stem(opts.rel or "") .. "_metrics.json")
    append(errors, data_table_errors(s, opts.scope, opts.metrics, metrics_name))
  end
  local file_class = tier == "compute" and "category_findings" or "system_findings"
  append(errors, markers.check_findings_text(s, opts.rel or "findings.md", file_class, relaxed))
  return #errors == 0, errors
end

--- validate_findings_file(path, tier [, scope]) -> passed, errors. The
--- metrics file is category_data/<stem>_metrics.json of the output directory
--- above the file's directory; a nil scope is resolved from that directory's
--- manifest [FIX, Q4].
function M.validate_file(path, tier, scope)
  local kind = outdir.kind(path)
  if not kind then return false, { "File not found: " .. path } end
  local s, err = text.read(path)
  if not s then return false, { "Cannot read " .. path .. ": " .. tostring(err) } end
  local metrics_path = outdir.metrics_for_findings(path)
  return M.validate_text(s, {
    tier = tier,
    scope = outdir.resolve_scope(outdir.out_of_findings(path), scope),
    rel = text.basename(path),
    metrics = (outdir.load_json(metrics_path)),
    metrics_name = text.basename(metrics_path),
  })
end

return M

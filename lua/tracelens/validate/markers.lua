-- tracelens.validate.markers — the reference's MarkerValidator
-- (analysis-layer.md §12.2): the <!-- impact-begin ... --> /
-- <!-- impact-end --> markers of findings files and of analysis.md.
local rules = require "tracelens.validate.rules"
local text = require "tracelens.validate.text"

local M = {}

--- The attributes of a marker's inner text as a dict (a repeated key keeps
--- its last value).
function M.attrs(inner)
  local attrs = {}
  for _, m in ipairs(rules.matches(rules.ATTR, inner)) do attrs[m[1]] = m[2] end
  return attrs
end

--- The kind= of a marker's inner text, or nil.
function M.kind(inner)
  local _, _, kind = rules.KIND_ATTR:search(inner)
  return kind
end

--- The inner texts of the begin markers in text, in order.
function M.begins(s)
  local inners = {}
  for _, m in ipairs(rules.matches(rules.BEGIN, s)) do inners[#inners + 1] = m[1] end
  return inners
end

local function count_kind(s, kind)
  local n = 0
  for _, inner in ipairs(M.begins(s)) do
    if M.kind(inner) == kind then n = n + 1 end
  end
  return n
end

-- Some but not all of the present low/mid/high are "null".
local function mixes_null(attrs)
  local present, nulls = 0, 0
  for _, a in ipairs({ "low", "mid", "high" }) do
    if attrs[a] ~= nil then
      present = present + 1
      if attrs[a] == "null" then nulls = nulls + 1 end
    end
  end
  return nulls > 0 and nulls < present
end

--- MarkerValidator.scan(text, rel) -> errors, seen_kinds (a set).
function M.scan(s, rel)
  local errors, seen = {}, {}
  local inners = M.begins(s)
  local n_end = rules.count(rules.END, s)
  if #inners ~= n_end then
    errors[#errors + 1] = string.format("%s: marker pairing mismatch (%d begin vs %d end)", rel, #inners, n_end)
  end
  for _, inner in ipairs(inners) do
    local kind = M.kind(inner)
    if not kind then
      errors[#errors + 1] = rel .. ": impact-begin missing kind= attribute: " .. text.strip(inner)
    else
      seen[kind] = true
      if not rules.KNOWN_KINDS[kind] then
        errors[#errors + 1] = rel .. ": unknown kind=" .. kind
      else
        local attrs = M.attrs(inner)
        for _, required in ipairs(rules.REQUIRED_ATTRS[kind] or {}) do
          if attrs[required] == nil then
            errors[#errors + 1] = string.format("%s: kind=%s missing required attr %s", rel, kind, required)
          end
        end
        if mixes_null(attrs) then
          errors[#errors + 1] = string.format("%s: kind=%s mixes null and numeric values in low/mid/high", rel, kind)
        end
      end
    end
  end
  return errors, seen
end

-- Each reasoning-candidate block (from the end of its marker to the next
-- marker or the end) needs a detail_estimate marker or the sentinel.
local function detail_estimate_errors(s, rel)
  local errors = {}
  local candidates = rules.matches(rules.CANDIDATE, s)
  for i, c in ipairs(candidates) do
    local stop = candidates[i + 1] and candidates[i + 1].first - 1 or #s
    local block = s:sub(c.last + 1, stop)
    if count_kind(block, "detail_estimate") == 0 and not rules.NOT_QUANTIFIABLE:test(block) then
      -- the reference prints the tier (group 1) after "rank=" [KEEP, Q25]
      errors[#errors + 1] = string.format("%s: reasoning-candidate rank=%s missing kind=detail_estimate marker "
        .. "or 'not quantifiable from trace data' sentinel", rel, c[1])
    end
  end
  return errors
end

--- MarkerValidator.check_findings_file on a file's text: file_class is
--- "category_findings" or "system_findings".
function M.check_findings_text(s, rel, file_class, skip_p_item_required)
  local errors, seen = M.scan(s, rel)
  local p_item_required = file_class == "system_findings"
    or (file_class == "category_findings" and not skip_p_item_required)
  if p_item_required and not seen.p_item then
    errors[#errors + 1] = rel .. ": missing required kind=p_item"
  end
  local n_headings, n_markers = rules.count(rules.P_ITEM, s), count_kind(s, "p_item")
  if n_headings > 0 and n_markers > 0 and n_headings ~= n_markers then
    errors[#errors + 1] = string.format("%s: %d ### P<N>: headings but %d kind=p_item markers", rel, n_headings, n_markers)
  end
  for _, e in ipairs(detail_estimate_errors(s, rel)) do errors[#errors + 1] = e end
  return errors
end

--- MarkerValidator.check_findings_file(path, file_class, skip_p_item_required).
function M.check_findings_file(path, file_class, skip_p_item_required)
  local s = assert(text.read(path))
  return M.check_findings_text(s, text.basename(path), file_class, skip_p_item_required)
end

--- MarkerValidator.check_report on the report's text.
function M.check_report_text(s, rel)
  local errors, seen = M.scan(s, rel)
  if not seen.top_ops then errors[#errors + 1] = rel .. ": missing required kind=top_ops" end
  return errors
end

--- MarkerValidator.check_report(path).
function M.check_report(path)
  local s = assert(text.read(path))
  return M.check_report_text(s, text.basename(path))
end

return M

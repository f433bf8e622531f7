-- jsoncmp.lua — compares a JSON value we produced with a reference value by
-- the analysis layer's golden rules (analysis-layer.md, "Golden comparison
-- rules"): same keys in the same order, same number kinds (int vs float),
-- strings exact (after the caller's path substitutions), numbers within a
-- tolerance the caller chooses per path. Returns a list of differences.
local json = require "tracelens.json"

local M = {}

local function kind(v)
  if v == nil or json.is_null(v) then return "null" end
  local t = type(v)
  if t == "number" then return math.type(v) end
  if t == "table" then return json.is_obj(v) and "object" or "array" end
  return t
end

-- opts.tolerance(path, ours, ref) -> true when the numbers are close enough
-- (default: exact); opts.ignore(path) -> true to skip a subtree;
-- opts.kind_free(path) -> true when int/float may differ.
function M.compare(ours, ref, opts, path, out)
  opts, path, out = opts or {}, path or "$", out or {}
  if opts.ignore and opts.ignore(path) then return out end
  local ko, kr = kind(ours), kind(ref)
  local numeric = (ko == "integer" or ko == "float") and (kr == "integer" or kr == "float")
  if ko ~= kr and not (numeric and opts.kind_free and opts.kind_free(path)) then
    out[#out + 1] = string.format("%s: kind %s (%s), reference %s (%s)", path, ko, tostring(ours), kr, tostring(ref))
    return out
  end
  if kr == "object" then
    local ka, kb = json.keys(ours), json.keys(ref)
    if table.concat(ka, "\1") ~= table.concat(kb, "\1") then
      out[#out + 1] = string.format("%s: keys [%s], reference [%s]", path, table.concat(ka, ", "), table.concat(kb, ", "))
    end
    for _, k in ipairs(kb) do
      if ours[k] ~= nil then M.compare(ours[k], ref[k], opts, path .. "." .. k, out) end
    end
  elseif kr == "array" then
    if #ours ~= #ref then out[#out + 1] = string.format("%s: %d items, reference %d", path, #ours, #ref) end
    for i = 1, math.min(#ours, #ref) do M.compare(ours[i], ref[i], opts, path .. "[" .. i .. "]", out) end
  elseif numeric then
    local same = ours == ref or (ours ~= ours and ref ~= ref)
    if not same and not (opts.tolerance and opts.tolerance(path, ours, ref)) then
      out[#out + 1] = string.format("%s: %s, reference %s", path, json.number_text(ours), json.number_text(ref))
    end
  elseif ours ~= ref then
    out[#out + 1] = string.format("%s: %q, reference %q", path, tostring(ours), tostring(ref))
  end
  return out
end

--- A tolerance for rounded values: one unit in the last decimal of ref.
function M.last_unit(ours, ref)
  local s = json.number_text(ref)
  local dec = s:match("%.(%d+)$")
  local unit = dec and 10 ^ -#dec or 1
  return math.abs(ours - ref) <= unit * 1.0000001
end

--- perf-report §0.3 time tolerance.
function M.time_close(ours, ref)
  local d = math.abs(ours - ref)
  return d <= 1e-3 or d <= 1e-4 * math.abs(ref)
end

return M

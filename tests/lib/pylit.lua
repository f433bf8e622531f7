-- pylit.lua — parses the Python-literal text of report cells (tuples,
-- lists, dicts, strings, numbers, True/False/None), after stripping numpy's
-- np.float64(...) / np.int64(...) wrappers, and compares two parsed values
-- with a numeric tolerance (perf-report spec §0.3 rule 4).
local M = {}

local function strip_numpy(s)
  return (s:gsub("np%.%a+%d*%(([^()]*)%)", "%1"))
end

local function parser(s)
  local i = 1
  local function ws() i = s:find("[^ \t\r\n]", i) or (#s + 1) end
  local value
  local function str()
    local q = s:sub(i, i)
    i = i + 1
    local out = {}
    while i <= #s do
      local c = s:sub(i, i)
      if c == "\\" then
        local e = s:sub(i + 1, i + 1)
        local map = {n = "\n", t = "\t", r = "\r", ["\\"] = "\\", ["'"] = "'", ['"'] = '"'}
        if e == "x" then
          out[#out + 1] = string.char(tonumber(s:sub(i + 2, i + 3), 16))
          i = i + 4
        else
          out[#out + 1] = map[e] or e
          i = i + 2
        end
      elseif c == q then
        i = i + 1
        break
      else
        out[#out + 1] = c
        i = i + 1
      end
    end
    return {t = "str", v = table.concat(out)}
  end
  local function seq(close, kind)
    i = i + 1
    local items = {}
    ws()
    while s:sub(i, i) ~= close and i <= #s do
      local k = value()
      ws()
      if s:sub(i, i) == ":" then
        i = i + 1
        local v = value()
        items[#items + 1] = {k, v}
        kind = "dict"
      else
        items[#items + 1] = k
      end
      ws()
      if s:sub(i, i) == "," then i = i + 1 end
      ws()
    end
    i = i + 1
    return {t = kind, v = items}
  end
  value = function()
    ws()
    local c = s:sub(i, i)
    if c == "'" or c == '"' then return str() end
    if c == "(" then return seq(")", "seq") end
    if c == "[" then return seq("]", "seq") end
    if c == "{" then return seq("}", "dict") end
    local tok = s:match("^[^,%]%)}:%s]+", i) or ""
    i = i + #tok
    if tok == "True" then return {t = "bool", v = true} end
    if tok == "False" then return {t = "bool", v = false} end
    if tok == "None" or tok == "nan" or tok == "" then return {t = "none"} end
    local n = tonumber(tok)
    if n then return {t = "num", v = n} end
    return {t = "str", v = tok}
  end
  return value
end

function M.parse(s)
  local v = parser(strip_numpy(s))()
  return v
end

-- Equal within tolerance: |a-b| <= abs or <= rel*|b|.
local function num_eq(a, b, rel, abs)
  if a == b then return true end
  if a ~= a and b ~= b then return true end
  return math.abs(a - b) <= abs or math.abs(a - b) <= rel * math.abs(b)
end
M.num_eq = num_eq

function M.equal(a, b, rel, abs)
  if a.t ~= b.t then
    return false
  end
  if a.t == "num" then return num_eq(a.v, b.v, rel, abs) end
  if a.t == "str" or a.t == "bool" then return a.v == b.v end
  if a.t == "none" then return true end
  if #a.v ~= #b.v then return false end
  for k = 1, #a.v do
    local x, y = a.v[k], b.v[k]
    if a.t == "dict" then
      if not (M.equal(x[1], y[1], rel, abs) and M.equal(x[2], y[2], rel, abs)) then return false end
    elseif not M.equal(x, y, rel, abs) then
      return false
    end
  end
  return true
end

return M

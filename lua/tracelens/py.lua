-- tracelens.py — the few Python behaviours the reference's numbers depend on.
--
-- Owns: round(x, n) (half-to-even on the binary value; integers stay
-- integers), str() of numbers (float repr), the Python-literal reader used for
-- report cells such as `Input Dims` (tuples, lists, dicts, strings, numbers,
-- True/False/None), and the torch dtype names the analyses print.
local json = require "tracelens.json"

local M = {}

--- Python round(x, n): glibc's "%.nf" rounds the exact binary value half to
--- even, exactly like CPython; integers pass through unchanged.
function M.round(x, n)
  if x == nil or json.is_null(x) then return x end
  if math.type(x) == "integer" then return x end
  if x ~= x or x == math.huge or x == -math.huge then return x end
  return tonumber(string.format("%." .. n .. "f", x)) + 0.0
end

-- Sequences the literal reader read from "(...)": Python tuples (the others
-- were lists); their repr differs.
local tuples = setmetatable({}, { __mode = "k" })

--- Python repr() of a literal's value: numbers as Python prints them, 'text'
--- quoted, tuples (a, b) / (a,), lists [a, b], None/True/False.
function M.repr(v)
  if type(v) == "string" then
    local q = (v:find("'", 1, true) and not v:find('"', 1, true)) and '"' or "'"
    local body = v:gsub("\\", "\\\\"):gsub("\n", "\\n"):gsub("\r", "\\r"):gsub("\t", "\\t")
    if q == "'" then body = body:gsub("'", "\\'") end
    return q .. body .. q
  end
  if type(v) == "table" and not json.is_null(v) and not json.is_obj(v) then
    local parts = {}
    for i, x in ipairs(v) do parts[i] = M.repr(x) end
    if tuples[v] then return "(" .. table.concat(parts, ", ") .. (#parts == 1 and "," or "") .. ")" end
    return "[" .. table.concat(parts, ", ") .. "]"
  end
  return M.str(v)
end

--- A number that is there: not nil, not NaN (pandas' missing cell); else nil.
function M.num(v)
  if type(v) == "number" and v == v then return v end
  return nil
end

--- str() of a value: numbers as Python prints them, None/True/False, text as
--- it is, sequences as their repr, objects as a dict repr in key order
--- ({'a': 1}). A value Python has no literal for (a function, userdata)
--- gives its __tostring, or `<function>` / `<userdata>`: never an address,
--- so text stays the same from run to run.
function M.str(v)
  if type(v) == "number" then return json.number_text(v) end
  if v == nil or json.is_null(v) then return "None" end
  if v == true then return "True" elseif v == false then return "False" end
  if type(v) == "string" then return v end
  if type(v) == "table" and json.is_obj(v) then
    local parts = {}
    for k, x in pairs(v) do parts[#parts + 1] = M.repr(k) .. ": " .. M.repr(x) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  if type(v) == "table" then return M.repr(v) end
  local t = tostring(v) -- a __tostring of its own, or Lua's "function: 0x55d0..."
  if t:find("0x%x%x%x%x") or t:match("^[%w_.]+: %x+$") then return "<" .. type(v) .. ">" end
  return t
end

--- Python f"{x:.Nf}".
function M.fixed(x, n) return string.format("%." .. n .. "f", x) end

-- Python literal reader ----------------------------------------------------

local function skip(s, i) return s:find("[^ \t\r\n]", i) or #s + 1 end

local read_value

-- CPython's parser gives up on literals nested deeper than this ("too many
-- nested parentheses"); so does this reader, which keeps its recursion short.
local MAX_NESTING = 200

local function read_string(s, i)
  local q = s:sub(i, i)
  local out, j = {}, i + 1
  while j <= #s do
    local c = s:sub(j, j)
    if c == q then return table.concat(out), j + 1 end
    if c == "\\" then
      local e = s:sub(j + 1, j + 1)
      local map = { n = "\n", t = "\t", r = "\r", ["\\"] = "\\", ["'"] = "'", ['"'] = '"', ["0"] = "\0" }
      if map[e] then
        out[#out + 1] = map[e]
        j = j + 2
      elseif e == "x" then
        out[#out + 1] = utf8.char(tonumber(s:sub(j + 2, j + 3), 16))
        j = j + 4
      elseif e == "u" then
        out[#out + 1] = utf8.char(tonumber(s:sub(j + 2, j + 5), 16))
        j = j + 6
      else
        out[#out + 1] = "\\" .. e
        j = j + 2
      end
    else
      out[#out + 1] = c
      j = j + 1
    end
  end
  error("unterminated string", 0)
end

local function read_sequence(s, i, close, depth)
  local a = json.arr()
  if close == ")" then tuples[a] = true end
  i = skip(s, i)
  while s:sub(i, i) ~= close do
    local v
    v, i = read_value(s, i, depth)
    a[#a + 1] = v
    i = skip(s, i)
    local c = s:sub(i, i)
    if c == "," then
      i = skip(s, i + 1)
    elseif c ~= close then
      error("expected ',' or '" .. close .. "'", 0)
    end
  end
  return a, i + 1
end

read_value = function(s, i, depth)
  i = skip(s, i)
  local c = s:sub(i, i)
  if (c == "(" or c == "[" or c == "{") and depth >= MAX_NESTING then error("too many nested parentheses", 0) end
  if c == "(" then return read_sequence(s, i + 1, ")", depth + 1) end
  if c == "[" then return read_sequence(s, i + 1, "]", depth + 1) end
  if c == "{" then
    local o = json.obj()
    i = skip(s, i + 1)
    while s:sub(i, i) ~= "}" do
      local k, v
      k, i = read_value(s, i, depth + 1)
      i = skip(s, i)
      if s:sub(i, i) ~= ":" then error("expected ':'", 0) end
      v, i = read_value(s, i + 1, depth + 1)
      o[type(k) == "number" and json.number_text(k) or tostring(k)] = v
      i = skip(s, i)
      if s:sub(i, i) == "," then i = skip(s, i + 1) elseif s:sub(i, i) ~= "}" then error("expected ',' or '}'", 0) end
    end
    return o, i + 1
  end
  if c == "'" or c == '"' then return read_string(s, i) end
  local word = s:match("^[%a_][%w_]*", i)
  if word == "True" then return true, i + 4 end
  if word == "False" then return false, i + 5 end
  if word == "None" then return json.null, i + 4 end
  if word then error("not a literal: " .. word, 0) end
  local num = s:match("^[-+]?%d*%.?%d*[eE][-+]?%d+", i) or s:match("^[-+]?%d*%.?%d*", i)
  if num == nil or num == "" or num == "-" or num == "+" or num == "." then error("unexpected '" .. c .. "'", 0) end
  local v
  if num:find("[.eE]") then v = tonumber(num) + 0.0 else v = math.tointeger(tonumber(num)) or tonumber(num) end
  if v == nil then error("bad number " .. num, 0) end
  return v, i + #num
end

--- ast.literal_eval(s): the value, or nil and a message when s is not a literal.
function M.literal(s)
  if type(s) ~= "string" then return nil, "not a string" end
  local ok, v, i = pcall(read_value, s, 1, 0)
  if not ok then return nil, v end
  if skip(s, i) <= #s then return nil, "trailing text" end
  return v
end

local dtype_map = {
  ["float"] = "fp32", ["double"] = "fp64", ["c10::half"] = "fp16", ["c10::bfloat16"] = "bf16",
  ["c10::float8_e4m3fnuz"] = "fp8", ["unsigned char"] = "fp8", ["fp8"] = "fp8", ["fp4"] = "fp4",
  ["mxfp4"] = "fp4", ["c10::float4_e2m1fn_x2"] = "fp4", ["c10::float8_e4m3fn"] = "fp8",
}

--- The reference's torch_dtype_map (lower-cased lookup), or nil when unmapped.
function M.torch_dtype(name) return dtype_map[tostring(name):lower()] end

return M

-- tracelens.json — JSON the way the reference writes it, and back.
--
-- Owns: ordered objects (key order = first assignment, as in Python dicts),
-- the array marker (so an empty array and an empty object differ), the null
-- value, the encoder (Python's json.dump(obj, indent=2): ensure_ascii, float
-- repr, integers stay integers, no trailing newline) and an order-keeping
-- decoder (integers -> Lua integers, other numbers -> floats).
--
-- Rules for values: nil means "absent" (an object field set to nil is not
-- written); json.null is JSON null (cjson.null is accepted too). A plain Lua
-- table is an array when it is a non-empty sequence or empty, else an object
-- with its keys sorted. Use json.obj() / json.arr() where the kind or the key
-- order matters.
local M = {}

local OBJ, ARR = {}, {}
local key_lists = setmetatable({}, { __mode = "k" })

M.null = setmetatable({}, { __name = "json.null", __tostring = function() return "null" end })

local function keys_of(t)
  local ks = key_lists[t]
  if not ks then
    ks = { list = {}, set = {} }
    key_lists[t] = ks
  end
  return ks
end

OBJ.__newindex = function(t, k, v)
  if v == nil then return end
  local ks = keys_of(t)
  if not ks.set[k] then
    ks.set[k] = true
    ks.list[#ks.list + 1] = k
  end
  rawset(t, k, v)
end

-- Iterates the keys that still hold a value, in first-assignment order.
local function ordered_next(t)
  local list, i = keys_of(t).list, 0
  return function()
    while true do
      i = i + 1
      local k = list[i]
      if k == nil then return nil end
      local v = rawget(t, k)
      if v ~= nil then return k, v end
    end
  end
end

OBJ.__pairs = function(t) return ordered_next(t), t, nil end
OBJ.__name = "json.object"

--- json.obj(k1, v1, k2, v2, ...): a new ordered object (nil values are skipped).
function M.obj(...)
  local o = setmetatable({}, OBJ)
  keys_of(o)
  for i = 1, select("#", ...), 2 do
    local k, v = select(i, ...)
    if v ~= nil then o[k] = v end
  end
  return o
end

--- json.arr([t]): marks t (default a new table) as an array.
function M.arr(t) return setmetatable(t or {}, ARR) end

function M.is_obj(v) return getmetatable(v) == OBJ end
function M.is_arr(v) return getmetatable(v) == ARR end
local has_cjson, cjson = pcall(require, "cjson")
local cjson_null = has_cjson and cjson.null or M.null
function M.is_null(v) return v == M.null or v == cjson_null end

--- A value that is there: not nil and not JSON null.
function M.present(v) return v ~= nil and not M.is_null(v) end

--- The keys of an ordered object, in order.
function M.keys(o)
  local out = {}
  for k in ordered_next(o) do out[#out + 1] = k end
  return out
end

--- A shallow copy of an ordered object (same key order).
function M.copy(o)
  local c = M.obj()
  for k, v in pairs(o) do c[k] = v end
  return c
end

-- Python float repr: the shortest digits that read back to x, positional for
-- 1e-4 <= |x| < 1e16, else d.ddde+XX.
local c_repr = tl and tl.float_repr -- C (util/pyfmt.c); absent outside tracelens
local function repr_float(x)
  if x ~= x then return "NaN" end
  if x == math.huge then return "Infinity" end
  if x == -math.huge then return "-Infinity" end
  if x == 0 then return (1 / x < 0) and "-0.0" or "0.0" end
  if c_repr then
    local s = c_repr(x) -- nil for a power of two: the search below, as before
    if s then return s end
  end
  local s
  for p = 0, 16 do
    s = string.format("%." .. p .. "e", x)
    if tonumber(s) == x then break end
  end
  local sign, d1, rest, exp = s:match("^(-?)(%d)%.?(%d*)e([-+]%d+)$")
  local digits = (d1 .. rest):gsub("0+$", "")
  if digits == "" then digits = "0" end
  local e = tonumber(exp)
  if e >= -4 and e < 16 then
    local n = #digits
    if e >= 0 then
      local int = digits:sub(1, e + 1)
      if #int < e + 1 then int = int .. string.rep("0", e + 1 - #int) end
      local frac = digits:sub(e + 2)
      if frac == "" then frac = "0" end
      return sign .. int .. "." .. frac
    end
    return sign .. "0." .. string.rep("0", -e - 1) .. digits:sub(1, n)
  end
  local mant = digits:sub(1, 1)
  if #digits > 1 then mant = mant .. "." .. digits:sub(2) end
  return string.format("%s%se%s%02d", sign, mant, e < 0 and "-" or "+", math.abs(e))
end
M.repr_float = repr_float

--- Python repr/str of a number: integers as digits, floats as repr.
function M.number_text(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  return repr_float(x)
end

local escapes = { ['"'] = '\\"', ["\\"] = "\\\\", ["\n"] = "\\n", ["\r"] = "\\r", ["\t"] = "\\t",
  ["\b"] = "\\b", ["\f"] = "\\f" }

local function encode_string(s)
  -- printable ASCII without a quote or a backslash is written as it is
  if not s:find('[%c"\\\128-\255]') then return '"' .. s .. '"' end
  local out, n = {}, 0
  local ok = pcall(function()
    for _, c in utf8.codes(s) do
      n = n + 1
      if c < 0x20 or c == 0x22 or c == 0x5c then
        local ch = string.char(c)
        out[n] = escapes[ch] or string.format("\\u%04x", c)
      elseif c < 0x7f then
        out[n] = string.char(c)
      elseif c < 0x10000 then
        out[n] = string.format("\\u%04x", c)
      else
        local v = c - 0x10000
        out[n] = string.format("\\u%04x\\u%04x", 0xd800 + (v >> 10), 0xdc00 + (v & 0x3ff))
      end
    end
  end)
  if not ok then -- not UTF-8: escape the bytes as Latin-1, as Python would after a lossy decode
    out, n = {}, 0
    for i = 1, #s do
      local c = s:byte(i)
      n = n + 1
      if c < 0x20 or c == 0x22 or c == 0x5c then
        out[n] = escapes[string.char(c)] or string.format("\\u%04x", c)
      elseif c < 0x7f then
        out[n] = string.char(c)
      else
        out[n] = string.format("\\u%04x", c)
      end
    end
  end
  return '"' .. table.concat(out) .. '"'
end

local function is_sequence(t)
  local n = #t
  if n == 0 then return next(t) == nil end
  local count = 0
  for _ in pairs(t) do count = count + 1 end
  return count == n
end

-- The encoder and the decoder keep the open containers on an explicit stack
-- (a table each), not on the call stack: a value can be nested as deep as the
-- call tree it was made from, and no depth ends in "stack overflow". The
-- encoder refuses values nested deeper than MAX_ENCODE_DEPTH: with indent=2
-- the text grows with the square of the depth (a chain 200,000 deep would be
-- 80 GB), and Python's json.dump gives up near 1,000 levels too.
local MAX_ENCODE_DEPTH = 1000

-- Writes a scalar's text into buf, or opens a table: "{}" / "[]" when it is
-- empty, else its opening bracket, and returns its frame (nil for the rest).
-- depth: the containers already open.
local function encode_open(v, indent, buf, open, depth)
  local tv = type(v)
  if v == nil or M.is_null(v) then
    buf[#buf + 1] = "null"
  elseif tv == "boolean" then
    buf[#buf + 1] = v and "true" or "false"
  elseif tv == "number" then
    buf[#buf + 1] = M.number_text(v)
  elseif tv == "string" then
    buf[#buf + 1] = encode_string(v)
  elseif tv == "table" then
    local mt, keys = getmetatable(v), nil
    if mt == OBJ then
      keys = M.keys(v)
    elseif not (mt == ARR or is_sequence(v)) then
      keys = {}
      for k in pairs(v) do keys[#keys + 1] = k end
      table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    end
    local n = keys and #keys or #v
    if n == 0 then
      buf[#buf + 1] = keys and "{}" or "[]"
      return nil
    end
    -- Python's json raises on a circular reference; so does this
    if open[v] then error("JSON: circular reference (a table holds itself)", 0) end
    if depth >= MAX_ENCODE_DEPTH then error("JSON: value nested deeper than " .. MAX_ENCODE_DEPTH .. " levels", 0) end
    open[v] = true
    buf[#buf + 1] = keys and "{\n" or "[\n"
    return { v = v, keys = keys, n = n, i = 0, indent = indent, inner = indent .. "  " }
  else
    -- json.dump(default=str) renders what JSON cannot hold as its text
    buf[#buf + 1] = encode_string(tostring(v))
  end
  return nil
end

local function encode_value(v, buf)
  local open, stack = {}, {}
  stack[1] = encode_open(v, "", buf, open, 0)
  while #stack > 0 do
    local f = stack[#stack]
    if f.i > 0 then buf[#buf + 1] = f.i < f.n and ",\n" or "\n" end -- after item i
    if f.i == f.n then
      buf[#buf + 1] = f.indent .. (f.keys and "}" or "]")
      open[f.v] = nil
      stack[#stack] = nil
    else
      f.i = f.i + 1
      buf[#buf + 1] = f.inner
      local x
      if f.keys then
        local k = f.keys[f.i]
        buf[#buf + 1] = encode_string(tostring(k))
        buf[#buf + 1] = ": "
        x = f.v[k]
      else
        x = f.v[f.i]
      end
      stack[#stack + 1] = encode_open(x, f.inner, buf, open, #stack)
    end
  end
end

--- json.encode(v): the text of json.dumps(v, indent=2) (no trailing newline).
function M.encode(v)
  local buf = {}
  encode_value(v, buf)
  return table.concat(buf)
end

-- Decoder ------------------------------------------------------------------

local function decode_error(text, pos, what)
  error(string.format("JSON: byte %d: %s", pos, what), 0)
end

local function skip_ws(text, pos)
  return text:find("[^ \t\r\n]", pos) or #text + 1
end

local function utf8_char(c) return utf8.char(c) end

local function decode_string(text, pos)
  -- pos is at the opening quote; a string without escapes is one slice
  local q = text:find('["\\]', pos + 1)
  if q and text:byte(q) == 34 then return text:sub(pos + 1, q - 1), q + 1 end
  local out, i = {}, pos + 1
  while true do
    local j = text:find('["\\]', i)
    if not j then decode_error(text, pos, "unterminated string") end
    out[#out + 1] = text:sub(i, j - 1)
    if text:sub(j, j) == '"' then return table.concat(out), j + 1 end
    local e = text:sub(j + 1, j + 1)
    local simple = ({ b = "\b", f = "\f", n = "\n", r = "\r", t = "\t", ['"'] = '"', ["\\"] = "\\", ["/"] = "/" })[e]
    if simple then
      out[#out + 1] = simple
      i = j + 2
    elseif e == "u" then
      local hex = text:sub(j + 2, j + 5)
      if not hex:match("^%x%x%x%x$") then decode_error(text, j, "bad \\u escape") end
      local c = tonumber(hex, 16)
      i = j + 6
      if c >= 0xd800 and c < 0xdc00 and text:sub(i, i + 1) == "\\u" then
        local lo = tonumber(text:sub(i + 2, i + 5), 16)
        if lo and lo >= 0xdc00 and lo < 0xe000 then
          c = 0x10000 + ((c - 0xd800) << 10) + (lo - 0xdc00)
          i = i + 6
        end
      end
      out[#out + 1] = utf8_char(c)
    else
      decode_error(text, j, "bad escape")
    end
  end
end

local literals = { ["true"] = true, ["false"] = false }

-- A value that is not an array or an object, at pos.
local function decode_scalar(text, pos, c)
  if c == '"' then return decode_string(text, pos) end
  local word = text:match("^[%a]+", pos)
  if word then
    if literals[word] ~= nil then return literals[word], pos + #word end
    if word == "null" then return M.null, pos + 4 end
    if word == "NaN" then return 0 / 0, pos + 3 end
    if word == "Infinity" then return math.huge, pos + 8 end
    decode_error(text, pos, "unexpected '" .. word .. "'")
  end
  if text:sub(pos, pos + 8) == "-Infinity" then return -math.huge, pos + 9 end
  local num = text:match("^-?%d+%.?%d*[eE]?[-+]?%d*", pos)
  if not num or num == "" or num == "-" then decode_error(text, pos, "unexpected character") end
  local v
  if num:find("[.eE]") then
    v = tonumber(num)
    if v then v = v + 0.0 end
  else
    v = math.tointeger(tonumber(num)) or tonumber(num .. ".0")
  end
  if v == nil then decode_error(text, pos, "bad number '" .. num .. "'") end
  return v, pos + #num
end

-- An object's key and its ':' at pos; returns the key and the position of its value.
local function decode_key(text, pos)
  pos = skip_ws(text, pos)
  if text:sub(pos, pos) ~= '"' then decode_error(text, pos, "expected a string key") end
  local k
  k, pos = decode_string(text, pos)
  pos = skip_ws(text, pos)
  if text:sub(pos, pos) ~= ":" then decode_error(text, pos, "expected ':'") end
  return k, pos + 1
end

-- The value at pos and the position after it. The open arrays and objects
-- are frames on a stack ({c = container, k = the key being read, or nil in
-- an array}).
local function decode_value(text, pos)
  local stack = {}
  while true do
    pos = skip_ws(text, pos)
    local c = text:sub(pos, pos)
    local v, done = nil, false
    if c == "{" then
      local o = M.obj()
      pos = skip_ws(text, pos + 1)
      if text:sub(pos, pos) == "}" then
        v, pos, done = o, pos + 1, true
      else
        local k
        k, pos = decode_key(text, pos)
        stack[#stack + 1] = { c = o, k = k }
      end
    elseif c == "[" then
      local a = M.arr()
      pos = skip_ws(text, pos + 1)
      if text:sub(pos, pos) == "]" then
        v, pos, done = a, pos + 1, true
      else
        stack[#stack + 1] = { c = a }
      end
    else
      v, pos = decode_scalar(text, pos, c)
      done = true
    end
    -- a complete value goes into its container; containers it completes close
    while done do
      local f = stack[#stack]
      if not f then return v, pos end
      local con = f.c
      if f.k ~= nil then
        con[f.k] = v
        pos = skip_ws(text, pos)
        local d = text:sub(pos, pos)
        if d == "}" then
          stack[#stack] = nil
          v, pos = con, pos + 1
        else
          if d ~= "," then decode_error(text, pos, "expected ',' or '}'") end
          f.k, pos = decode_key(text, pos + 1)
          done = false
        end
      else
        con[#con + 1] = v
        pos = skip_ws(text, pos)
        local d = text:sub(pos, pos)
        if d == "]" then
          stack[#stack] = nil
          v, pos = con, pos + 1
        else
          if d ~= "," then decode_error(text, pos, "expected ',' or ']'") end
          pos = pos + 1
          done = false
        end
      end
    end
  end
end

local c_decode = tl and tl.json_decode -- C (src/lua/ljson.c): the same tables; nil where it leaves the text to us

--- json.decode(text): the value; objects are ordered (json.obj), arrays json.arr.
function M.decode(text)
  if c_decode and type(text) == "string" then
    local v = c_decode(text, OBJ, ARR, key_lists, M.null)
    if v ~= nil then return v end
  end
  local v, pos = decode_value(text, 1)
  pos = skip_ws(text, pos)
  if pos <= #text then decode_error(text, pos, "trailing text") end
  return v
end

return M

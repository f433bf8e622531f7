-- tracelens.validate.text — the Python str and os.path behaviours the
-- validators' messages and line numbers depend on.
--
-- Owns: reading a file as Python's text mode does (universal newlines),
-- str.splitlines, str.strip/lstrip/rstrip (Unicode whitespace, or a set of
-- ASCII characters), plain split/find, len() in code points, str()/repr() of
-- the values JSON can hold, float() of a string, and os.path's dirname,
-- basename and join.
local json = require "tracelens.json"

local M = {}

-- Files ----------------------------------------------------------------------

--- The text of a file as Python's open(path).read() sees it ("\r\n" and "\r"
--- read as "\n"); nil, message when it cannot be read.
function M.read(path)
  local text, err = tl.fs.read_file(path)
  if not text then return nil, err end
  return (text:gsub("\r\n?", "\n"))
end

-- os.path --------------------------------------------------------------------

--- posixpath.dirname.
function M.dirname(p)
  local head = p:match("^(.*/)") or ""
  if head ~= "" and head:find("[^/]") then head = head:gsub("/+$", "") end
  return head
end

--- posixpath.basename.
function M.basename(p) return p:match("([^/]*)$") end

--- posixpath.join(a, b, ...).
function M.join(a, ...)
  local out = a
  for _, b in ipairs({ ... }) do
    if b:sub(1, 1) == "/" then out = b
    elseif out == "" or out:sub(-1) == "/" then out = out .. b
    else out = out .. "/" .. b end
  end
  return out
end

-- Whitespace -------------------------------------------------------------------

-- str.isspace() characters: ASCII \t\n\v\f\r, \x1c-\x1f, space, and these
-- UTF-8 sequences (U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029,
-- U+202F, U+205F, U+3000).
local wide_spaces = { ["\xc2\x85"] = true, ["\xc2\xa0"] = true, ["\xe1\x9a\x80"] = true,
  ["\xe2\x80\xa8"] = true, ["\xe2\x80\xa9"] = true, ["\xe2\x80\xaf"] = true,
  ["\xe2\x81\x9f"] = true, ["\xe3\x80\x80"] = true }
for b = 0x80, 0x8a do wide_spaces["\xe2\x80" .. string.char(b)] = true end

local function is_ascii_space(byte) return byte == 32 or (byte >= 9 and byte <= 13) or (byte >= 28 and byte <= 31) end

-- Byte length of the whitespace character starting at i, or nil. (A wide
-- space starts with a byte >= 0x80 and ends with one: an ASCII byte that is
-- not a space is none, without the lookups.)
local function space_at(s, i)
  local b = s:byte(i)
  if not b then return nil end
  if is_ascii_space(b) then return 1 end
  if b < 0x80 then return nil end
  for n = 2, 3 do
    if wide_spaces[s:sub(i, i + n - 1)] then return n end
  end
  return nil
end

-- Byte length of the whitespace character ending at j, or nil.
local function space_before(s, j)
  local b = s:byte(j)
  if not b then return nil end
  if is_ascii_space(b) then return 1 end
  if b < 0x80 then return nil end
  for n = 2, 3 do
    if j - n + 1 >= 1 and wide_spaces[s:sub(j - n + 1, j)] then return n end
  end
  return nil
end

local function char_class(chars) return "[" .. chars:gsub("[%^%]%%%-]", "%%%0") .. "]" end

--- str.lstrip([chars]); chars is a set of ASCII characters.
function M.lstrip(s, chars)
  if chars then return (s:gsub("^" .. char_class(chars) .. "+", "")) end
  local i = 1
  while true do
    local n = space_at(s, i)
    if not n then break end
    i = i + n
  end
  return s:sub(i)
end

--- str.rstrip([chars]).
function M.rstrip(s, chars)
  if chars then return (s:gsub(char_class(chars) .. "+$", "")) end
  local j = #s
  while j >= 1 do
    local n = space_before(s, j)
    if not n then break end
    j = j - n
  end
  return s:sub(1, j)
end

--- str.strip([chars]).
function M.strip(s, chars) return M.lstrip(M.rstrip(s, chars), chars) end

-- Lines and pieces -------------------------------------------------------------

-- Line boundaries of str.splitlines besides "\n", "\r" and "\r\n": \v \f
-- \x1c \x1d \x1e and U+0085, U+2028, U+2029.
local WIDE_BREAKS = { "\xc2\x85", "\xe2\x80\xa8", "\xe2\x80\xa9" }

--- str.splitlines(): an array of lines without their ends (no last empty line).
function M.splitlines(s)
  local lines, i = {}, 1
  local wide_at = {} -- next position of each wide break at or after i (false: none)
  while i <= #s do
    local a, b = s:find("[\n\r\v\f\28\29\30]", i)
    if a and s:sub(a, a + 1) == "\r\n" then b = a + 1 end
    for k, seq in ipairs(WIDE_BREAKS) do
      if wide_at[k] == nil or (wide_at[k] and wide_at[k] < i) then wide_at[k] = s:find(seq, i, true) or false end
      local p = wide_at[k]
      if p and (not a or p < a) then a, b = p, p + #seq - 1 end
    end
    if not a then
      lines[#lines + 1] = s:sub(i)
      break
    end
    lines[#lines + 1] = s:sub(i, a - 1)
    i = b + 1
  end
  return lines
end

--- str.split(sep) with a plain separator.
function M.split(s, sep)
  local out, i = {}, 1
  while true do
    local a, b = s:find(sep, i, true)
    if not a then
      out[#out + 1] = s:sub(i)
      return out
    end
    out[#out + 1] = s:sub(i, a - 1)
    i = b + 1
  end
end

--- Plain substring search from byte init (default 1): the 1-based index or nil.
function M.find(s, sub, init) return (s:find(sub, init or 1, true)) end

function M.contains(s, sub) return s:find(sub, 1, true) ~= nil end
function M.startswith(s, prefix) return s:sub(1, #prefix) == prefix end
function M.endswith(s, suffix) return suffix == "" or s:sub(-#suffix) == suffix end

--- str.replace(old, new) (every occurrence, plain).
function M.replace(s, old, new)
  return (s:gsub(old:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0"), (new:gsub("%%", "%%%%"))))
end

--- len(): the number of code points (bytes when s is not valid UTF-8).
function M.len(s) return utf8.len(s) or #s end

-- str() and repr() ---------------------------------------------------------------

local function float_text(x)
  if x ~= x then return "nan" end
  if x == math.huge then return "inf" end
  if x == -math.huge then return "-inf" end
  return json.repr_float(x)
end

local function number_text(x)
  if math.type(x) == "integer" then return string.format("%d", x) end
  return float_text(x)
end

-- str.isprintable() for one code point: false for controls, separators other
-- than the space, the common format characters, private use and
-- noncharacters (unassigned code points are not known here).
local unprintable_ranges = {
  { 0x0, 0x1f }, { 0x7f, 0xa0 }, { 0xad, 0xad }, { 0x600, 0x605 }, { 0x61c, 0x61c }, { 0x6dd, 0x6dd },
  { 0x70f, 0x70f }, { 0x8e2, 0x8e2 }, { 0x1680, 0x1680 }, { 0x180e, 0x180e }, { 0x2000, 0x200f },
  { 0x2028, 0x202f }, { 0x205f, 0x2064 }, { 0x2066, 0x206f }, { 0x3000, 0x3000 }, { 0xd800, 0xf8ff },
  { 0xfdd0, 0xfdef }, { 0xfeff, 0xfeff }, { 0xfff9, 0xfffb }, { 0xe0001, 0xe0001 }, { 0xe0020, 0xe007f },
  { 0xf0000, 0x10ffff },
}

local function printable(cp)
  if cp & 0xfffe == 0xfffe then return false end
  for _, r in ipairs(unprintable_ranges) do
    if cp >= r[1] and cp <= r[2] then return false end
  end
  return true
end

local named_escapes = { [9] = "\\t", [10] = "\\n", [13] = "\\r", [92] = "\\\\" }

local function escape_code_point(cp)
  if named_escapes[cp] then return named_escapes[cp] end
  if cp < 0x100 then return string.format("\\x%02x", cp) end
  if cp < 0x10000 then return string.format("\\u%04x", cp) end
  return string.format("\\U%08x", cp)
end

--- repr() of a Python str.
local function repr_string(s)
  local quote = (s:find("'", 1, true) and not s:find('"', 1, true)) and '"' or "'"
  local out = { quote }
  local ok = utf8.len(s)
  if not ok then -- not UTF-8: escape every byte outside printable ASCII
    for i = 1, #s do
      local b = s:byte(i)
      local c = string.char(b)
      if c == quote then out[#out + 1] = "\\" .. c
      elseif b >= 0x20 and b < 0x7f and b ~= 92 then out[#out + 1] = c
      else out[#out + 1] = escape_code_point(b) end
    end
  else
    for _, cp in utf8.codes(s) do
      local c = utf8.char(cp)
      if c == quote then out[#out + 1] = "\\" .. c
      elseif cp == 92 or not printable(cp) then out[#out + 1] = escape_code_point(cp)
      else out[#out + 1] = c end
    end
  end
  out[#out + 1] = quote
  return table.concat(out)
end

local repr

local function repr_sequence(t)
  local parts = {}
  for i = 1, #t do parts[i] = repr(t[i]) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

local function repr_mapping(t)
  local parts = {}
  for k, v in pairs(t) do parts[#parts + 1] = repr(k) .. ": " .. repr(v) end
  return "{" .. table.concat(parts, ", ") .. "}"
end

--- repr() of a value decoded from JSON (nil and json.null are None).
repr = function(v)
  if v == nil or json.is_null(v) then return "None" end
  if v == true then return "True" elseif v == false then return "False" end
  if type(v) == "number" then return number_text(v) end
  if type(v) == "string" then return repr_string(v) end
  if type(v) == "table" then
    if json.is_obj(v) or (not json.is_arr(v) and next(v) ~= nil and #v == 0) then return repr_mapping(v) end
    return repr_sequence(v)
  end
  return tostring(v)
end
M.repr = repr

--- str() of a value decoded from JSON.
function M.str(v)
  if type(v) == "string" then return v end
  return repr(v)
end

-- float() ----------------------------------------------------------------------

-- End of a PEP 515 digit part (digits with single underscores between) at i.
local function digit_part(s, i)
  local j = s:match("^%d+()", i)
  if not j then return nil end
  while true do
    local k = s:match("^_%d+()", j)
    if not k then return j end
    j = k
  end
end

--- Python float(s) for a str: a number, or nil where float() raises.
local function parse_float(s)
  s = M.strip(s)
  local sign, body = s:match("^([+-]?)(.*)$")
  local word = body:lower()
  if word == "inf" or word == "infinity" then return sign == "-" and -math.huge or math.huge end
  if word == "nan" then return 0 / 0 end
  local j = digit_part(body, 1)
  if j then
    if body:sub(j, j) == "." then j = digit_part(body, j + 1) or j + 1 end
  elseif body:sub(1, 1) == "." then
    j = digit_part(body, 2)
    if not j then return nil end
  else
    return nil
  end
  if body:sub(j, j):lower() == "e" then
    local k = j + 1
    if body:sub(k, k) == "+" or body:sub(k, k) == "-" then k = k + 1 end
    j = digit_part(body, k)
    if not j then return nil end
  end
  if j ~= #body + 1 then return nil end
  return tonumber(sign .. body:gsub("_", "")) + 0.0
end

--- Python float(v) for a value decoded from JSON: a float, or nil where
--- float() raises (None, lists, dicts, text that is not a number).
function M.float(v)
  if type(v) == "number" then return v + 0.0 end
  if v == true then return 1.0 elseif v == false then return 0.0 end
  if type(v) == "string" then return parse_float(v) end
  return nil
end

--- A check's printout: "PASS: <pass_line>" when passed, else "FAIL:" and one
--- "  - message" line each.
function M.pass_fail(pass_line, passed, messages)
  if passed then return "PASS: " .. pass_line .. "\n" end
  local lines = { "FAIL:" }
  for _, m in ipairs(messages) do lines[#lines + 1] = "  - " .. m end
  return table.concat(lines, "\n") .. "\n"
end

return M

-- tracelens.json's decoder in C (tl.json_decode, src/lua/ljson.c) against
-- the module's own Lua decoder: the same tables (ordered objects with their
-- key order, arrays, null, integers and floats, NaN and the infinities, every
-- string byte), or the same error, on edge cases, on random documents with
-- random whitespace and escapes, and on the shared JSON files (the golden
-- metrics, manifests and priority data, the arch files).
local root, shared = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

-- two instances of the module: one with the C decoder, one without
local function load_json(with_c)
  local saved = tl.json_decode
  if not with_c then tl.json_decode = nil end
  package.loaded["tracelens.json"] = nil
  local ok, m = pcall(require, "tracelens.json")
  tl.json_decode = saved
  package.loaded["tracelens.json"] = nil
  assert(ok, m)
  return m
end
local JC, JL = load_json(true), load_json(false)
T.check(tl.json_decode ~= nil, "tl.json_decode is there")

-- the same value, as each module sees it
local function same(a, b, path)
  if JC.is_null(a) or JL.is_null(b) then
    return JC.is_null(a) and JL.is_null(b) and a == JC.null and b == JL.null, path .. ": null"
  end
  if type(a) ~= type(b) then return false, path .. ": type " .. type(a) .. " / " .. type(b) end
  if type(a) == "number" then
    if math.type(a) ~= math.type(b) then return false, path .. ": number kind" end
    if a ~= a then return b ~= b and string.pack("d", a) == string.pack("d", b), path .. ": NaN bits" end
    return a == b and (a ~= 0 or 1 / a == 1 / b), path .. ": number " .. tostring(a) .. " / " .. tostring(b)
  end
  if type(a) ~= "table" then return a == b, path .. ": value" end
  if JC.is_obj(a) then
    if not JL.is_obj(b) then return false, path .. ": object / not" end
    local ka, kb = JC.keys(a), JL.keys(b)
    if #ka ~= #kb then return false, path .. ": key count" end
    for i = 1, #ka do
      if ka[i] ~= kb[i] then return false, path .. ": key " .. i end
      local ok, why = same(a[ka[i]], b[kb[i]], path .. "." .. ka[i])
      if not ok then return false, why end
    end
    local na, nb = 0, 0
    for _ in next, a do na = na + 1 end
    for _ in next, b do nb = nb + 1 end
    return na == nb, path .. ": raw field count"
  end
  if not (JC.is_arr(a) and JL.is_arr(b)) then return false, path .. ": array / not" end
  local na, nb = 0, 0
  for _ in next, a do na = na + 1 end
  for _ in next, b do nb = nb + 1 end
  if na ~= nb or #a ~= #b then return false, path .. ": length" end
  for i = 1, #a do
    local ok, why = same(a[i], b[i], path .. "[" .. i .. "]")
    if not ok then return false, why end
  end
  return true
end

local cases, c_taken = 0, 0
local function check(text, label)
  cases = cases + 1
  local okc, vc = pcall(JC.decode, text)
  local okl, vl = pcall(JL.decode, text)
  if okc and tl.json_decode(text, getmetatable(JC.obj()), getmetatable(JC.arr()), {}, JC.null) ~= nil then
    c_taken = c_taken + 1
  end
  if not T.eq(okc, okl, label .. ": decoded by both or neither") then return end
  if not okc then
    T.eq(vc, vl, label .. ": the same error")
    return
  end
  local ok, why = same(vc, vl, "$")
  T.check(ok, label .. ": " .. tostring(why))
  T.eq(JC.encode(vc), JL.encode(vl), label .. ": encoded back the same")
end

-- Edge cases -------------------------------------------------------------------
local edge = { "", " ", "null", "true", "false", "NaN", "Infinity", "-Infinity", "-Infinityx", "-Inf", "nul",
  "truex", "True", "1", "-0", "0", "-0.0", "1.0", "1.5", "1e5", "1E+5", "1e-5", "1.5e", "1.", ".5", "-", "--1",
  "1-2", "007", "1.2.3", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
  "-9223372036854775809", "-9223372036854775810", "123456789012345678901234567890", "1e400", "-1e400", "4.9e-324",
  "[]", "{}", "[ ]", "{ }", "[1,2]", "[1,2,]", "[,1]", "[1 2]", "{\"a\":1,\"a\":2}", "{\"b\":1,\"a\":2,\"c\":{}}",
  "{\"a\" 1}", "{1:2}", "{\"a\":}", "{\"a\":1,}", "{\"a\":1", "[1", "[", "{", "]", "}", "\"abc", "\"\"",
  "\"\\u00e9\"", "\"\\u00E9\\u00\"", "\"\\ud83d\\ude00\"", "\"\\ud83d\"", "\"\\ud83dx\"", "\"\\ud83d\\u12\"",
  "\"\\ud83d\\u-123\"", "\"\\ud83d\\u dc0\"", "\"\\ud83d\\u0041\"", "\"\\udc00\"", "\"\\u0000\"", "\"\\x\"",
  "\"a\\\\b\\/c\\n\\t\\r\\b\\f\\\"\"", "\"\\", "\"a\\\"", "\"tab\there\"", "\"nl\nhere\"", "\"\0nul\"",
  "\"\xff\xfe bytes\"", " [ 1 , { \"k\" : [ ] } ] \n", "[null,true,false,NaN,-Infinity,Infinity]", "1 2",
  "[1] x", "{\"a\":[1,{\"b\":null}]}\t\r\n", "[-0,-0.0,0e0,1E2,2.50]", "{\"\":\"\"}", "[\"\\u20AC\"]",
  string.rep("[", 150) .. string.rep("]", 150), string.rep("[", 250) .. string.rep("]", 250),
  string.rep("{\"a\":", 220) .. "1" .. string.rep("}", 220), "[" .. string.rep("1", 300) .. "]",
  "[0." .. string.rep("1", 300) .. "]" }
for i, s in ipairs(edge) do check(s, "edge " .. i .. " " .. string.format("%q", s:sub(1, 40))) end

-- Random documents -------------------------------------------------------------
local rng = 20261202
local function rand(n)
  rng = (rng * 1103515245 + 12345) % 2147483648
  return rng % n + 1
end
local WS = { "", "", "", " ", "\n  ", "\t", "\r\n" }
local function ws() return WS[rand(#WS)] end
local STR_PIECES = { "a", "B", "é", "\\n", "\\\"", "\\\\", "\\/", "\\u0041", "\\u00e9", "\\ud83d\\ude00", "\\ud800",
  "\\udfff", "\\u0000", " ", "€", "\t", "\\b", "\\f", "\\r", "\\t" }
local function rstring()
  local p = {}
  for k = 1, rand(6) - 1 do p[k] = STR_PIECES[rand(#STR_PIECES)] end
  return '"' .. table.concat(p) .. '"'
end
local NUMS = { "0", "-0", "1", "-17", "3.25", "-0.5", "1e3", "2.5E-3", "9007199254740993", "9223372036854775807",
  "-9223372036854775808", "18446744073709551616", "1.7976931348623157e308", "5e-324", "NaN", "Infinity",
  "-Infinity", "123456.789" }
local function rvalue(depth)
  local k = rand(depth > 4 and 6 or 9)
  if k == 1 then return "null" end
  if k == 2 then return rand(2) == 1 and "true" or "false" end
  if k <= 4 then return NUMS[rand(#NUMS)] end
  if k <= 6 then return rstring() end
  if k == 7 or k == 8 then
    local items = {}
    for i = 1, rand(5) - 1 do items[i] = ws() .. rvalue(depth + 1) .. ws() end
    return "[" .. ws() .. table.concat(items, ",") .. "]"
  end
  local items = {}
  for i = 1, rand(5) - 1 do
    local key = rand(4) == 1 and '"dup"' or rstring()
    items[i] = ws() .. key .. ws() .. ":" .. ws() .. rvalue(depth + 1) .. ws()
  end
  return "{" .. ws() .. table.concat(items, ",") .. "}"
end
for i = 1, 3000 do
  local doc = ws() .. rvalue(0) .. ws()
  if i % 10 == 0 then -- a broken one now and then: both give the Lua decoder's error
    local at = rand(#doc)
    doc = doc:sub(1, at - 1) .. ({ "", ",", "}", "]", "\"", "x", "\\" })[rand(7)] .. doc:sub(at + 1)
  end
  check(doc, "random " .. i)
end

-- Shared JSON files --------------------------------------------------------------
local files = 0
local function walk(dir)
  for _, name in ipairs(tl.fs.listdir(dir) or {}) do
    local p = dir .. "/" .. name
    local kind = tl.fs.kind(p)
    if kind == "directory" then
      walk(p)
    elseif kind == "file" and name:match("%.json$") then
      local body = tl.fs.read_file(p)
      if body and #body < 4 * 1024 * 1024 then
        check(body, p)
        files = files + 1
      end
    end
  end
end
walk(root .. "/arch")
if shared and tl.fs.kind(shared) == "directory" then
  walk(shared .. "/agent_golden")
  walk(shared .. "/agent_cases")
else
  print("note: ../shared/data not found: the shared JSON files are skipped")
end
T.check(files >= 5, "some JSON files read: " .. files)
T.check(c_taken > cases / 2, string.format("the C decoder took most texts: %d of %d", c_taken, cases))
print(string.format("json decode: %d texts (%d files), %d decoded in C", cases, files, c_taken))
T.finish()

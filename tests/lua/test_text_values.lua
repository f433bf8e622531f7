-- No Lua value leaks into the text we write, and the text is the same from
-- run to run (issue 11 item 6). The timesformer trace's `aten::cat` takes a
-- TensorList (Input Dims `[[[8, 1, 768], [8, 3136, 768]], []]`), which the
-- findings printed as "(one table: 0x7f…×table: 0x7f… tensor)". Here: the
-- shape writers on TensorLists and odd values, py.str / py.repr of values
-- Python has no literal for, then the whole analysis of that trace run twice:
-- every file byte-identical but for the run id and the workbook's creation
-- time, and no interpreter value (`table: 0x`, `function: 0x`, `nil`, `nan`,
-- `inf`) in any Markdown file.
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local json = require "tracelens.json"
local py = require "tracelens.py"
local say = require "tracelens.prose"

-- Interpreter values that must never reach a Markdown file.
local LEAKS = { "table: 0x", "function: 0x", "userdata: 0x", "thread: 0x", "%f[%w]nil%f[%W]", "%f[%w]nan%f[%W]",
  "%f[%w]NaN%f[%W]", "%f[%w]%-?inf%f[%W]", "%f[%w]Infinity%f[%W]" }

local function leak_in(text)
  for _, p in ipairs(LEAKS) do
    local at = text:find(p)
    if at then return p, text:sub(math.max(1, at - 60), at + 40) end
  end
end

-- Shapes as text ------------------------------------------------------------

local function op(dims, types)
  return { name = "aten::cat", ["Input Dims"] = dims, ["Input type"] = types or "('TensorList', 'Scalar')" }
end

T.eq(say.shape_text({ 8192, 8192 }), "8192×8192", "a plain shape")
T.eq(say.shape_text({ { 8, 1, 768 }, { 8, 3136, 768 } }), "8×1×768 and 8×3136×768", "a TensorList shape")
T.eq(say.shape_text({ 4.0, 0 / 0, math.huge, json.null, true, "s0", "a|b" }), "4×?×?×?×?×s0×?",
  "odd dimensions: an integral float, NaN, inf, None, a bool, a symbol, text")
T.eq(say.shape_text({}), "", "an empty shape")
T.eq(say.tensors_text(op("(((8, 1, 768), (8, 3136, 768)), ())")), "8×1×768 and 8×3136×768 tensors",
  "cat of a TensorList: each tensor")
T.eq(say.tensors_text(op("(((8, 768), (8, 768), (8, 768)), ())")), "three 8×768 tensors",
  "stack of three like tensors")
T.eq(say.tensors_text(op("(((2, 3), (4, 5)), (6, 7))", "('TensorList', 'c10::BFloat16')")),
  "2×3, 4×5 and 6×7 tensors", "a TensorList next to a tensor")
T.eq(say.tensors_text(op("((), ())")), nil, "no tensors: nothing to say")
T.eq(say.tensors_text(op("((512,), (141, 512))", "('c10::BFloat16', 'c10::BFloat16')")),
  "512 and 141×512 BF16 tensors", "plain tensors as before")
-- inputs of two element types: each shape with its own (a MoE op's FP32 router weight beside BF16 tensors)
T.eq(say.tensors_text(op("((16, 4096), (8, 4096, 14336), (8, 14336, 4096), (16, 2))",
  "('c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'float')")),
  "16×4096 BF16, 8×4096×14336 BF16, 8×14336×4096 BF16 and 16×2 FP32 tensors", "mixed element types")

-- py.str / py.repr of values Python has no literal for -----------------------

T.eq(py.str(print), "<function>", "a function: no address")
T.eq(py.str(io.stdout), "<userdata>", "userdata: no address")
T.eq(py.str(coroutine.create(print)), "<thread>", "a coroutine: no address")
T.eq(py.str(json.obj("a", 1, "b", json.arr({ 1, 2 }))), "{'a': 1, 'b': [1, 2]}", "an object: a dict repr in key order")
T.eq(py.repr(py.literal("[{'x': (1,)}, None]")), "[{'x': (1,)}, None]", "a dict inside a list")
T.eq(py.str(nil), "None", "nil is None")

-- The timesformer analysis, twice --------------------------------------------

local trace = shared .. "/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz"
if not T.file_exists(trace) then T.skip("no shared timesformer trace") end

local tmp = T.tmpdir()
local function analyse()
  local ok, code, _, err = T.run(string.format("cd %s && %s run orchestrator.lua %s -o out -q", T.q(tmp), T.q(bin),
    T.q(trace)))
  T.eq(code, 0, "the analysis runs: " .. err)
end
analyse()
T.check(os.rename(tmp .. "/out", tmp .. "/run1"), "first run kept")
analyse()

-- Every file under dir, relative paths, sorted.
local function files(dir, rel, out)
  out = out or {}
  for _, name in ipairs(tl.fs.listdir(dir .. (rel and ("/" .. rel) or "")) or {}) do
    local r = rel and (rel .. "/" .. name) or name
    if tl.fs.kind(dir .. "/" .. r) == "directory" then files(dir, r, out) else out[#out + 1] = r end
  end
  return out
end

-- The members of a zip archive (name -> "crc size"), from its central directory.
local function zip_members(bytes)
  local members, eocd = {}, nil
  for i = #bytes - 21, math.max(1, #bytes - 65557), -1 do
    if bytes:sub(i, i + 3) == "PK\5\6" then eocd = i break end
  end
  if not eocd then return nil end
  local count, _, offset = string.unpack("<I2I4I4", bytes, eocd + 10)
  local at = offset + 1
  for _ = 1, count do
    if bytes:sub(at, at + 3) ~= "PK\1\2" then return nil end
    local crc, csize, usize, nlen, xlen, clen = string.unpack("<I4I4I4I2I2I2", bytes, at + 16)
    members[bytes:sub(at + 46, at + 45 + nlen)] = crc .. " " .. csize .. " " .. usize
    at = at + 46 + nlen + xlen + clen
  end
  return members
end

local read = tl.fs.read_file
local list1, list2 = files(tmp .. "/run1"), files(tmp .. "/out")
T.eq(table.concat(list1, "\n"), table.concat(list2, "\n"), "both runs write the same files")
T.check(#list1 > 10, "the analysis wrote its files: " .. #list1)
local md_files, cat_seen = 0, false
for _, rel in ipairs(list1) do
  local a, b = read(tmp .. "/run1/" .. rel) or "", read(tmp .. "/out/" .. rel) or ""
  if rel:match("%.xlsx$") then
    local ma, mb = zip_members(a), zip_members(b)
    T.check(ma and mb, rel .. ": a zip archive")
    ma, mb = ma or {}, mb or {}
    ma["docProps/core.xml"], mb["docProps/core.xml"] = nil, nil -- its creation time
    local names = {}
    for name, v in pairs(ma) do
      names[#names + 1] = name
      T.check(mb[name] == v, rel .. ": member " .. name .. " the same in both runs")
    end
    for name in pairs(mb) do T.check(ma[name], rel .. ": member " .. name .. " in both runs") end
    T.check(#names > 5, rel .. ": has its sheets")
  else
    if rel == "metadata/tracelens_run.json" then
      a = a:gsub('"run_id": "[^"]*"', '"run_id": ""')
      b = b:gsub('"run_id": "[^"]*"', '"run_id": ""')
    end
    T.check(a == b, rel .. ": the same bytes in both runs")
  end
  if rel:match("%.md$") then
    md_files = md_files + 1
    local p, around = leak_in(a)
    T.check(not p, rel .. ": no interpreter value in the text (" .. tostring(p) .. "): " .. tostring(around))
    if a:find("`aten::cat` (8×1×768 and 8×3136×768 tensors)", 1, true) then cat_seen = true end
  end
end
T.check(md_files >= 3, "Markdown files checked: " .. md_files)
T.check(cat_seen, "the TensorList of aten::cat is written as its tensors' shapes")

T.finish()

-- The Lua API seen from a sandboxed state (a tl.parallel task: rules and
-- analyzers), issue 10 items 1, 2 and 5, each attack as written:
--  1. no extension (a Lua file run in a state with every library) from a
--     sandbox: trace:report{extension = PATH} is refused, in a task and
--     through the orchestrator (a rule that finds its own path in an error
--     message and asks for itself as an extension), and no nested task runs
--     a Lua file by path;
--  2. no file written from a sandbox (Table:write_csv, tl.chart.stacked_bar,
--     tl.write_report, trace:report{write =}, tl.compare{write =}), and no
--     error message reachable from one echoes the contents of a file it was
--     pointed at;
--  5. lengths, counts, indices and sizes from Lua are checked: a __len that
--     lies (-1, 2^61, math.huge) is never believed, bad numbers (NaN,
--     infinities, fractions, huge) are one clear Lua error;
-- plus handles that cannot be freed under a C function that uses them
-- (no __close, protected metatables).
local root, _, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local trace_path = root .. "/examples/demo_trace.json"
local trace = tl.load(trace_path)
local dir = T.tmpdir()
local function path(name) return dir .. "/" .. name end
local REFUSED = "not allowed in a sandboxed state"

-- runs code (with args) as a task; returns the result record
local function task(code, ...)
  return tl.parallel({ { code = code, args = table.pack(...), name = "=attack" } }, { timeout = 60 })[1]
end

local function refused(r, what)
  T.check(not r.ok and tostring(r.error):find(REFUSED, 1, true),
    what .. ": refused in a sandbox: " .. tostring(r.ok) .. " " .. tostring(r.error or r.value))
end

-- 1. the extension escape, in a task ---------------------------------------
local marker = path("escaped")
local ext = path("ext.lua")
do
  local f = assert(io.open(ext, "w"))
  f:write(string.format("os.execute(%q)\nreturn {}\n", "echo escaped > " .. marker))
  f:close()
end
refused(task("local t, p = ... return t:report{extension = p}", trace, ext), "trace:report{extension}")
refused(task("local t, p = ... return t:table('ops_summary', {extension = p})", trace, ext), "trace:table{extension}")
-- a nested task is sandboxed too
local nested = task([[local t, p = ...
  local r = tl.parallel({{code = "local t, p = ... return t:report{extension = p}", args = {t, p}}})[1]
  return r.error]], trace, ext)
T.check(nested.ok and tostring(nested.value):find(REFUSED, 1, true), "nested task: extension refused: " ..
  tostring(nested.value or nested.error))
-- no Lua file by path from a sandbox: a nested task gets code only
refused(task("local p = ... return tl.parallel({{script = p}})", ext), "nested tl.parallel{script =}")
T.check(not T.file_exists(marker), "the extension's os.execute never ran")
-- a full state still loads extensions (tracelens run, the CLI)
local ok_full = pcall(trace.report, trace, { extension = ext })
T.check(ok_full and T.file_exists(marker), "extensions still load in a full state")
os.remove(marker)

-- 1. through the orchestrator: the rule as written in the issue -----------
do
  local rules = path("rules")
  os.execute("mkdir -p " .. T.q(rules))
  local rule = rules .. "/escape_probe.lua"
  local f = assert(io.open(rule, "w"))
  f:write(string.format([[
-- run as a rule, ctx is a table; run as an extension, it is not
local ctx = ...
if type(ctx) ~= "table" then
  os.execute(%q)
  return {}
end
local _, msg = pcall(function() error("where am I") end)
local self_path = msg:match("^(.-):%%d+:")
ctx.trace:report{extension = self_path}
return { metrics = "{}", findings = "" }
]], "echo escaped > " .. marker))
  f:close()
  local out = path("out")
  local ok, code, _, err = T.run(string.format("%s run orchestrator.lua %s -o %s --rules %s", T.q(bin),
    T.q(trace_path), T.q(out), T.q(rules)))
  T.check(ok, "orchestrator with the rule ran: " .. tostring(code) .. " " .. err)
  T.check(not T.file_exists(marker), "the rule's os.execute payload wrote nothing")
  local card = T.read_file(out .. "/category_findings/escape_probe_findings.md") or ""
  T.check(card:find("Status: ERROR", 1, true) and card:find(REFUSED, 1, true),
    "the rule is reported failed, with the refusal: " .. card:sub(1, 300))
  local md = T.read_file(out .. "/analysis.md") or ""
  T.check(md:find("escape_probe", 1, true), "analysis.md lists the failed rule")
end

-- 2. no file written from a sandbox ----------------------------------------
local ops = trace:table("ops_summary")
local sheets = trace:report()
local writes = {
  { "Table:write_csv", "local t, p = ... t:write_csv(p)", ops, path("w.csv") },
  { "tl.chart.stacked_bar", [[local p = ... return tl.chart.stacked_bar(p, {xmax = 1,
      segments = {{label = "a", value = 1, color = "#000000"}}})]], path("w.png") },
  { "tl.write_report", "local s, p = ... tl.write_report(s, p)", sheets, path("wr") },
  { "tl.write_report background", "local s, p = ... return tl.write_report(s, p, {background = true}):wait()",
    sheets, path("wrb") },
  { "trace:report{write}", "local t, p = ... return t:report{write = p}", trace, path("rw") },
  { "tl.compare{write}", "local a, p = ... return tl.compare({a, a}, {names = {'x', 'y'}, write = p})",
    path("no_such_report"), path("cw") },
}
for _, w in ipairs(writes) do
  local target = w[#w]
  refused(task(w[2], table.unpack(w, 3)), w[1])
  T.check(not T.file_exists(target) and not T.dir_exists(target), w[1] .. ": nothing at " .. target)
end
local probe = task("return {fs = tl.fs, io = io, execute = os.execute, remove = os.remove, rename = os.rename}")
T.check(probe.ok and next(probe.value) == nil, "no tl.fs, io, os.execute/remove/rename in a sandbox")

-- 2. errors never echo a file's contents -----------------------------------
local SECRET = "S3CR3T-7f3a"
local secrets = {
  { "text", "root:" .. SECRET .. ":0:0\n" },
  { "lua", 'x = "' .. SECRET .. ' unfinished\n' },
  { "json", '{"traceEvents": "' .. SECRET .. '", "max_achievable_tflops": "' .. SECRET .. '"}' },
  { "arch", '{"name": 1, "mem_bw_gbps": "' .. SECRET .. '"}' },
}
local readers = {
  { "tl.load", "local t, p = ... return tl.load(p)" },
  { "report{arch}", "local t, p = ... return t:report{arch = p}" },
  { "platform{arch}", "local t, p = ... return t:platform{arch = p}" },
  { "table{arch}", "local t, p = ... return t:table('GEMM', {arch = p})" },
  { "tl.parallel{script}", "local t, p = ... return tl.parallel({{script = p}})" },
  { "tl.compare", "local t, p = ... return tl.compare({p, p}, {names = {'a', 'b'}})" },
}
for _, s in ipairs(secrets) do
  local p = path("secret_" .. s[1])
  local f = assert(io.open(p, "w"))
  f:write(s[2])
  f:close()
  for _, rd in ipairs(readers) do
    local r = task(rd[2], trace, p)
    local text = tostring(r.error) .. tostring(r.traceback)
    T.check(not r.ok and not text:find(SECRET, 1, true),
      string.format("%s on a %s file: an error without its contents: %s", rd[1], s[1], text:sub(1, 200)))
  end
end

-- 5. lengths from __len are never believed ---------------------------------
local res = task([=[
local t = ...
local out = {}
local function lying(n, entries)
  local a = {}
  for i = 1, entries do a[i] = 1 end
  return setmetatable(a, {__len = function() return n end})
end
local function try(name, f, ...)
  local ok, v = pcall(f, ...)
  out[name] = ok and (type(v) == "userdata" and #v or v) or ("error: " .. tostring(v))
end
for _, n in ipairs({-1, 1 << 61, 2^61, math.huge, 0, -(1 << 62)}) do
  try("take " .. tostring(n), t.take, t, lying(n, 100))
  local cols = setmetatable({"name", "Count"}, {__len = function() return n end})
  local ok, s = pcall(t.select, t, cols)
  out["select " .. tostring(n)] = ok and #s:columns() or ("error: " .. tostring(s))
  -- #values is only compared with the row count
  try("with_column " .. tostring(n), t.with_column, t, "x", lying(n, #t))
end
-- a __len may declare trailing missing values (one per row, read raw)
try("with_column sparse", function() return t:with_column("x", setmetatable({}, {__len = function() return #t end})):column("x") end)
for _, v in ipairs({0/0, 1/0, -1/0, 1.5, 0, -1, #t + 1, math.mininteger, math.maxinteger, 2^63, "1"}) do
  try("take value " .. tostring(v), t.take, t, {v})
end
try("take none", t.take, t, {})
try("take raw", t.take, t, {#t, 1, 1})
try("select number", t.select, t, {1})
try("sort 17 keys", t.sort, t, (function() local k = {} for i = 1, 17 do k[i] = {"name"} end return k end)())
try("sort lying", t.sort, t, setmetatable({{"name"}}, {__len = function() return 1 << 61 end}))
try("row nan", t.row, t, 0/0)
try("get huge", t.get, t, math.maxinteger, "name")
return out
]=], ops)
T.check(res.ok, "length attacks ran: " .. tostring(res.error))
local v = res.value or {}
local nrows = #ops
for _, n in ipairs({ "-1", tostring(1 << 61), tostring(2 ^ 61), tostring(math.huge), "0", tostring(-(1 << 62)) }) do
  T.eq(v["take " .. n], 100, "take with __len = " .. n .. ": the raw length counts")
  T.eq(v["select " .. n], 2, "select with __len = " .. n .. ": the raw length counts")
end
for _, n in ipairs({ "-1", tostring(1 << 61), "0", tostring(-(1 << 62)) }) do
  T.check(tostring(v["with_column " .. n]):find("^error: with_column: " .. n:gsub("%-", "%%-") .. " values for"),
    "with_column with __len = " .. n .. ": " .. tostring(v["with_column " .. n]))
end
for _, n in ipairs({ tostring(2 ^ 61), tostring(math.huge) }) do
  T.check(tostring(v["with_column " .. n]):find("^error: "), "with_column with __len = " .. n .. ": an error")
end
T.eq(type(v["with_column sparse"]), "table", "with_column: a __len declaring trailing nils still works")
for _, bad in ipairs({ "nan", "inf", "-inf", "1.5", "0", "-1", tostring(nrows + 1), tostring(math.mininteger),
  tostring(math.maxinteger), tostring(2 ^ 63), "1" }) do
  local got = v["take value " .. (bad == "nan" and tostring(0 / 0) or bad == "inf" and tostring(1 / 0)
    or bad == "-inf" and tostring(-1 / 0) or bad)]
  T.check(tostring(got):find("^error: take: "), "take{" .. bad .. "}: a clear error: " .. tostring(got))
end
T.eq(v["take none"], 0, "take{}: no rows")
T.eq(v["take raw"], 3, "take{n, 1, 1}: three rows")
T.check(tostring(v["select number"]):find("^error: select: columns%[1%] is a number"), "select{1}: " ..
  tostring(v["select number"]))
T.check(tostring(v["sort 17 keys"]):find("^error: sort: 1 to 16 keys"), "17 sort keys: " ..
  tostring(v["sort 17 keys"]))
T.eq(v["sort lying"], nrows, "sort keys with a lying __len: the raw length counts")
T.check(tostring(v["row nan"]):find("^error: "), "row(NaN): an error")
T.check(tostring(v["get huge"]):find("row out of range"), "get(maxinteger): out of range")

-- the same in a full state: tl.compare's lists (a fuzz_lua_api finding: a
-- calloc of (-1 + 1) * 8 bytes written past)
do
  local lying = setmetatable({ path("cmp_a"), path("cmp_b") }, { __len = function() return -1 end })
  local ok, e = pcall(tl.compare, lying, { names = setmetatable({ "a", "b" }, { __len = function() return 1 << 61 end }) })
  T.check(not ok and tostring(e):find("cmp_a", 1, true), "tl.compare counts raw lengths: " .. tostring(e))
  ok, e = pcall(tl.compare, { path("cmp_a"), 5 })
  T.check(not ok and tostring(e):find("reports%[2%] is not a string"), "tl.compare{path, 5}: " .. tostring(e))
end

-- 5. numeric options: NaN, infinities, fractions, huge values are errors
local opts = task([=[
local t = ...
local out = {}
local cases = {
  {"bins 2^31", function() return t:report{short_kernel_histogram_bins = 2^31} end},
  {"bins 0", function() return t:report{short_kernel_histogram_bins = 0} end},
  {"bins 1.5", function() return t:report{short_kernel_histogram_bins = 1.5} end},
  {"topk nan", function() return t:report{topk_ops = 0/0} end},
  {"topk -1", function() return t:report{topk_roofline_ops = -1} end},
  {"micro inf", function() return t:report{micro_idle_thresh_us = 1/0} end},
  {"micro huge", function() return t:report{micro_idle_thresh_us = 1e300} end},
  {"threshold nan", function() return t:report{short_kernel_threshold_us = 0/0} end},
  {"timeline micro nan", function() return t:timeline{micro_idle_thresh_us = 0/0} end},
  {"timeline micro -inf", function() return t:timeline{micro_idle_thresh_us = -1/0} end},
  {"load threads", function() return tl.load("/nonexistent.json", {threads = 1 << 40}) end},
  {"platform number", function() return t:platform{platform = 5} end},
}
for _, c in ipairs(cases) do
  local ok, e = pcall(c[2])
  out[c[1]] = ok and "accepted" or tostring(e)
end
out.bins_ok = #t:report{short_kernel_histogram_bins = 3}.short_kernel_histogram
return out
]=], trace)
T.check(opts.ok, "option attacks ran: " .. tostring(opts.error))
for k, msg in pairs(opts.value or {}) do
  if k ~= "bins_ok" then
    T.check(msg:find("must be") or msg:find("must be a string"), "option " .. k .. ": a clear error: " .. msg)
  end
end
T.eq(opts.value and opts.value.bins_ok, 3, "a valid histogram bin count still works")

-- handles cannot be freed under the C code using them -----------------------
local h = task([[
local t, ops = ...
local out = {}
local ev = t:node(1)
out.mt = tostring(getmetatable(ev)) .. " " .. tostring(getmetatable(ops)) .. " " .. tostring(getmetatable(t))
out.gc = pcall(function() getmetatable(ev).__gc(ev) end)
out.name = ev.name
local mine = ops:take({1, 2, 3})
local ok, e = pcall(mine.filter, mine, function() local c <close> = mine return true end)
out.close = ok and "closed" or tostring(e)
out.rows = #mine
-- a NUL byte in a pattern is part of the cached pattern
out.re = tostring(tl.re.test("a\0b", "xa\0bx")) .. tostring(tl.re.test("a\0c", "xa\0cx"))
return out
]], trace, ops)
T.check(h.ok, "handle attacks ran: " .. tostring(h.error))
local hv = h.value or {}
T.eq(hv.mt, "tracelens.event tracelens.table tracelens.trace", "metatables are protected")
T.eq(hv.gc, false, "an event's __gc cannot be called")
T.eq(hv.name, trace:node(1).name, "the event still reads")
T.check(tostring(hv.close):find("non%-closable"), "a Table is not closable: " .. tostring(hv.close))
T.eq(hv.rows, 3, "the Table still reads after the attempt")
T.eq(hv.re, "truetrue", "tl.re caches patterns with NUL bytes apart")

-- the lists tl's functions walk to the first nil are read raw (redteam2):
-- an __index that is a C function (rawlen: 0 for any key) would feed the C
-- loop forever, with no Lua instruction for the time limit to stop, and
-- grow C memory outside the cap until the machine ran out
do
  local feeding = [[local what, t = ...
    local forever = setmetatable({}, { __index = rawlen })
    if what == "slices" then return #t:kernel_slices(forever, 1, 0, 0) end
    if what == "durs" then return #t:durs_us(forever) end
    if what == "repeats" then return select(2, tl.uid_repeats({ forever })) and 0 end
    if what == "claims" then return #(tl.uid_claims({ forever })) end
    if what == "lists" then return select(2, tl.uid_repeats(forever)) and 0 end
    return tl.join_ints(forever, ",")]]
  local tasks = {}
  for i, what in ipairs({ "slices", "durs", "repeats", "claims", "lists", "join" }) do
    tasks[i] = { code = feeding, args = { what, trace }, name = "=" .. what }
  end
  local rs = tl.parallel(tasks, { timeout = 2, memory_mb = 64 })
  for i, r in ipairs(rs) do
    T.check(r.ok and r.seconds < 1, tasks[i].name .. ": an __index never feeds the list: " .. tostring(r.ok) .. " "
      .. tostring(r.error or r.value))
  end
end

T.rmrf(dir)
T.finish()

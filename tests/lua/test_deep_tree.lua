-- Deep call trees (issue 10, item 10): a valid trace whose ops nest 150,000
-- and 250,000 deep. Every walk over the event tree, TraceDiff's merged tree
-- and the data nested like them is iterative, so `tracelens report`, the
-- orchestrator and TraceDiff finish on it (the recursive walks overflowed
-- the C stack: SIGSEGV in the report's worker thread at 150,000, the
-- orchestrator at 100,000, `tracelens diff` at 200,000), and deep python
-- stacks with an op at every level stay linear. `tracelens diff` is the one
-- output that cannot hold such a tree: merged_tree_output.txt indents each
-- line by its depth (2N^2 bytes for a chain of N: 45 GB at 150,000), so it
-- refuses with a one-line error and writes nothing; the same diff through
-- `report --comparison-json-path` (no tree text) works. Also: the JSON and
-- Python-literal readers of the Lua library on values nested as deep, and
-- trace args nested 1,000,000 deep. The traces are written by the test.
local root, _, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local json = require "tracelens.json"
local py = require "tracelens.py"
bin = bin or T.tracelens_bin()
local tmp = T.tmpdir()

-- A trace writer: events as text, a few thousand at a time.
local function writer(path)
  local f = assert(io.open(path, "wb"))
  local buf, first = {}, true
  f:write('{"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3","totalGlobalMem":85018279936,'
    .. '"computeMajor":9,"computeMinor":0,"numSms":132}],"traceEvents":[\n')
  local w = {}
  function w.event(fmt, ...)
    buf[#buf + 1] = (first and "" or ",\n") .. string.format(fmt, ...)
    first = false
    if #buf >= 4096 then
      f:write(table.concat(buf))
      buf = {}
    end
  end
  function w.close()
    f:write(table.concat(buf), "\n]}\n")
    f:close()
  end
  return w
end

-- An aten::mm (modelled) at ts (µs), dur µs long (100), launching one
-- kernel; dims: the text of its Input Dims.
local function launching_mm(w, uid, ts, kernel_ts, dur, dims)
  w.event('{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":%d.000,"dur":%d.000,'
    .. '"args":{"External id":%d,"Input Dims":%s,"Input type":["float","float"],'
    .. '"Input Strides":[[64,1],[64,1]],"Concrete Inputs":["",""]}}', ts, dur or 100, uid,
    dims or "[[64,64],[64,64]]")
  w.event('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":%d.000,"dur":1.000,'
    .. '"args":{"External id":%d,"correlation":7}}', ts + 1, uid)
  w.event('{"ph":"X","cat":"kernel","name":"volta_sgemm_64x64_nn","pid":0,"tid":7,"ts":%d.000,"dur":5.000,'
    .. '"args":{"External id":%d,"device":0,"stream":7,"correlation":7,"grid":[1,1,1],"block":[256,1,1]}}',
    kernel_ts, uid)
  w.event('{"ph":"s","id":7,"pid":1,"tid":1,"ts":%d.000,"cat":"ac2g","name":"ac2g"}', ts + 1)
  w.event('{"ph":"f","id":7,"pid":0,"tid":7,"ts":%d.000,"cat":"ac2g","name":"ac2g","bp":"e"}', kernel_ts)
end

-- The attack as written: n nested cpu_ops on one thread, each strictly
-- inside its parent (op i: [1e6 + i, 1e6 + 2n + 200 - i] µs), the innermost
-- an aten::mm launching a kernel. A few nn.Module names on the way.
local NAMES = { "aten::wrap", "aten::inner", "aten::detail", "aten::outer" }
local function chain_trace(n)
  local path = string.format("%s/chain_%d.json", tmp, n)
  local w = writer(path)
  local base, total = 1000000, 2 * n + 200
  for i = 0, n - 2 do
    local name = i % 10000 == 5000 and "nn.Module: Block_" .. i or NAMES[i % #NAMES + 1]
    w.event('{"ph":"X","cat":"cpu_op","name":"%s","pid":1,"tid":1,"ts":%d.000,"dur":%d.000,"args":{"External id":%d}}',
      name, base + i, total - 2 * i, i + 1)
  end
  launching_mm(w, n, base + n - 1, base + total + 10)
  w.close()
  return path
end

-- A python stack n deep (--include-call-stack): every frame has an op of its
-- own before the next frame, the innermost frame the launching aten::mm.
local function python_trace(n)
  local path = string.format("%s/python_%d.json", tmp, n)
  local w = writer(path)
  local base, total = 1000000, 4 * n + 300
  for i = 0, n - 1 do
    w.event('{"ph":"X","cat":"python_function","name":"model.py(%d): f","pid":1,"tid":1,"ts":%d.000,"dur":%d.000,'
      .. '"args":{"Python id":%d,"Python parent id":%s}}', i, base + 2 * i, total - 4 * i, i + 1,
      i == 0 and "null" or tostring(i))
    w.event('{"ph":"X","cat":"cpu_op","name":"aten::empty","pid":1,"tid":1,"ts":%d.100,"dur":0.500,'
      .. '"args":{"External id":%d}}', base + 2 * i, i + 1)
  end
  launching_mm(w, n + 1, base + 2 * n + 1, base + total + 10)
  w.close()
  return path
end

local function one_line(s) return s:match("^[^\n]*\n?$") ~= nil end

-- How deep v[1][1]... goes, and what is at the bottom.
local function depth_of(v)
  local k = 0
  while type(v) == "table" and v[1] ~= nil do
    v = v[1]
    k = k + 1
  end
  return k, v
end

local function check_report(trace, tag, extra)
  local out = tmp .. "/report_" .. tag
  local _, code, _, err = T.run(string.format("%s report %s -o %s --no-xlsx %s", T.q(bin), T.q(trace), T.q(out),
    extra or ""))
  T.eq(code, 0, tag .. ": tracelens report exits 0 (" .. err:sub(1, 300) .. ")")
  local rows = T.file_exists(out .. "/perf_report_csvs/unified_perf_summary.csv")
    and T.csv_records(out .. "/perf_report_csvs/unified_perf_summary.csv") or {}
  T.check(#rows == 1 and rows[1].name == "aten::mm", tag .. ": the unified row is the aten::mm at the bottom")
  return out
end

local function check_orchestrator(trace, tag)
  local out = tmp .. "/analysis_" .. tag
  local _, code, _, err = T.run(string.format("cd %s && %s run %s %s -o %s -q", T.q(tmp), T.q(bin),
    T.q(root .. "/lua/orchestrator.lua"), T.q(trace), T.q(out)))
  T.eq(code, 0, tag .. ": the orchestrator exits 0 (" .. err:sub(1, 300) .. ")")
  local md = T.read_file(out .. "/analysis.md") or ""
  T.check(md:find("aten::mm", 1, true), tag .. ": analysis.md has the aten::mm")
end

-- TraceDiff of a trace with itself: the files cannot hold the merged tree
-- (refused, one line, exit 1, nothing written), the report's comparison can.
local function check_diff(trace, tag, depth, extra)
  local out = tmp .. "/diff_" .. tag
  local _, code, _, err = T.run(string.format("%s diff %s %s -o %s -q %s", T.q(bin), T.q(trace), T.q(trace),
    T.q(out), extra or ""))
  T.eq(code, 1, tag .. ": tracelens diff exits 1")
  T.check(one_line(err) and err:find("^tracelens: merged_tree_output.txt: the merged tree's text would be over 2 GiB")
    and err:find(string.format("nodes are %d levels deep", depth), 1, true),
    tag .. ": tracelens diff says why in one line: " .. err:sub(1, 300))
  T.check(not T.dir_exists(out), tag .. ": tracelens diff wrote nothing")
  out = check_report(trace, tag .. "_compare", "--comparison-json-path " .. T.q(trace) .. " " .. (extra or ""))
  local ds = T.file_exists(out .. "/perf_report_csvs/diff_stats.csv")
    and T.csv_records(out .. "/perf_report_csvs/diff_stats.csv") or {}
  T.check(#ds == 1 and ds[1].cpu_op_name == "aten::mm", tag .. ": the comparison's diff_stats row is the aten::mm")
end

local t0 = tl.now()
for _, n in ipairs({ 150000, 250000 }) do
  local trace = chain_trace(n)
  local tag = "chain " .. n
  check_report(trace, tag)
  check_orchestrator(trace, tag)
  -- the merged tree: n ops, the runtime call and the kernel, one under the other
  check_diff(trace, tag, n + 2)
end

-- in this process: the report and TraceDiff through the API (their own threads)
do
  local n = 150000
  local t = tl.load(string.format("%s/chain_%d.json", tmp, n))
  local s = t:report({ platform = "H100" })
  T.eq(#s.unified_perf_summary, 1, "API: one unified row")
  local d = tl.diff(t, t)
  T.eq(d.merged_nodes, n + 2, "API: every level merged")
  T.check(d.identical and d.diff_stats and #d.diff_stats == 1, "API: one diff_stats row, identical traces")
  local ok, err = pcall(function() return d.merged_tree end)
  T.check(not ok and tostring(err):find("^the merged tree's text would be over 2 GiB"),
    "API: merged_tree refused without a position: " .. tostring(err))
  local k = t:node(n - 1):kernels()
  T.check(#k == 1 and k[1].name == "volta_sgemm_64x64_nn", "API: the innermost op's kernel")
end

-- the python stack, 150,000 frames, an op at each
do
  local trace = python_trace(150000)
  check_report(trace, "python", "--include-call-stack --platform H100")
  check_orchestrator(trace, "python")
  check_diff(trace, "python", 150000 + 3, "--include-call-stack")
end

-- the merged tree's text where it fits: prefixes and connectors as before
do
  local function small(path, right)
    local w = writer(path)
    w.event('{"ph":"X","cat":"cpu_op","name":"aten::outer","pid":1,"tid":1,"ts":100.000,"dur":100.000,"args":{}}')
    w.event('{"ph":"X","cat":"cpu_op","name":"aten::left","pid":1,"tid":1,"ts":101.000,"dur":40.000,"args":{}}')
    w.event('{"ph":"X","cat":"cpu_op","name":"%s","pid":1,"tid":1,"ts":150.000,"dur":40.000,"args":{}}', right)
    w.event('{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":151.000,"dur":1.000,'
      .. '"args":{"correlation":8}}')
    w.event('{"ph":"X","cat":"kernel","name":"k_right","pid":0,"tid":7,"ts":310.000,"dur":5.000,'
      .. '"args":{"device":0,"stream":7,"correlation":8}}')
    w.event('{"ph":"s","id":8,"pid":1,"tid":1,"ts":151.000,"cat":"ac2g","name":"ac2g"}')
    w.event('{"ph":"f","id":8,"pid":0,"tid":7,"ts":310.000,"cat":"ac2g","name":"ac2g","bp":"e"}')
    launching_mm(w, 3, 102, 300, 30)
    w.close()
    return tl.load(path)
  end
  local d = tl.diff(small(tmp .. "/small1.json", "aten::right"), small(tmp .. "/small2.json", "aten::other"))
  T.eq(d.merged_tree, table.concat({
    "└── aten::outer",
    "    ├── aten::left",
    "    │   └── aten::mm",
    "    │       └── cudaLaunchKernel",
    "    │           └── volta_sgemm_64x64_nn",
    "    └── combined: aten::right | aten::other",
    "        └── cudaLaunchKernel",
    "            └── k_right", "" }, "\n"), "merged tree text of a small pair")
end

-- the Lua library on values nested as deep as the trees
do
  local n = 250000
  local ok, v = pcall(json.decode, string.rep("[", n) .. "1" .. string.rep("]", n))
  T.check(ok and depth_of(v) == n and json.is_arr(v), "json.decode: arrays 250,000 deep")
  ok, v = pcall(json.decode, string.rep('{"a":', n) .. "null" .. string.rep("}", n))
  local k = 0
  while ok and json.is_obj(v) do
    v = v.a
    k = k + 1
  end
  T.check(ok and k == n and json.is_null(v), "json.decode: objects 250,000 deep")
  ok, v = pcall(json.decode, string.rep("[", n) .. "1" .. string.rep("]", n - 1))
  T.check(not ok and tostring(v):find("^JSON: byte %d+: expected ',' or ']'"), "json.decode: an unclosed array")
  local deep = json.arr({ 1 })
  for _ = 2, 1000 do deep = json.arr({ deep }) end
  local text = json.encode(deep)
  T.check(depth_of(json.decode(text)) == 1000, "json.encode: 1,000 levels round-trip")
  T.eq(json.encode(json.obj("a", json.arr({ 1, json.obj("b", json.arr()) }), "c", "x")),
    '{\n  "a": [\n    1,\n    {\n      "b": []\n    }\n  ],\n  "c": "x"\n}', "json.encode: nested text")
  ok, v = pcall(json.encode, json.arr({ deep }))
  T.check(not ok and v == "JSON: value nested deeper than 1000 levels", "json.encode: deeper refused: " .. tostring(v))
  local cyc = {}
  cyc[1] = { cyc }
  ok, v = pcall(json.encode, cyc)
  T.check(not ok and tostring(v):find("circular reference", 1, true), "json.encode: a cycle refused: " .. tostring(v))
  local lit, why = py.literal(string.rep("(", n) .. string.rep(")", n))
  T.check(lit == nil and why == "too many nested parentheses", "py.literal: 250,000 deep refused")
  lit = py.literal(string.rep("[", 200) .. string.rep("]", 200))
  T.eq(depth_of(lit), 199, "py.literal: 200 levels read")
  T.eq(py.literal(string.rep("[", 201) .. string.rep("]", 201)), nil, "py.literal: 201 levels refused, as Python")
end

-- trace args nested 1,000,000 deep: scanned, modelled and read back
do
  local path = tmp .. "/deep_args.json"
  local w = writer(path)
  launching_mm(w, 1, 100, 300, 50, string.rep("[", 1000000) .. string.rep("]", 1000000))
  w.close()
  local _, code, _, err = T.run(string.format("%s report %s -o %s --no-xlsx --platform H100", T.q(bin), T.q(path),
    T.q(tmp .. "/report_deep_args")))
  T.eq(code, 0, "args 1,000,000 deep: tracelens report exits 0 (" .. err:sub(1, 200) .. ")")
  -- ev.args: tables 200 deep, then the rest as its JSON text
  local k, bottom = depth_of(tl.load(path):node(0).args["Input Dims"])
  T.check(k == 200 and type(bottom) == "string" and #bottom == 2 * (1000000 - 200),
    "args 1,000,000 deep: read back (" .. k .. " levels of tables)")
end

io.write(string.format("(%.1f s)\n", tl.now() - t0))
T.rmrf(tmp)
T.finish()

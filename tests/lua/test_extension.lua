-- Extension modules (`--extension-file F.lua`, trace:report{extension = F}):
-- op_category overrides, a Lua perf model for an op without one (aten::gelu
-- on examples/demo_trace.json), an extra sheet, and the error cases: a
-- missing file, a syntax error, a bad field, a hook raising (one stderr line,
-- exit 1) and a model returning garbage (a warning, the rows dropped from the
-- perf sheet but kept in unified without metrics).
local root, _, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
bin = bin or T.tracelens_bin()

local demo = root .. "/examples/demo_trace.json"
local dir = T.tmpdir()

local function write(name, text)
  local p = dir .. "/" .. name
  local f = assert(io.open(p, "w"))
  f:write(text)
  f:close()
  return p
end

-- aten::gelu in the demo trace: 4 instances, Input Dims ((4, 1024, 4096), ()),
-- bf16. The model: flops = numel = 4*1024*4096 = 16777216, bytes = read +
-- write of 2-byte elements = 4 * 16777216 = 67108864 (64 MiB).
local GOOD = [[
return {
  op_category = { ["aten::gelu_backward"] = "activation_bwd" },
  perf_models = {
    ["aten::gelu"] = {
      category = "activation", sheet = "UnaryElementwise", maf = "vector",
      fn = function(ev)
        assert(ev.name == "aten::gelu")
        assert(#ev.kernels == 1 and ev.kernels[1]:find("Gelu"))
        assert(ev.args["Input Dims"][1][3] == 4096)
        assert(ev.input_type[1] == "c10::BFloat16" and ev.concrete_inputs[2] == "none")
        assert(ev.input_strides[1][1] == 4194304)
        local n = 1
        for _, d in ipairs(ev.input_dims[1]) do n = n * d end
        return { flops = n, bytes = 4 * n, precision = "bf16",
                 params = { {"N", n}, {"shape", ev.input_dims[1]}, {"note", "ext"} } }
      end,
    },
  },
  additional_sheets = function(trace, sheets)
    local u = trace:table("unified_perf_summary")
    -- sheets: this report's own sheets, so they carry the category overrides
    local cats, own = sheets.ops_summary_by_category, 0
    for i = 1, cats:nrows() do
      if cats:get(i, "op category") == "activation" then own = 1 end
    end
    return {
      ext_count = { columns = {"what", "n", "x", "ok"}, rows = { {"unified rows", u:nrows(), 0.5, true},
                                                               {"events", #trace, 1.5, false},
                                                               {"own report", own, 2.5, true} } },
      ext_copy = trace:table("gpu_timeline"),
    }
  end,
}
]]
local good = write("good.lua", GOOD)

local N = 4 * 1024 * 4096

-- a CSV as a list of rows keyed by column name
local function read_map(path)
  local header, rows = T.read_csv(path)
  local out = {}
  for i, r in ipairs(rows) do
    local m = {}
    for c, h in ipairs(header) do m[h] = r[c] end
    out[i] = m
  end
  return out
end
local function find(csv, name)
  for _, r in ipairs(csv.rows or csv) do if r.name == name then return r end end
end

-- expected per-instance kernel times of aten::gelu, from the trace itself
local cjson = require "cjson"
local f = assert(io.open(demo))
local doc = cjson.decode(f:read("a"))
f:close()
local gelu_k = {}
for _, e in ipairs(doc.traceEvents) do
  if e.cat == "kernel" and e.name:find("GeluCUDAKernelImpl", 1, true) and not e.name:find("Backward", 1, true) then
    gelu_k[#gelu_k + 1] = e.dur
  end
end
T.eq(#gelu_k, 4, "4 gelu kernels in the demo trace")
local tf_mean = 0
for _, d in ipairs(gelu_k) do tf_mean = tf_mean + N / (d * 1e-6) / 1e12 / #gelu_k end

local function check_sheets(get, how)
  local ue = get("UnaryElementwise")
  local g = ue and find(ue, "aten::gelu")
  T.check(g, how .. ": aten::gelu in UnaryElementwise")
  if g then
    T.close(tonumber(g["GFLOPS_first"]), N / 1e9, how .. ": GFLOPS_first", 1e-9, 0)
    T.close(tonumber(g["Data Moved (MB)_first"]), 64.0, how .. ": Data Moved (MB)", 1e-9, 0)
    T.close(tonumber(g["FLOPS/Byte_first"]), 0.25, how .. ": FLOPS/Byte", 1e-9, 0)
    T.close(tonumber(g["TFLOPS/s_mean"]), tf_mean, how .. ": TFLOPS/s_mean", 1e-6, 0)
    T.eq(tostring(g["param: N"]), tostring(N), how .. ": param N")
    T.eq(g["param: shape"], "(4, 1024, 4096)", how .. ": param shape")
    T.eq(g["param: note"], "ext", how .. ": param note")
  end
  local u = get("unified_perf_summary")
  local ug = find(u, "aten::gelu")
  T.check(ug, how .. ": aten::gelu in unified")
  if ug then
    T.eq(ug["op category"], "activation", how .. ": perf model category")
    T.check(ug["has_perf_model"] == true or ug["has_perf_model"] == "True", how .. ": has_perf_model")
    T.close(tonumber(ug["GFLOPS"]), N / 1e9, how .. ": unified GFLOPS", 1e-9, 0)
    T.close(tonumber(ug["TFLOPS/s_mean"]), tf_mean, how .. ": unified TFLOPS/s_mean", 1e-6, 0)
    T.eq(ug["Compute Spec"], "vector_bf16", how .. ": Compute Spec")
    T.eq(ug["perf_params"], "{'N': 16777216, 'shape': (4, 1024, 4096), 'note': 'ext'}", how .. ": perf_params")
  end
  local gb = find(u, "aten::gelu_backward")
  T.eq(gb and gb["op category"], "activation_bwd", how .. ": op_category override in unified")
  local cats = get("ops_summary_by_category")
  local seen = {}
  for _, r in ipairs(cats.rows or cats) do seen[r["op category"]] = true end
  T.check(seen.activation and seen.activation_bwd, how .. ": overridden categories in ops_summary_by_category")
  local ec = get("ext_count")
  T.check(ec, how .. ": extra sheet ext_count")
  if ec then
    local r1 = (ec.rows or ec)[1]
    T.eq(r1.what, "unified rows", how .. ": ext_count what")
    T.eq(tonumber(r1.n), #u, how .. ": ext_count n")
    T.check(r1.ok == true or r1.ok == "True", how .. ": ext_count bool")
    local r3 = (ec.rows or ec)[3]
    T.eq(tonumber(r3 and r3.n), 1, how .. ": additional_sheets gets the report's own sheets")
  end
  T.check(get("ext_copy"), how .. ": extra sheet from a Table")
end

-- the command line
local out = dir .. "/out"
local ok, code, _, err = T.run(T.q(bin) .. " report " .. T.q(demo) .. " -o " .. T.q(out) .. " -q --extension-file "
  .. T.q(good))
T.check(ok, "report with extension: exit " .. tostring(code) .. " " .. err)
local function csv(name)
  local p = out .. "/perf_report_csvs/" .. name .. ".csv"
  if not T.file_exists(p) then return nil end
  return read_map(p)
end
check_sheets(function(n)
  local c = csv(n)
  if not c then return nil end
  local rows = c.rows or c
  return rows
end, "cli")
T.check(T.file_exists(out .. "/perf_report.xlsx"), "cli: xlsx written")
-- the reference's flag name
ok = T.run(T.q(bin) .. " report " .. T.q(demo) .. " -o " .. T.q(dir .. "/out2") .. " -q --no-xlsx --extension_file "
  .. T.q(good))
T.check(ok, "--extension_file alias")

-- the Lua API
local trace = tl.load(demo)
local rep = trace:report{extension = good}
check_sheets(function(n)
  local t = rep[n]
  if not t then return nil end
  local rows = {}
  for i = 1, t:nrows() do rows[i] = t:row(i) end
  return rows
end, "lua")
local order = rep.__order
T.eq(order[#order - 1], "ext_copy", "extension sheets after the others (1)")
T.eq(order[#order], "ext_count", "extension sheets after the others (2)")
-- without the extension: no model, default categories
local plain = trace:report{}
local pu
for i = 1, plain.unified_perf_summary:nrows() do
  local r = plain.unified_perf_summary:row(i)
  if r.name == "aten::gelu" then pu = r end
end
T.eq(pu and pu.has_perf_model, false, "no extension: gelu has no model")
T.eq(pu and pu["op category"], "elementwise", "no extension: built-in category")

-- errors: one line on stderr, exit 1
local function fails(name, text, want, path)
  local ext = path or write(name .. ".lua", text)
  local o = dir .. "/err_" .. name
  local ok2, code2, _, err2 = T.run(T.q(bin) .. " report " .. T.q(demo) .. " -o " .. T.q(o) .. " -q --extension-file "
    .. T.q(ext))
  T.check(not ok2 and code2 == 1, name .. ": exit 1, got " .. tostring(code2))
  local lines = select(2, err2:gsub("\n", ""))
  T.eq(lines, 1, name .. ": one stderr line (" .. err2 .. ")")
  T.check(err2:find(want, 1, true), name .. ": message mentions '" .. want .. "': " .. err2)
  T.check(not T.dir_exists(o .. "/perf_report_csvs"), name .. ": no report written")
  local okl, msg = pcall(trace.report, trace, {extension = ext})
  T.check(not okl and tostring(msg):find(want, 1, true), name .. ": Lua API error: " .. tostring(msg))
end
fails("missing", nil, "cannot open", dir .. "/no_such_ext.lua")
fails("syntax", "return {", "syntax.lua")
fails("notable", "return 42", "must return a table")
fails("unknown", "return { op_categories = {} }", "unknown field 'op_categories'")
fails("treepost", "return { tree_postprocess_extension = function() end }", "not supported")
fails("badsheet", "return { perf_models = { ['aten::gelu'] = { sheet = 'Nope', fn = function() end } } }",
  "is not a perf sheet family")
fails("nofn", "return { perf_models = { ['aten::gelu'] = { sheet = 'GEMM' } } }", ".fn must be a function")
fails("raises", "return { additional_sheets = function() error('boom in hook') end }", "boom in hook")
fails("badname", "return { additional_sheets = function() return { ['a/b'] = {columns = {'x'}} } end }",
  "bad sheet name")
fails("dupname", "return { additional_sheets = function(t) return { GEMM = t:table('gpu_timeline') } end }",
  "already exists")

-- a model returning garbage: a warning once per op name, rows out of the
-- perf sheet, kept in unified without metrics
local bad = write("badmodel.lua", [[
return { perf_models = { ["aten::gelu"] = { sheet = "UnaryElementwise", fn = function(ev) return "garbage" end } } }
]])
local o3 = dir .. "/out3"
ok, code, _, err = T.run(T.q(bin) .. " report " .. T.q(demo) .. " -o " .. T.q(o3) .. " -q --no-xlsx --extension-file "
  .. T.q(bad))
T.check(ok, "bad model: still exit 0 (" .. tostring(code) .. ")")
T.eq(select(2, err:gsub("warning", "")), 1, "bad model: one warning line: " .. err)
T.check(err:find("aten::gelu", 1, true) and err:find("not a table", 1, true), "bad model: warning text: " .. err)
local ue = read_map(o3 .. "/perf_report_csvs/UnaryElementwise.csv")
T.check(not find(ue.rows or ue, "aten::gelu"), "bad model: gelu not in UnaryElementwise")
local uu = read_map(o3 .. "/perf_report_csvs/unified_perf_summary.csv")
local ug = find(uu.rows or uu, "aten::gelu")
T.check(ug and ug.has_perf_model == "True" and (ug.GFLOPS == "" or ug.GFLOPS == nil),
  "bad model: gelu in unified without metrics")

T.rmrf(dir)
T.finish()

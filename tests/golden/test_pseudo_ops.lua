-- Golden test of --enable_pseudo_ops (perf-report spec §3.10) against the
-- shipped inference references (../shared/data/inference).
--
-- Those references come from the inference mode: the graph-capture trace is
-- merged into the replay trace, and only then do the MoE ops see their
-- kernels. tracelens has no capture merge, so a plain report of a capture
-- trace has no matmul_ogs kernel for the pass to find. What is comparable:
--  1. vllm_decode_full: the pass does nothing on the capture trace alone,
--     so the report is byte-for-byte the report without the flag;
--  2. vllm_decode_full: a trace the test builds from the two real traces —
--     each vllm::moe_forward of the capture (its args and its TopK op) with
--     the replay's matmul_ogs / finalize kernels of that layer attached
--     through ordinary launches — gives the reference's MoE_unfused_fwd
--     sheet and pseudo-op unified_perf_summary rows (params, GFLOPS, bytes,
--     FLOPS/Byte, Compute Spec, shapes, kernel-time statistics, TB/s,
--     TFLOPS/s; not the UIDs, which depend on the merge) and its
--     vllm::moe_forward launcher time (ops_summary);
--  3. sglang_decode: the sglang_profiler name normalisation gives the names
--     the reference's sheets show.
local root, data, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local P = require "pylit"
local vdir = data and data .. "/inference/vllm_decode_full"
if not data or not T.dir_exists(vdir or "") then
  T.skip("../shared/data/inference not found: pseudo-op golden test skipped")
end
bin = bin or T.tracelens_bin()

local function read_all(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

local function report(trace, opts, out)
  local ok, code, _, err = T.run(T.q(bin) .. " report -q --no-xlsx " .. opts .. " " .. T.q(trace) .. " -o " .. T.q(out))
  T.check(ok, trace .. " " .. opts .. ": report failed (" .. tostring(code) .. "): " .. err)
  return ok, err
end

-- ------------------------------------------------------------------ 1.
local capture = T.glob(vdir .. "/capture_traces/*.trace.json.gz")[1]
T.check(capture ~= nil, "vllm capture trace found")
do
  local plain, pseudo = T.tmpdir(), T.tmpdir()
  report(capture, "--platform none", plain)
  local _, err = report(capture, "--platform none --enable_pseudo_ops", pseudo)
  T.check(not err:find("failed"), "no pseudo-op extension failed on the capture trace: " .. err)
  local files = T.glob(plain .. "/perf_report_csvs/*.csv")
  T.check(#files >= 5, "capture report sheets: " .. #files)
  for _, f in ipairs(files) do
    local name = f:match("([^/]+)$")
    local other = pseudo .. "/perf_report_csvs/" .. name
    T.check(T.file_exists(other) and read_all(other) == read_all(f), "capture trace: " .. name .. " unchanged by --enable_pseudo_ops")
  end
  T.eq(#T.glob(pseudo .. "/perf_report_csvs/*.csv"), #files, "capture trace: same sheets with --enable_pseudo_ops")
  T.rmrf(plain)
  T.rmrf(pseudo)
end

-- ------------------------------------------------------------------ 2.
-- A JSON encoder for args values (lists stay lists, even empty ones).
local cjson = require "cjson"
local function enc(v)
  local ty = type(v)
  if v == nil or v == cjson.null then return "null" end
  if ty == "boolean" then return tostring(v) end
  if ty == "number" then
    if math.type(v) == "integer" then return string.format("%d", v) end
    return string.format("%.17g", v)
  end
  if ty == "string" then
    return '"' .. v:gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"'
  end
  local n = #v
  local keyed = next(v) ~= nil and n == 0
  local parts = {}
  if keyed then
    local keys = {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do parts[#parts + 1] = enc(k) .. ":" .. enc(v[k]) end
    return "{" .. table.concat(parts, ",") .. "}"
  end
  for i = 1, n do parts[i] = enc(v[i]) end
  return "[" .. table.concat(parts, ",") .. "]"
end
local function us(ns) return string.format("%d.%03d", ns // 1000, ns % 1000) end
local SHAPE_KEYS = {"Input Dims", "Input type", "Input Strides", "Concrete Inputs"}
local function shape_args(ev, extra)
  local a, parts = ev.args, {}
  for _, k in ipairs(SHAPE_KEYS) do
    if a[k] ~= nil then parts[#parts + 1] = enc(k) .. ":" .. enc(a[k]) end
  end
  for k, v in pairs(extra or {}) do parts[#parts + 1] = enc(k) .. ":" .. enc(v) end
  return "{" .. table.concat(parts, ",") .. "}"
end

local spliced = os.tmpname() .. ".json"
do
  local cap = tl.load(capture)
  local moes = {}
  for ev in cap:events{name = "vllm::moe_forward"} do
    local topk
    for _, c in ipairs(ev:children()) do
      if c.name == "TopK" then topk = c break end
    end
    moes[#moes + 1] = {op = ev, topk = topk}
  end
  T.eq(#moes, 24, "vllm::moe_forward ops in the capture trace")
  local replay = tl.load(vdir .. "/graph_execution.json.gz")
  local kinds = {up = {}, down = {}, scatter = {}}
  for k in replay:events{cat = "kernel"} do
    local n = k.name
    if n:find("matmul_ogs", 1, true) and n:find("_swiglu", 1, true) then kinds.up[#kinds.up + 1] = k
    elseif n:find("matmul_ogs", 1, true) then kinds.down[#kinds.down + 1] = k
    elseif n:find("matmul_scatter", 1, true) then kinds.scatter[#kinds.scatter + 1] = k end
  end
  for _, l in pairs(kinds) do
    table.sort(l, function(a, b) return a.ts_ns < b.ts_ns end)
    T.eq(#l, 24, "replay kernels of one kind")
  end
  local ev = {}
  local corr = 1000
  for i, m in ipairs(moes) do
    local t0 = (i * 10000 + 1000) * 1000 -- ns
    ev[#ev + 1] = string.format('{"ph":"X","cat":"cpu_op","name":"vllm::moe_forward","pid":100,"tid":100,"ts":%s,"dur":%s,"args":%s}',
      us(t0), us(5000000), shape_args(m.op, {["External id"] = i}))
    if m.topk then
      ev[#ev + 1] = string.format('{"ph":"X","cat":"cpu_op","name":"TopK","pid":100,"tid":100,"ts":%s,"dur":%s,"args":%s}',
        us(t0 + 10000), us(100000), shape_args(m.topk))
    end
    local ks = {kinds.up[i], kinds.down[i], kinds.scatter[i]}
    table.sort(ks, function(a, b) return a.ts_ns < b.ts_ns end)
    for j, k in ipairs(ks) do
      corr = corr + 1
      local rt = t0 + 200000 + j * 100000
      ev[#ev + 1] = string.format('{"ph":"X","cat":"cuda_runtime","name":"hipModuleLaunchKernel","pid":100,"tid":100,"ts":%s,"dur":%s,"args":{"correlation":%d}}',
        us(rt), us(5000), corr)
      ev[#ev + 1] = string.format('{"ph":"s","cat":"ac2g","name":"ac2g","id":%d,"pid":100,"tid":100,"ts":%s}', corr, us(rt))
      ev[#ev + 1] = string.format('{"ph":"X","cat":"kernel","name":%s,"pid":2,"tid":0,"ts":%s,"dur":%s,"args":{"correlation":%d,"stream":0,"device":2}}',
        enc(k.name), us(k.ts_ns), us(k.dur_ns), corr)
      ev[#ev + 1] = string.format('{"ph":"f","bp":"e","cat":"ac2g","name":"ac2g","id":%d,"pid":2,"tid":0,"ts":%s}', corr, us(k.ts_ns))
    end
  end
  local f = assert(io.open(spliced, "wb"))
  f:write('{"traceEvents":[\n', table.concat(ev, ",\n"), "\n]}\n")
  f:close()
end

local spliced_out -- the report of the spliced trace

-- how a reference column compares (perf-report spec §0.3)
local function cell_eq(col, a, b)
  if a == b then return true end
  if col:match("kernel_details") or col:match("^Input ") or col:match("^Concrete Inputs") or col == "perf_params"
    or col == "Categories" then
    return a ~= "" and b ~= "" and P.equal(P.parse(a), P.parse(b), 1e-4, 1e-3)
  end
  local x, y = tonumber(a), tonumber(b)
  if not (x and y) then
    local na = a == "" or a == "None" or a == "nan"
    local nb = b == "" or b == "None" or b == "nan"
    return na and nb
  end
  if col:match("^param: ") or col:match("^GFLOPS") or col:match("^Data Moved") or col:match("^FLOPS/Byte") then
    return P.num_eq(x, y, 1e-9, 0)
  end
  if col:match("count") or col == "num_kernels" then return x == y end
  return P.num_eq(x, y, 1e-4, 1e-3)
end

local function by_name(header, rows)
  local ni
  for i, c in ipairs(header) do if c == "name" then ni = i end end
  local out = {}
  for _, r in ipairs(rows) do
    local o = {}
    for i, c in ipairs(header) do o[c] = r[i] or "" end
    out[r[ni]] = o
  end
  return out
end

-- Compares the rows named in `names` of sheet `sheet`, column by column
-- over the reference's columns except `skip`.
local function compare(sheet, names, skip, same_header)
  local mine = spliced_out .. "/perf_report_csvs/" .. sheet .. ".csv"
  local ref = vdir .. "/perf_csvs/" .. sheet .. ".csv"
  if not T.check(T.file_exists(mine), "spliced trace: sheet " .. sheet .. " written") then return end
  local h1, r1 = T.read_csv(mine)
  local h2, r2 = T.read_csv(ref)
  if same_header then T.eq(table.concat(h1, "|"), table.concat(h2, "|"), sheet .. " header") end
  local ours, theirs = by_name(h1, r1), by_name(h2, r2)
  local have = {}
  for _, c in ipairs(h1) do have[c] = true end
  for _, name in ipairs(names) do
    local a, b = ours[name], theirs[name]
    T.check(b ~= nil, sheet .. ": reference row " .. name)
    if T.check(a ~= nil, sheet .. ": our row " .. name) and b then
      for _, c in ipairs(h2) do
        if have[c] and not skip[c] then
          T.check(cell_eq(c, a[c], b[c]), string.format("%s %s column %q: ours %q, reference %q", sheet, name, c, a[c], b[c]))
        end
      end
    end
  end
end

do
  spliced_out = T.tmpdir()
  local ok, err = report(spliced, "--platform none --group-by-num-kernels --enable_pseudo_ops", spliced_out)
  T.check(not err:find("failed"), "no pseudo-op extension failed on the spliced trace: " .. err)
  if ok then
    local UP, DOWN = "pseudo_op::moe_triton_unfused_up", "pseudo_op::moe_triton_unfused_down"
    local FIN = "pseudo_op::moe_triton_unfused_finalize_matmul_scatter"
    -- the whole sheet but the UID (made by the merge)
    compare("MoE_unfused_fwd", {UP, DOWN}, {UID_first = true}, true)
    local h, rows = T.read_csv(spliced_out .. "/perf_report_csvs/MoE_unfused_fwd.csv")
    T.eq(#rows, 2, "MoE_unfused_fwd rows")
    -- unified_perf_summary: all but the UIDs and the shares of the total time
    compare("unified_perf_summary", {UP, DOWN, FIN},
      {ex_UID = true, ["Percentage (%)"] = true, ["Cumulative Percentage (%)"] = true}, false)
    local uh, ur = T.read_csv(spliced_out .. "/perf_report_csvs/unified_perf_summary.csv")
    local u = by_name(uh, ur)
    for _, n in ipairs({UP, DOWN, FIN}) do
      if u[n] then
        T.eq(u[n].duration_us_median, "", n .. ": no CPU duration (a pseudo op has no ts/dur)")
        T.eq(u[n].total_duration_us, "0.0", n .. ": total_duration_us")
      end
    end
    -- the kernels' launcher is still vllm::moe_forward (the reference keeps
    -- the launch's parent): its direct kernel time is theirs
    compare("ops_summary", {"vllm::moe_forward"},
      {total_subtree_kernel_time_sum = true, ["Percentage (%)"] = true, ["Cumulative Percentage (%)"] = true}, false)
    local oh, orows = T.read_csv(spliced_out .. "/perf_report_csvs/ops_summary.csv")
    local o = by_name(oh, orows)
    T.check(o[UP] == nil and o[DOWN] == nil, "pseudo ops are not launchers in ops_summary")
  end
  T.rmrf(spliced_out)
  os.remove(spliced)
end

-- ------------------------------------------------------------------ 3.
local sdir = data .. "/inference/sglang_decode"
if T.dir_exists(sdir) then
  local path = sdir .. "/capture_traces/bs_32_rank0.json.gz"
  local plain = tl.load(path)
  -- independently: the cpu_op names with a trailing _<digits> and what they become
  local expect, renamed = {}, 0
  local firstcat = {}
  for ev in plain:events() do
    local n = ev.name
    if firstcat[n] == nil then firstcat[n] = ev.cat or false end
  end
  for ev in plain:events() do
    local pre = ev.name:match("^(sglang_profiler::.+)_%d+$")
    if pre and firstcat[ev.name] == "cpu_op" then
      expect[pre] = (expect[pre] or 0) + 1
      renamed = renamed + 1
    end
  end
  T.check(renamed > 0, "sglang capture: sglang_profiler ops with a numeric suffix")
  local t = tl.load(path, {enable_pseudo_ops = true})
  T.eq(#t, #plain, "sglang capture: no pseudo op injected")
  local got = {}
  for ev in t:events{cat = "cpu_op"} do
    if ev.name:match("^sglang_profiler::") then
      T.check(not ev.name:match("_%d+$"), "sglang name normalised: " .. ev.name)
      got[ev.name] = (got[ev.name] or 0) + 1
    end
  end
  for n, c in pairs(expect) do T.eq(got[n], c, "events renamed to " .. n) end
  T.eq(t:info().pseudo_ops.renamed, renamed, "sglang capture: renamed events")
  -- every sglang_profiler name of the reference's sheets is one of ours
  for _, sheet in ipairs({"unified_perf_summary", "ops_unique_args", "ops_summary", "InferenceAttention_fwd"}) do
    local f = sdir .. "/perf_csvs/" .. sheet .. ".csv"
    if T.file_exists(f) then
      local _, rows = T.read_csv(f)
      for _, r in ipairs(rows) do
        if r[1]:match("^sglang_profiler::") then
          T.check(got[r[1]] ~= nil, sheet .. ": reference name " .. r[1] .. " among the normalised names")
        end
      end
    end
  end
  -- the reference row's shapes are those of the renamed capture ops
  local h, rows = T.read_csv(sdir .. "/perf_csvs/unified_perf_summary.csv")
  local ref = by_name(h, rows)["sglang_profiler::attention_paged_attention_ragged"]
  if T.check(ref ~= nil, "reference row sglang_profiler::attention_paged_attention_ragged") then
    local ev = t:events{name = "sglang_profiler::attention_paged_attention_ragged"}()
    local dims = ev and ev.args["Input Dims"]
    local function tuple(v)
      if type(v) ~= "table" then return v == nil and "None" or tostring(v) end
      local p = {}
      for i = 1, #v do p[i] = tuple(v[i]) end
      return "(" .. table.concat(p, ", ") .. (#v == 1 and ",)" or ")")
    end
    T.check(dims and P.equal(P.parse(tuple(dims)), P.parse(ref["Input Dims"]), 0, 0),
      "Input Dims of the normalised op: " .. tostring(dims and tuple(dims)) .. " vs " .. ref["Input Dims"])
  end
end

T.finish()

-- trace:iterations() and tl.steady_state (inference spec §1.2, §1.3, §1.7):
-- the iteration roots of the shared serving traces checked against the raw
-- JSON (read here with cjson: names, times, the GPU busy time of the GPU
-- events of the runtime calls inside each root on its thread), the tiers
-- and the meta fields on a trace built here, and the steady-state regions
-- and windows with the reference's unit tests (the region end with the FIX).
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local cjson = require "cjson"

local tmp = T.tmpdir()

local function raw_events(path)
  local ok, code, text = T.run("gzip -dc " .. T.q(path))
  T.check(ok, path .. ": gzip -dc exit " .. tostring(code))
  return cjson.decode(text).traceEvents
end

-- Iteration annotations as the reference finds them: tier 1 (detailed) if
-- any, else tier 2, sorted by ts. Only the grammars present in the shared
-- traces are needed here (vLLM detailed, SGLang native).
local function is_tier1(n)
  return n:match("^execute_%d+_context_%d+%(sq%d+sk%d+sqsq%d+sqsk%d+%)_generation_%d+%(sq%d+sk%d+sqsq%d+sqsk%d+%)") ~= nil
end
local function is_tier2(n)
  return n:match("^step%[DECODE[^%w_]") ~= nil or n:match("^step%[DECODE%]") ~= nil
end

local function union_us(iv)
  table.sort(iv, function(a, b) return a[1] < b[1] end)
  local busy, s, e = 0, nil, nil
  for _, x in ipairs(iv) do
    if not s then s, e = x[1], x[2]
    elseif x[1] > e then busy = busy + (e - s); s, e = x[1], x[2]
    elseif x[2] > e then e = x[2] end
  end
  if s then busy = busy + (e - s) end
  return busy
end

local GPU = {kernel = true, gpu_memcpy = true, gpu_memset = true}
local RUNTIME = {cuda_runtime = true, cuda_driver = true}

local function expected(events)
  local t1, t2 = {}, {}
  for _, e in ipairs(events) do
    if e.cat == "user_annotation" then
      if is_tier1(e.name) then t1[#t1 + 1] = e elseif is_tier2(e.name) then t2[#t2 + 1] = e end
    end
  end
  local roots = #t1 > 0 and t1 or t2
  table.sort(roots, function(a, b) return a.ts < b.ts end)
  local by_corr = {}
  for _, e in ipairs(events) do
    local c = GPU[e.cat] and e.args and e.args.correlation
    if c then
      by_corr[c] = by_corr[c] or {}
      table.insert(by_corr[c], {e.ts, e.ts + e.dur})
    end
  end
  for _, r in ipairs(roots) do
    local iv, n = {}, 0
    for _, e in ipairs(events) do
      if RUNTIME[e.cat] and e.pid == r.pid and e.tid == r.tid and e.ts >= r.ts and e.ts + e.dur <= r.ts + r.dur
        and e.args and e.args.correlation and by_corr[e.args.correlation] then
        for _, x in ipairs(by_corr[e.args.correlation]) do iv[#iv + 1] = x; n = n + 1 end
      end
    end
    r.busy, r.n_gpu = union_us(iv), n
  end
  return roots
end

local cases = {
  {dir = "sglang_decode", trace = "sglang_Qwen3-8B_decode.json.gz", g_sk = 32785},
  {dir = "vllm_decode_full", trace = "graph_execution.json.gz", g_sk = 55086},
}
local found = 0
for _, c in ipairs(cases) do
  local path = shared .. "/inference/" .. c.dir .. "/" .. c.trace
  if T.file_exists(path) then
    found = found + 1
    local its = tl.load(path):iterations()
    local exp = expected(raw_events(path))
    T.eq(#its, #exp, c.dir .. ": iteration count")
    T.eq(#its, 1, c.dir .. ": one iteration")
    for i, e in ipairs(exp) do
      local it = its[i] or {}
      T.eq(it.name, e.name, c.dir .. ": name " .. i)
      T.close(it.ts_us, e.ts, c.dir .. ": ts", 0, 1e-3)
      T.close(it.dur_us, e.dur, c.dir .. ": dur", 0, 1e-3)
      T.close(it.gpu_busy_us, e.busy, c.dir .. ": gpu busy (the JSON read as doubles: ~1 ns each end)", 0, 0.05)
      T.eq(it.num_gpu_events, e.n_gpu, c.dir .. ": GPU events")
      T.check(e.busy > 1000, c.dir .. ": the iteration has GPU work: " .. e.busy)
    end
    local it = its[1] or {}
    T.eq(it.format, "vllm_detailed", c.dir .. ": format")
    T.eq(it.tier, 1, c.dir .. ": tier")
    T.eq(it.phase, "decode_only", c.dir .. ": phase")
    T.eq(it.batch_size, 32, c.dir .. ": batch size")
    T.eq(it.generation_requests, 32, c.dir .. ": generation requests")
    T.eq(it.num_requests, 32, c.dir .. ": requests")
    T.eq(it.context_requests, 0, c.dir .. ": context requests")
    T.eq(it.g_sk, c.g_sk, c.dir .. ": g_sk")
    T.eq(it.has_sqsk, true, c.dir .. ": has_sqsk")
    local ss = tl.steady_state(its, {num_steps = 32})
    T.eq(#ss.regions, 1, c.dir .. ": one region")
    T.eq(ss.window and ss.window.first, 1, c.dir .. ": window first")
    T.eq(ss.window and ss.window.last, 1, c.dir .. ": window last")
  end
end
if found == 0 then print("note: ../shared/data/inference absent; the shared traces were not checked") end

-- Tiers, formats and meta on a trace built here: no tier-1 annotation, so
-- the tier-2 ones (SGLang native, ATOM native, diffusion) are the roots.
local ev = {
  T.x_event("user_annotation", "ProfilerStep#1", 0, 1000),
  T.x_event("user_annotation", "step[DECODE bs=32]", 300, 100),
  T.x_event("user_annotation", "prefill[bs=2 tok=14721 ctx=[7803, 6918]]", 100, 100),
  T.x_event("user_annotation", "decode[bs=128 tok=384 p=2 d=126 tbo=1]", 500, 100),
  T.x_event("user_annotation", "execute_diffusion_1_1024x1024", 700, 100),
  T.x_event("cpu_op", "aten::mm", 310, 10),
}
local p = tmp .. "/tiers.json"
tl.fs.write_file(p, '{"traceEvents":[' .. table.concat(ev, ",") .. "]}")
local its = tl.load(p):iterations()
T.eq(#its, 4, "built: four tier-2 roots")
local want = {
  {"atom_native", "prefill_only", 14721, 2, 0},
  {"sglang_native", "decode_only", 32, 0, 32},
  {"atom_native", "decode_only", 384, 0, 128},
  {"diffusion_native", nil, 1, 0, 0},
}
for i, w in ipairs(want) do
  local it = its[i] or {}
  T.eq(it.format, w[1], "built " .. i .. ": format")
  T.eq(it.phase, w[2], "built " .. i .. ": phase")
  T.eq(it.batch_size, w[3], "built " .. i .. ": batch size")
  T.eq(it.context_requests, w[4], "built " .. i .. ": context requests")
  T.eq(it.generation_requests, w[5], "built " .. i .. ": generation requests")
  T.eq(it.tier, 2, "built " .. i .. ": tier")
  T.eq(it.gpu_busy_us, 0, "built " .. i .. ": no GPU work")
end
T.eq(its[1] and its[1].meta.ctx, "[7803, 6918]", "built: meta.ctx")
T.eq(its[3] and its[3].meta.p, 2, "built: meta.p")
T.eq(its[3] and its[3].meta.d, 126, "built: meta.d")
T.eq(its[3] and its[3].meta.tbo, true, "built: meta.tbo")
T.eq(its[4] and its[4].meta.resolution, "1024x1024", "built: meta.resolution")

-- No annotation: trace:iterations{generic = true} falls back to the
-- repeating blocks of the call tree (spec §1.3, the splitter's third tier).
local gev = { T.x_event("cpu_op", "forward", 0, 1000) }
for i = 0, 5 do
  local t0 = 10 + i * 100
  gev[#gev + 1] = T.x_event("cpu_op", i % 2 == 1 and "aten::relu" or "aten::mm", t0, 50)
  gev[#gev + 1] = T.x_event("cuda_runtime", "cudaLaunchKernel", t0 + 10, 5, { correlation = tostring(i + 1) })
  gev[#gev + 1] = T.flow_event("s", i + 1, 1, 1, t0 + 10)
  gev[#gev + 1] = T.flow_event("f", i + 1, 0, 7, t0 + 60)
  gev[#gev + 1] = T.x_event("kernel", "k" .. i, t0 + 60, 20, { correlation = tostring(i + 1) }, 0, 7)
end
local gp = tmp .. "/generic.json"
tl.fs.write_file(gp, '{"traceEvents":[' .. table.concat(gev, ",") .. "]}")
local gt = tl.load(gp)
T.eq(#gt:iterations(), 0, "generic: no annotation, no iteration by default")
local g = gt:iterations({ generic = true })
T.eq(#g, 3, "generic: three mm-relu blocks")
for i, it in ipairs(g) do
  T.eq(it.name, "aten::mm", "generic " .. i .. ": named as its first event")
  T.eq(it.tier, 3, "generic " .. i .. ": tier 3")
  T.eq(it.format, nil, "generic " .. i .. ": no format")
  T.eq(it.phase, "decode_only", "generic " .. i .. ": one decode-equivalent step")
  T.eq(it.batch_size, 1, "generic " .. i .. ": batch 1")
  T.eq(it.dur_us, 150, "generic " .. i .. ": mm start to relu end")
  T.eq(it.gpu_busy_us, 40, "generic " .. i .. ": two 20 us kernels")
end

-- The reference's unit tests of identify_steady_state_regions.
local function steps(list)
  local out = {}
  for i, n in ipairs(list) do out[i] = {num_requests = n, generation_requests = n, batch_size = n} end
  return out
end
local l = {}
for i = 1, 34 do l[i] = i <= 4 and 2 or 20 end
local ss = tl.steady_state(steps(l), {num_steps = 32})
T.eq(#ss.regions, 1, "clear region: one")
T.eq(ss.regions[1].first, 5, "clear region: first (index 4, 1-based 5)")
T.eq(ss.regions[1].last, 34, "clear region: last = the last step ([FIX]; the reference drops it)")
T.eq(ss.global_max, 20, "clear region: global max")
T.eq(ss.fallback, false, "clear region: not the fallback")
T.eq(ss.window.first, 5, "clear region: mixed window first")
T.eq(ss.window.last, 34, "clear region: mixed window last")
ss = tl.steady_state(steps(l), {num_steps = 32, mode = "max_prefilldecode"})
T.eq(ss.window, nil, "no prefill step: no max_prefilldecode window")
l = {}
for i = 1, 10 do l[i] = i % 2 == 1 and 20 or 2 end
ss = tl.steady_state(steps(l), {num_steps = 12})
T.eq(#ss.regions, 1, "alternating: fallback region")
T.eq(ss.fallback, true, "alternating: said to be the fallback")
T.eq(ss.regions[1].first, 5, "alternating: (4, 6) -> first 5")
T.eq(ss.regions[1].last, 6, "alternating: (4, 6) -> last 6")
-- mixed: a prefill step every 4th, windows of 8
local mixed = {}
for i = 1, 40 do
  local ctx = i % 4 == 0 and 1 or 0
  mixed[i] = {num_requests = 16, context_requests = ctx, generation_requests = 16 - ctx, batch_size = 16}
end
ss = tl.steady_state(mixed, {num_steps = 8})
T.eq(ss.reference_ratio, 0.25, "mixed: reference ratio")
T.eq(ss.window.first, 1, "mixed: first window")
T.eq(ss.window.num_steps, 8, "mixed: window size")
T.eq(ss.window.num_prefilldecode, 2, "mixed: mixed steps in the window")
T.eq(ss.window.num_decode, 6, "mixed: decode steps in the window")
T.eq(ss.window.avg_conc, 16, "mixed: avg conc")
ss = tl.steady_state(mixed, {num_steps = 8, mode = "decode_only"})
T.eq(ss.window.first, 1, "decode_only: first")
T.eq(ss.window.last, 3, "decode_only: last")
ss = tl.steady_state(mixed, {num_steps = 2, conc = 16, osl = 64, r = 1})
T.eq(ss.ideal_ratio, 0.25, "conc/osl/r: ideal ratio")
T.eq(ss.num_steps, 4, "conc/osl/r: num_steps raised")
local ok, err = pcall(tl.steady_state, mixed, {mode = "bogus"})
T.check(not ok and tostring(err):find("mode must be", 1, true), "bad mode: " .. tostring(err))
ok, err = pcall(tl.steady_state, {{num_requests = -1}})
T.check(not ok and tostring(err):find("non-negative integer", 1, true), "bad count: " .. tostring(err))
ss = tl.steady_state({})
T.eq(#ss.regions, 0, "no iterations: no region")
T.eq(ss.window, nil, "no iterations: no window")

T.rmrf(tmp)
T.finish()

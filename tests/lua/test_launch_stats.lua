-- trace:launch_stats() and the launch_stats sheet: a trace built here with
-- hand-computed delays, quantiles and outliers (a graph launch and an
-- unlinked kernel left out); and on a shared trace, every figure recomputed
-- here from the raw JSON (cjson): launches by correlation id, quantiles by
-- linear interpolation.
local root, data = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local cjson = require "cjson"
local dir = T.tmpdir()
local X, F = T.x_event, T.flow_event

local ev = {}
local function add(...) for _, e in ipairs({ ... }) do ev[#ev + 1] = e end end
local function launched(corr, name, lts, ldur, kts, kdur, call)
  add(X("cuda_runtime", call or "cudaLaunchKernel", lts, ldur, { correlation = tostring(corr) }), F("s", corr, 1, 1, lts))
  add(X("kernel", name, kts, kdur, { correlation = tostring(corr), stream = "7" }, 0, 7), F("f", corr, 0, 7, kts))
end
launched(1, "gemm", 100, 5, 110, 50)   -- delay 10
launched(2, "gemm", 200, 7, 230, 30)   -- delay 30
launched(3, "gemm", 300, 9, 400, 40)   -- delay 100: the outlier
launched(4, "relu", 500, 4, 504, 10)   -- delay 4
-- a graph launch replaying two kernels: not launches of their own
launched(5, "g1", 600, 20, 700, 5, "cudaGraphLaunch")
add(X("kernel", "g2", 710, 5, { correlation = "5", stream = "7" }, 0, 7), F("f", 5, 0, 7, 710))
add(X("kernel", "orphan", 900, 5, { stream = "7" }, 0, 7))
local path = dir .. "/launch.json"
local f = assert(io.open(path, "w"))
f:write('{"traceEvents":[', table.concat(ev, ",\n"), "]}")
f:close()

local t = tl.load(path)
local ls = t:launch_stats{ launches = true }
T.eq(ls.all.count, 4, "four single launches")
T.eq(ls.graph_kernels, 2, "the graph's two kernels apart")
T.eq(ls.unlinked_gpu_events, 1, "one unlinked kernel")
T.close(ls.all.launch_delay.mean, 36, "mean delay (4 + 10 + 30 + 100) / 4", 0, 1e-9)
T.close(ls.all.launch_delay.median, 20, "median delay: between 10 and 30", 0, 1e-9)
T.close(ls.all.launch_delay.p95, 89.5, "p95 at 2.85: 30 + 0.85 x 70", 0, 1e-9)
T.close(ls.outlier_threshold_us, 89.5, "outliers above the p95", 0, 1e-9)
T.eq(#ls.outliers, 1, "one outlier")
T.eq(ls.outliers[1].name, "gemm", "the slow-to-start gemm")
T.close(ls.outliers[1].launch_delay_us, 100, "its delay", 0, 1e-9)
T.eq(#ls.kernels, 2, "two names")
local g, r = ls.kernels[1], ls.kernels[2]
T.eq(g.name, "gemm", "by GPU time: gemm first")
T.eq(g.count, 3, "three gemms")
T.eq(g.outliers, 1, "the outlier is a gemm")
T.close(g.launch_delay.mean, 140 / 3, "gemm mean delay", 1e-12, 0)
T.close(g.launch_delay.median, 30, "gemm median delay", 0, 1e-9)
T.close(g.launch_delay.p95, 93, "gemm p95 at 1.9: 30 + 0.9 x 70", 0, 1e-9)
T.close(g.cpu_launch.mean, 7, "gemm mean launch call", 0, 1e-9)
T.close(g.cpu_launch.p95, 8.8, "gemm p95 launch call 7 + 0.9 x 2", 0, 1e-9)
T.close(g.gpu_dur.median, 40, "gemm median GPU time", 0, 1e-9)
T.close(g.gpu_dur.p95, 49, "gemm p95 GPU time", 0, 1e-9)
T.close(g.gpu_dur.sum, 120, "gemm GPU time", 0, 1e-9)
T.eq(r.name, "relu", "relu second")
T.close(r.launch_delay.p95, 4, "one value: every quantile is it", 0, 1e-9)
T.eq(#ls.launches, 4, "launches = true lists them")
T.close(ls.launches[1].cpu_launch_us, 5, "first launch call", 0, 1e-9)

local rep = t:report{ platform = "none" }
local sh = rep.launch_stats
T.check(sh ~= nil, "launch_stats sheet written")
T.eq(sh:nrows(), 3, "the all row and two names")
T.eq(sh:get(1, "name"), "(all launches)", "all row first")
T.close(sh:get(2, "launch_delay_p95_us"), 93, "sheet gemm p95 delay", 0, 1e-9)
T.eq(sh:get(2, "delay_outliers"), 1, "sheet outliers")
T.close(sh:get(3, "outlier_threshold_us"), 89.5, "threshold stated", 0, 1e-9)
T.check(t:report{ launch_stats = false, platform = "none" }.launch_stats == nil, "launch_stats = false omits it")

local function quantile(v, q)
  local pos = q * (#v - 1)
  local lo = math.floor(pos)
  if lo + 1 >= #v then return v[#v] end
  return v[lo + 1] + (v[lo + 2] - v[lo + 1]) * (pos - lo)
end

-- a capture merge links each replayed kernel to a copy of its capture call, which carries the graph launch's ts:
-- those kernels are the graph's, not launches of their own (SGLang's decode step: their "delays" were their
-- positions in the graph, a median 5058.8 µs). Counted here from the raw trace: the kernels whose correlation is a
-- graph launch's.
local sg = data and data .. "/inference/sglang_decode"
if sg and T.file_exists(sg .. "/sglang_Qwen3-8B_decode.json.gz") then
  local merged = tl.load(sg .. "/sglang_Qwen3-8B_decode.json.gz", { capture_folder = sg .. "/capture_traces" })
  local plain = tl.load(sg .. "/sglang_Qwen3-8B_decode.json.gz")
  local lm, lp = merged:launch_stats{ launches = true }, plain:launch_stats{ launches = true }
  T.eq(lm.all.count, lp.all.count, "capture merge: the same launches as without it")
  T.eq(lm.graph_kernels, lp.graph_kernels, "capture merge: the replayed kernels stay the graph's")
  T.check(lm.graph_kernels > 500, "capture merge: the graph's kernels counted apart (" .. tostring(lm.graph_kernels) .. ")")
else
  print("note: ../shared/data/inference/sglang_decode not found: the capture-merge launch case is skipped")
end

local shared = data and data .. "/multirank/world8/ranks/rank0_trace.json.gz"
if shared and T.file_exists(shared) then
  local ok, code, text = T.run("gzip -dc " .. T.q(shared))
  T.check(ok, "gzip -dc exit " .. tostring(code))
  local evs = cjson.decode(text).traceEvents
  local function ns(v)
    local w = math.floor(v)
    return w * 1000 + math.floor((v - w) * 1000 + 0.5)
  end
  local call, ngpu = {}, {}
  for _, e in ipairs(evs) do
    local a = e.args or {}
    if (e.cat == "cuda_runtime" or e.cat == "cuda_driver") and a.correlation then call[a.correlation] = e end
  end
  local gpu = {}
  for _, e in ipairs(evs) do
    local a = e.args or {}
    if e.ph == "X" and (e.cat == "kernel" or e.cat == "gpu_memcpy" or e.cat == "gpu_memset") and a.correlation
        and call[a.correlation] then
      ngpu[a.correlation] = (ngpu[a.correlation] or 0) + 1
      gpu[#gpu + 1] = e
    end
  end
  local delays, byname = {}, {}
  for _, e in ipairs(gpu) do
    local c = e.args.correlation
    if ngpu[c] == 1 then
      local d = ns(e.ts) - ns(call[c].ts)
      delays[#delays + 1] = d
      local b = byname[e.name] or { n = 0, sum = 0, d = {} }
      byname[e.name] = b
      b.n, b.sum = b.n + 1, b.sum + ns(e.dur)
      b.d[#b.d + 1] = d
    end
  end
  table.sort(delays)
  local p95 = quantile(delays, 0.95)
  local got = tl.load(shared):launch_stats()
  T.eq(got.all.count, #delays, "shared: launches")
  T.close(got.all.launch_delay.median, quantile(delays, 0.5) / 1000, "shared: median delay", 1e-12, 1e-9)
  T.close(got.all.launch_delay.p95, p95 / 1000, "shared: p95 delay", 1e-12, 1e-9)
  local nout = 0
  for _, d in ipairs(delays) do if d > p95 then nout = nout + 1 end end
  T.eq(#got.outliers, nout, "shared: outliers")
  local names = 0
  for _ in pairs(byname) do names = names + 1 end
  T.eq(#got.kernels, names, "shared: names")
  for i, k in ipairs(got.kernels) do
    local b = byname[k.name]
    T.check(b ~= nil, "shared: " .. k.name .. " launched")
    if b then
      table.sort(b.d)
      T.eq(k.count, b.n, "shared: count of " .. k.name)
      T.eq(k.gpu_dur.sum, b.sum / 1000, "shared: GPU time of " .. k.name)
      T.close(k.launch_delay.p95, quantile(b.d, 0.95) / 1000, "shared: p95 delay of " .. k.name, 1e-12, 1e-9)
      if i > 1 then T.check(k.gpu_dur.sum <= got.kernels[i - 1].gpu_dur.sum, "shared: by GPU time") end
    end
  end
else
  print("note: ../shared/data not found: the shared-trace launch statistics are skipped")
end
T.rmrf(dir)
T.finish()

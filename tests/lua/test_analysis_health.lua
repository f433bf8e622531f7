-- The analysis speaks of the trace's health and its steps: a trace built
-- here with four steps (one 30% slower than the others) and one GPU event
-- without a launch gets a "Trace health" warning in analysis.md and a Steps
-- table whose rows are the steps' figures computed here; the same trace
-- with even steps gets no Steps section; a trace whose GPU computes for 2%
-- of its time gets no "within target" verdict on its kernels.
local root = arg[1]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local bin = T.tracelens_bin()
local dir = T.tmpdir()
local X, F = T.x_event, T.flow_event

-- step i: [t, t + wall); one aten::mm launching one 400 us GEMM kernel
local function trace(walls, path)
  local ev, t, corr = {}, 0, 0
  for i, wall in ipairs(walls) do
    corr = corr + 1
    ev[#ev + 1] = X("user_annotation", "ProfilerStep#" .. i, t, wall, {})
    ev[#ev + 1] = X("cpu_op", "aten::mm", t + 10, 50,
      { ["Input Dims"] = "[[1024, 1024], [1024, 1024]]", ["Input type"] = '["c10::BFloat16", "c10::BFloat16"]' })
    ev[#ev + 1] = X("cuda_runtime", "cudaLaunchKernel", t + 20, 10, { correlation = tostring(corr) })
    ev[#ev + 1] = F("s", corr, 1, 1, t + 20)
    ev[#ev + 1] = X("kernel", "sm90_xmma_gemm_bf16bf16_bf16f32", t + 100, 400,
      { correlation = tostring(corr), stream = "7", device = "0" }, 0, 7)
    ev[#ev + 1] = F("f", corr, 0, 7, t + 100)
    t = t + wall
  end
  -- a kernel no runtime event launched
  ev[#ev + 1] = X("kernel", "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>", 50, 20,
    { correlation = "999", stream = "7", device = "0" }, 0, 7)
  local f = assert(io.open(path, "w"))
  f:write('{"deviceProperties":[{"name":"NVIDIA H100 80GB HBM3"}],"traceEvents":[', table.concat(ev, ",\n"), "]}")
  f:close()
end

local uneven, even = dir .. "/uneven.json", dir .. "/even.json"
trace({ 1000, 1000, 1300, 1000 }, uneven)
trace({ 1000, 1000, 1050, 1000 }, even)

local ok, code, _, err = T.run(T.q(bin) .. " run orchestrator.lua " .. T.q(uneven) .. " -o " .. T.q(dir .. "/a") .. " -q")
T.check(ok, "analysis of the uneven trace: exit " .. tostring(code) .. " " .. err)
local md = T.read_file(dir .. "/a/analysis.md") or ""
T.check(md:find("**Trace health**", 1, true), "a Trace health block")
T.check(md:find("- **GPU events without a launch** (warning): 1 GPU event (0.0 ms, 1.2% of all GPU event time) has no launch call", 1, true),
  "the unlinked kernel named with its share (20 of 1620 us)")
local steps = md:match("## Steps\n(.-)\n## ") or md:match("## Steps\n(.-)%-%-%-") or ""
T.check(steps:find("range from 1.000 to 1.300 ms (median 1.000 ms, a spread of 30.0% of the median", 1, true),
  "the spread sentence: " .. steps:sub(1, 300))
for i, wall in ipairs({ "1.000", "1.000", "1.300", "1.000" }) do
  T.check(steps:find("| ProfilerStep#" .. i .. " | steady | " .. wall .. " | 0.400 |", 1, true)
    or steps:find("| ProfilerStep#" .. i .. " | steady | " .. wall .. " | 0.420 |", 1, true),
    "row of step " .. i)
end
local _, vcode = T.run(T.q(bin) .. " validate " .. T.q(dir .. "/a"))
T.eq(vcode, 0, "validate passes")

ok = T.run(T.q(bin) .. " run orchestrator.lua " .. T.q(even) .. " -o " .. T.q(dir .. "/b") .. " -q")
T.check(ok, "analysis of the even trace")
local md2 = T.read_file(dir .. "/b/analysis.md") or ""
T.check(not md2:find("## Steps", 1, true), "steps within 10% of each other: no Steps section")
-- every step with GPU work a warm-up step (HTA's MI250 toy trace): the Steps section says the figures are warm-up's
do
  local ev = {
    X("user_annotation", "ProfilerStep#1", 0, 3000, {}),
    X("cpu_op", "aten::mm", 10, 50, { ["Input Dims"] = "[[1024, 1024], [1024, 1024]]" }),
    X("cuda_runtime", "cudaLaunchKernel", 20, 10, { correlation = "1" }),
    F("s", 1, 1, 1, 20),
    X("kernel", "sm90_xmma_gemm_bf16bf16_bf16f32", 100, 400, { correlation = "1", stream = "7", device = "0" }, 0, 7),
    F("f", 1, 0, 7, 100),
    X("user_annotation", "ProfilerStep#2", 3000, 1000, {}),
    X("cpu_op", "aten::empty", 3010, 50, {}),
    X("user_annotation", "ProfilerStep#3", 4000, 1000, {}),
    X("cpu_op", "aten::empty", 4010, 50, {}),
  }
  local warm = T.write_trace(dir .. "/warm.json", ev)
  local okw, codew, _, errw = T.run(T.q(bin) .. " run orchestrator.lua " .. T.q(warm) .. " -o " .. T.q(dir .. "/w")
    .. " -q")
  T.check(okw, "analysis of the warm-up trace: exit " .. tostring(codew) .. " " .. tostring(errw))
  local mdw = T.read_file(dir .. "/w/analysis.md") or ""
  T.check(mdw:find("## Steps\n\nAll of the steps' GPU work is in a warm-up step (ProfilerStep#1: wall time more than "
    .. "1.5 times the median step's), so the figures of this analysis describe warm-up", 1, true),
    "warm-up only: said " .. (mdw:match("## Steps.-\n\n.-\n") or ""))
  T.check(not md:find("All of the steps' GPU work is in", 1, true), "steady steps: no warm-up sentence")
end

-- a GPU that mostly idles (the shipped SGLang decode step: 2% computation
-- in a 474 ms trace): no "within target" verdict on the kernels
local data = arg[2]
local case = data and data .. "/inference/sglang_decode"
if case and T.file_exists(case .. "/sglang_Qwen3-8B_decode.json.gz") then
  local ok3, code3, _, err3 = T.run(T.q(bin) .. " run orchestrator.lua " .. T.q(case .. "/sglang_Qwen3-8B_decode.json.gz")
    .. " --inference --capture_folder " .. T.q(case .. "/capture_traces") .. " -o " .. T.q(dir .. "/c") .. " -q")
  T.check(ok3, "analysis of the SGLang decode step: exit " .. tostring(code3) .. " " .. tostring(err3))
  local md3 = T.read_file(dir .. "/c/analysis.md") or ""
  T.check(not md3:find("within target", 1, true), "no within-target verdict when the GPU computes 2% of the time")
  T.check(md3:find("but that is no verdict on the kernels: the GPU computes for only 2.06% of the 473.75 ms GPU span",
    1, true), "the low-compute sentence")
  T.check(md3:find("No compute kernel finding reaches the reporting threshold, but the GPU computes for only 2.06% of "
    .. "the span and each impact_score is a share of the whole span, so this says little about the kernels themselves.",
    1, true), "the Executive Summary's sentence says the same")
else
  print("note: ../shared/data not found: the low-compute case is skipped")
end
T.rmrf(dir)
T.finish()

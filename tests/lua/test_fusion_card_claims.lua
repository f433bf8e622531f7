-- What the kernel fusion cards say about the kernels (docs/compat.md
-- "kernel fusion cards: what the kernels do"; docs/analyzers.md, kernel
-- fusion analyzer). Three hand-made traces, each through the orchestrator,
-- shaped as PyTorch 2.11 writes them (the H200 captures' kernel names and
-- op arguments):
--   1. a LayerNorm backward autograd node, 2 instances: the input-gradient
--      kernel and the γ/β reduction under NativeLayerNormBackward0, and an
--      add that `aten::add_` launches directly under the node (autograd
--      accumulating the input gradient). No residual add, no forward
--      add-and-normalize advice, no "chain of elementwise kernels";
--   2. a training BatchNorm (`aten::native_batch_norm`), 2 instances of
--      different sizes: statistics pass, applying pass and two short kernels.
--      The Insight's count agrees with the table's Type column, no "one pass
--      over memory", the durations are said to be the first instance's, with
--      the mean;
--   3. a python frame holding a `mul_` on stream 53 and two GEMMs (cuBLASLt's
--      nvjet kernel), each followed by an add, on stream 7: set aside (two
--      streams), not described as one chain; an nvjet kernel is a GEMM;
--   4. (the analyzer alone) an nvjet GEMM the estimate does not count as
--      matrix: typed GEMM, and no "no matrix kernels".
-- Every expected number is worked out from the durations written below.
local root, _, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local rules = require "tracelens.fusion_rules"
local fusion = require "tracelens.fusion"

bin = bin or T.tracelens_bin()
local tmp = T.tmpdir()

-- A trace builder: CPU events on pid 1 / tid 1, kernels on pid 0 / tid = stream.
local function builder()
  local b = { events = {}, corr = 0 }
  function b.op(cat, name, ts, dur, args) b.events[#b.events + 1] = T.x_event(cat, name, ts, dur, args) end
  -- a launch at ts (5 µs) of kernel `name` running at gpu_ts for dur µs on stream
  function b.launch(ts, name, gpu_ts, dur, stream)
    b.corr = b.corr + 1
    b.events[#b.events + 1] = T.x_event("cuda_runtime", "cudaLaunchKernel", ts, 5, { correlation = b.corr })
    b.events[#b.events + 1] = T.flow_event("s", b.corr, 1, 1, ts)
    b.events[#b.events + 1] = T.x_event("kernel", name, gpu_ts, dur, { correlation = b.corr, stream = stream }, 0,
      stream)
    b.events[#b.events + 1] = T.flow_event("f", b.corr, 0, stream, gpu_ts)
  end
  function b.write(name) return T.write_trace(tmp .. "/" .. name .. ".json", b.events) end
  return b
end

local function analyze(path, name)
  local out = tmp .. "/" .. name
  local ok, code, stdout, stderr = T.run(string.format("%s run orchestrator.lua %s --platform H200 -o %s -q",
    T.q(bin), T.q(path), T.q(out)))
  T.check(ok, name .. ": orchestrator exit " .. tostring(code) .. "\n" .. stdout .. stderr)
  return T.read_file(out .. "/system_findings/kernel_fusion_findings.md") or "", T.read_file(out .. "/analysis.md") or ""
end

local function has(s, text, what) T.check(s:find(text, 1, true) ~= nil, what .. ": has " .. text) end
local function lacks(s, text, what) T.check(s:find(text, 1, true) == nil, what .. ": no " .. text) end

-- The Insight's "(1 Fill, 3 BatchNorm)" against the first kernel table's Type column.
local function count_agrees(s, what)
  local comp = s:match("launches %d+ separate GPU kernels per instance %(([^)]*)%)")
  local types = {}
  local data = s:match("%*%*Data:%*%*\n\n(.-)\n\n")
  for t in (data or ""):gmatch("\n| `[^\n]-` | ([^|]-) | ") do types[t] = (types[t] or 0) + 1 end
  local n = 0
  for part in (comp or ""):gmatch("[^,]+") do
    local k, label = part:match("^%s*(%d+) (.-)%s*$")
    T.eq(types[label], tonumber(k), what .. ": the table types " .. tostring(k) .. " kernels " .. tostring(label))
    n = n + 1
  end
  T.check(comp ~= nil and n > 0, what .. ": the Insight counts the kernels")
end

-- 1. LayerNorm backward with autograd's accumulation ------------------------------------

local LN_GRAD = "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<float, float, false>"
  .. "(float const*, float const*, float const*, float const*, float const*, float*, int)"
local GAMMA_BETA = "void at::native::(anonymous namespace)::GammaBetaBackwardCUDAKernelTemplate<float, float, 32u, 32u, "
  .. "256u, false, false, false>(long, long, float const*, float const*, float const*, float const*, float*, float*)"
local ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> "
  .. ">(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)"
local NODE = "autograd::engine::evaluate_function: NativeLayerNormBackward0"

do
  local b = builder()
  local ln_args = { ["Input Dims"] = "[[8,1023,1024],[8,1023,1024],[],[8,1023,1],[8,1023,1],[1024],[1024],[]]",
    ["Input type"] = '["float","float","ScalarList","float","float","float","float","ScalarList"]',
    ["Input Strides"] = "[[1047552,1024,1],[1047552,1024,1],[],[1023,1,1],[1023,1,1],[1],[1],[]]",
    ["Concrete Inputs"] = '["","","[1024]","","","","","[True, True, True]"]' }
  local add_args = { ["Input Dims"] = "[[8,1023,1024],[8,1023,1024],[]]", ["Input type"] = '["float","float","Scalar"]',
    ["Input Strides"] = "[[1047552,1024,1],[1047552,1024,1],[]]", ["Concrete Inputs"] = '["","","1"]' }
  -- instance kernel durations (µs): 300, 400, 250, then 100, 200, 150
  local durs = { { 300, 400, 250 }, { 100, 200, 150 } }
  local gpu = 100000
  for i, d in ipairs(durs) do
    local t0 = (i - 1) * 1000
    b.op("cpu_op", NODE, t0, 200)
    b.op("cpu_op", "NativeLayerNormBackward0", t0 + 5, 100)
    b.op("cpu_op", "aten::native_layer_norm_backward", t0 + 10, 90, ln_args)
    b.launch(t0 + 20, LN_GRAD, gpu, d[1], 7)
    b.launch(t0 + 40, GAMMA_BETA, gpu + d[1] + 5, d[2], 7)
    b.op("cpu_op", "aten::add_", t0 + 120, 30, add_args)
    b.launch(t0 + 130, ADD, gpu + d[1] + d[2] + 10, d[3], 7)
    gpu = gpu + 2000
  end
  local path = b.write("ln_backward")

  -- the kernel facts: stream, launching op and its parent, from the trace
  local trace = tl.load(path)
  local rep = trace:report { platform = "H200", group_by_num_kernels = true }
  local cands = fusion.candidates(trace, rep.unified_perf_summary)
  local node
  for _, c in ipairs(cands) do
    if c.module_name == NODE and not c.source then node = c end
  end
  if T.check(node ~= nil and #node.kernels == 3, "ln: the node is a 3-kernel candidate") then
    local facts = fusion.kernel_facts(trace, { node })
    local f3 = facts[tostring(math.tointeger(node.kernels[3].gpu_op_uid))] or {}
    T.eq(f3.op, "aten::add_", "ln: the add's launching op")
    T.eq(f3.op_parent, NODE, "ln: launched directly under the autograd node")
    T.eq(f3.stream, 7, "ln: the add's stream")
    local f1 = facts[tostring(math.tointeger(node.kernels[1].gpu_op_uid))] or {}
    T.eq(f1.op_parent, "NativeLayerNormBackward0", "ln: the input-gradient kernel is the backward function's")
    local view = { base_name = node.base_name, module_name = node.module_name, kernels = node.kernels, facts = facts }
    T.eq(rules.pattern(view).name, "Unfused LayerNorm Backward + Gradient Accumulation", "ln: pattern with facts")
    T.eq(rules.reject(view), nil, "ln: one stream, kept")
    -- without the facts the add cannot be told apart: still a backward, never a residual add
    view.facts = nil
    T.eq(rules.pattern(view).name, "Unfused LayerNorm Backward", "ln: pattern without facts")
  end

  local s, doc = analyze(path, "ln_backward")
  local what = "ln findings"
  -- 950 + 450 µs of kernel time over 2 instances: 1.4 ms
  has(s, "### 🔴 P1: Unfused LayerNorm Backward + Gradient Accumulation (1.4 ms, 2 instances)", what)
  has(s, "launches 3 separate GPU kernels per instance (1 LayerNorm, 1 Reduce, 1 Add)", what)
  has(s, "`layer_norm_grad_input_kernel_vectorized` computes the input gradient and "
    .. "`GammaBetaBackwardCUDAKernelTemplate` reduces the weight and bias (γ/β) gradients", what)
  has(s, "the add, launched by `aten::add_` in the autograd node but outside its LayerNorm backward function, is "
    .. "autograd adding that input gradient", what)
  has(s, "**Action**: Accumulate the input gradient inside the LayerNorm backward's input-gradient kernel", what)
  has(s, "| LayerNorm | 300.0 | Yes |", what)
  has(s, "| Reduce | 400.0 | Yes |", what)
  has(s, "| Add | 250.0 | Yes |", what)
  has(s, "all on GPU stream 7,", what)
  -- first instance 300 + 400 + 250 = 950 µs; mean (950 + 450) / 2 = 700 µs
  has(s, "Durations are the first instance's (950.0 µs in all); the 2 instances average 700.0 µs each (1.4 ms in all).",
    what)
  has(s, "the kernel composition shows 3 kernels with no GEMM or convolution among them", what)
  for _, text in ipairs({ s, doc }) do
    lacks(text, "Residual", what)
    lacks(text, "add-and-normalize", what)
    lacks(text, "chain of elementwise kernels", what)
    lacks(text, "back to back", what)
  end
  count_agrees(s, what)
end

-- 2. Training BatchNorm: two passes and two short kernels --------------------------------

local FILL = "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, std::array<char*, 1ul> >"
  .. "(int, at::native::FillFunctor<int>, std::array<char*, 1ul>)"
local STATS = "void at::native::batch_norm_collect_statistics_channels_last_kernel<at::native::Var, c10::BFloat16, float, "
  .. "4>(c10::BFloat16 const*, float*, float*, float volatile*, int*, int, int, float)"
local UPDATE = "void at::native::(anonymous namespace)::unrolled_elementwise_kernel_for_multi_outputs<3, "
  .. "at::native::(anonymous namespace)::batch_norm_update_stats_and_invert(at::Tensor const&, at::Tensor const&, "
  .. "at::Tensor const&, at::Tensor const&, double, double, long)::{lambda()#1}::operator()() const::{lambda()#2}::"
  .. "operator()() const::{lambda(float, float, float, float)#1}, std::array<char*, 7ul>, TrivialOffsetCalculator<4, "
  .. "unsigned int>, TrivialOffsetCalculator<3, unsigned int> >(int)"
local TRANSFORM = "void at::native::batch_norm_transform_input_channels_last_kernel<c10::BFloat16, float, float, 4>"
  .. "(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, float const*, float const*, "
  .. "c10::BFloat16*, int, int, bool)"

do
  local b = builder()
  local function bn_args(n, c, h)
    return { ["Input Dims"] = string.format("[[%d,%d,%d,%d],[%d],[%d],[%d],[%d],[],[],[]]", n, c, h, h, c, c, c, c),
      ["Input type"] = '["c10::BFloat16","float","float","float","float","Scalar","Scalar","Scalar"]',
      ["Input Strides"] = string.format("[[%d,1,%d,%d],[1],[1],[1],[1],[],[],[]]", c * h * h, h * c, c),
      ["Concrete Inputs"] = '["","","","","","True","0.10000000000000001","1.0000000000000001e-05"]' }
  end
  -- instance 1 (64x64x112x112): 1 + 400 + 2 + 300 = 703 µs; instance 2 (64x256x56x56): 1 + 100 + 2 + 80 = 183 µs
  local shapes = { { 64, 64, 112, { 1, 400, 2, 300 } }, { 64, 256, 56, { 1, 100, 2, 80 } } }
  local gpu = 100000
  for i, sh in ipairs(shapes) do
    local t0 = (i - 1) * 1000
    b.op("cpu_op", "aten::native_batch_norm", t0, 200, bn_args(sh[1], sh[2], sh[3]))
    local at = gpu
    for j, name in ipairs({ FILL, STATS, UPDATE, TRANSFORM }) do
      b.launch(t0 + 10 + 30 * j, name, at, sh[4][j], 7)
      at = at + sh[4][j] + 5
    end
    gpu = gpu + 2000
  end
  local s, doc = analyze(b.write("batch_norm"), "batch_norm")
  local what = "bn findings"
  -- 703 + 183 = 886 µs over 2 instances
  has(s, "P1: Unfused BatchNorm (0.886 ms, 2 instances)", what)
  has(s, "launches 4 separate GPU kernels per instance (1 Fill, 3 BatchNorm)", what)
  has(s, "| Fill | 1.0 | Yes |", what)
  has(s, "| BatchNorm | 400.0 | Yes |", what)
  has(s, "| BatchNorm | 2.0 | Yes |", what)
  has(s, "| BatchNorm | 300.0 | Yes |", what)
  count_agrees(s, what)
  has(s, "`batch_norm_collect_statistics_channels_last_kernel` reads the whole input to compute its statistics, and "
    .. "`batch_norm_transform_input_channels_last_kernel` reads it again to normalize it", what)
  -- the Fill and the stats update: 1 + 2 µs of the first instance's 703 µs
  has(s, "the other 2 kernels (1 Fill, 1 BatchNorm) take 3.0 µs of the first instance's 703.0 µs", what)
  has(s, "which saves their launches but not the second pass over the data", what)
  has(s, "so it is an upper bound", what)
  -- mean (703 + 183) / 2 = 443 µs
  has(s, "Durations are the first instance's (703.0 µs in all); the 2 instances average 443.0 µs each (0.886 ms in all).",
    what)
  for _, text in ipairs({ s, doc }) do
    lacks(text, "one pass over memory", what)
    lacks(text, "Elementwise Chain", what)
    lacks(text, "chain of elementwise kernels", what)
  end
end

-- 3. Two streams in one python frame; cuBLASLt's nvjet GEMM ------------------------------

local MUL = "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, float, float, "
  .. "at::native::binary_internal::MulFunctor<float> >, std::array<char*, 2ul> >(int)"
local NVJET = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT"
local ADD_BF16 = "void at::native::vectorized_elementwise_kernel<8, at::native::CUDAFunctor_add<c10::BFloat16>, "
  .. "std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)"

T.eq(rules.kernel_label({ name = NVJET, type = "Unknown" }), "GEMM", "nvjet: a GEMM by its name")
T.check(rules.is_matrix({ name = NVJET, type = "Unknown" }), "nvjet: a matrix kernel for the fusion rules")
T.eq(rules.kernel_label({ name = "nvjet_sm90_qqtst_128x128_128x6_2x1_v_bz_coopA_algo2_TNT", type = "Unknown" }), "GEMM",
  "nvjet FP8 (_scaled_mm): a GEMM by its name")
T.check(not rules.is_matrix({ name = "some_kernel", type = "Unknown" }), "an unnamed kernel stays non-matrix")

do
  local b = builder()
  local mul_args = { ["Input Dims"] = "[[67108864],[]]", ["Input type"] = '["float","double"]',
    ["Input Strides"] = "[[1],[]]", ["Concrete Inputs"] = '["",""]' }
  local mm_args = { ["Input Dims"] = "[[4096,4096],[4096,4096]]", ["Input type"] = '["c10::BFloat16","c10::BFloat16"]',
    ["Input Strides"] = "[[4096,1],[4096,1]]", ["Concrete Inputs"] = '["",""]' }
  local add_args = { ["Input Dims"] = "[[4096,4096],[4096,4096],[]]",
    ["Input type"] = '["c10::BFloat16","c10::BFloat16","Scalar"]', ["Input Strides"] = "[[4096,1],[4096,1],[]]",
    ["Concrete Inputs"] = '["","","1"]' }
  b.op("python_function", "m.py(10): step", 0, 900)
  b.op("cpu_op", "aten::mul_", 10, 50, mul_args)
  b.launch(20, MUL, 100000, 130, 53)
  b.op("cpu_op", "aten::mm", 100, 50, mm_args)
  b.launch(110, NVJET, 103700, 170, 7)
  b.op("cpu_op", "aten::add", 200, 50, add_args)
  b.launch(210, ADD_BF16, 103880, 200, 7)
  b.op("cpu_op", "aten::mm", 300, 50, mm_args)
  b.launch(310, NVJET, 104090, 170, 7)
  b.op("cpu_op", "aten::add", 400, 50, add_args)
  b.launch(410, ADD_BF16, 104270, 200, 7)
  local path = b.write("streams")

  local trace = tl.load(path, { include_call_stack = true })
  local rep = trace:report { platform = "H200", group_by_num_kernels = true, include_call_stack = true }
  local cands = fusion.candidates(trace, rep.unified_perf_summary)
  local step
  for _, c in ipairs(cands) do
    if c.base_name == "m.py(10): step" and not c.source then step = c end
  end
  if T.check(step ~= nil and #step.kernels == 5, "streams: the frame is a 5-kernel candidate") then
    local view = { base_name = step.base_name, module_name = step.module_name, kernels = step.kernels,
      facts = fusion.kernel_facts(trace, { step }) }
    local streams = rules.streams(view)
    T.eq(#streams == 2 and streams[1] .. "," .. streams[2], "7,53", "streams: the kernels' streams")
    T.check((rules.reject(view) or ""):find("ran on GPU streams 7 and 53", 1, true) ~= nil, "streams: set aside")
  end

  local s, doc = analyze(path, "streams")
  local what = "streams findings"
  has(s, "No kernel fusion opportunities detected.", what)
  has(s, "1 candidate was set aside by the fusion rules: `m.py(10): step` (its kernels ran on GPU streams 7 and 53: "
    .. "work split across streams is not one sequence of kernels that one fused kernel can replace)", what)
  lacks(s, "### 🔴 P1", what)
  has(doc, "## Kernel Fusion Opportunities (Experimental)", "streams analysis.md")
  lacks(doc:match("## Kernel Fusion Opportunities.-\n## ") or "", "### ", "streams analysis.md: no fusion card")
  for _, text in ipairs({ s, doc }) do
    lacks(text, "back to back", what)
    lacks(text, "so the input is read once", what)
  end
end

-- 4. An nvjet GEMM without a matrix perf model, through the analyzer alone: the
-- estimate's class is memory_bound (the estimator types by classifier and perf
-- model), the card still names the GEMM and does not say "no matrix kernels".
do
  local json = require "tracelens.json"
  local cands = { { module_name = "nn.Module: Proj_0", base_name = "Proj", instance_count = 1, kernel_count = 2,
    kernels = { { name = NVJET, type = "Unknown", dur_us = 170, gpu_op_uid = 1 },
      { name = ADD_BF16, type = "Elementwise", dur_us = 200, gpu_op_uid = 2 } } } }
  local e = json.obj("operation", "Proj", "category", "kernel_fusion", "type", "kernel_fusion", "impact_score", 5.0,
    "impact_score_low", 4.29, "impact_score_high", 5.71, "estimation", "partial", "bound_type", "memory",
    "time_ms", 0.37, "instance_count", 1, "kernel_count", 2, "modeled_kernel_count", 1, "confidence", "low",
    "affected_gpu_kernels", { NVJET, ADD_BF16 }, "fusion_type", "memory_bound")
  local r = tl.parallel({ { script = root .. "/agents/kernel_fusion.lua", args = { { scope = "standalone",
    manifest = json.encode(json.obj("gpu_utilization", json.obj("total_time_ms", 1.0))), candidates = json.encode(cands),
    metrics = json.encode(json.obj("category", "kernel_fusion", "status", "OK", "impact_estimates", { e })),
    kernel_facts = json.encode({ ["1"] = { stream = 7 }, ["2"] = { stream = 7 } }) } } } })[1]
  local s = T.check(r.ok, "nvjet card: analyzer ran " .. tostring(r.error)) and r.value.findings or ""
  local what = "nvjet card"
  has(s, "P1: GEMM Epilogue (Add) (0.37 ms, 1 instance)", what)
  has(s, "(1 GEMM, 1 Add)", what)
  has(s, "| `nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT` | GEMM | 170.0 |", what)
  has(s, "- Fusion pattern: no kernel typed as a GEMM or convolution (the kernel classifier gives its GEMM kernel no "
    .. "type); the estimate treats it as memory-bound", what)
  lacks(s, "no matrix kernels", what)
  lacks(s, "Unknown", what)
end

T.rmrf(tmp)
T.finish()

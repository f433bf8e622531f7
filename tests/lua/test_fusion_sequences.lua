-- Fusion candidates keyed by module and kernel sequence (issue 11 item 7;
-- docs/compat.md "Kernel fusion: instances with different kernels"): the
-- reference describes every instance of a module by its first instance's
-- kernels and times that by the instance count, so timesformer's spatial
-- attention (~11 ms an instance, most of the trace) was estimated from the
-- temporal one (~0.5 ms) and dropped, and OWLv2's vision attention was
-- counted for its 60 text-attention instances too.
--   1. a hand-made trace: `Block` instances with two kernel sequences are two
--      candidates, each with its own instances and measured time; `Attn`
--      instances that differ only outside their score GEMM, softmax and
--      value GEMM are one attention candidate, with both instances' time;
--   2. the shared timesformer and OWLv2 H100 traces (skipped when absent):
--      the attention candidate is reported, its time equal to the kernel time
--      of its instances counted here from the trace's kernels, and the other
--      kernel sequence listed with its reason in the findings file.
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local json = require "tracelens.json"
local fusion = require "tracelens.fusion"

local dir = T.tmpdir()

-- 1. Hand-made trace ------------------------------------------------------------

local ev = T.x_event
local KERNEL = {
  mul = "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, "
    .. "at::native::binary_internal::MulFunctor<float> > >",
  add = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >",
  mm = "sm90_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize128x128x32",
  _softmax = "void (anonymous namespace)::softmax_warp_forward<float, float, float, 8, false, false>",
}
local ARGS = {
  add = { ["Input Dims"] = "[[256,256],[256,256],[]]", ["Input type"] = '["float","float","Scalar"]',
    ["Input Strides"] = "[[256,1],[256,1],[]]", ["Concrete Inputs"] = '["","","1"]' },
  mul = { ["Input Dims"] = "[[256,256],[256,256]]", ["Input type"] = '["float","float"]',
    ["Input Strides"] = "[[256,1],[256,1]]", ["Concrete Inputs"] = '["",""]' },
  mm = { ["Input Dims"] = "[[256,256],[256,256]]", ["Input type"] = '["float","float"]',
    ["Input Strides"] = "[[256,1],[256,1]]", ["Concrete Inputs"] = '["",""]' },
  _softmax = { ["Input Dims"] = "[[256,256],[],[]]", ["Input type"] = '["float","Scalar","Scalar"]',
    ["Input Strides"] = "[[256,1],[],[]]", ["Concrete Inputs"] = '["","-1","False"]' },
}
local events, corr, gpu_ts = {}, 0, 100000
-- one op launching one kernel of `dur` µs
local function op(kind, ts, dur)
  corr = corr + 1
  events[#events + 1] = ev("cpu_op", "aten::" .. kind, ts, 8, ARGS[kind])
  events[#events + 1] = ev("cuda_runtime", "cudaLaunchKernel", ts + 1, 5, { correlation = tostring(corr) })
  events[#events + 1] = T.flow_event("s", corr, 1, 1, ts + 1)
  events[#events + 1] = ev("kernel", KERNEL[kind], gpu_ts, dur, { correlation = tostring(corr), stream = "7" }, 0, 7)
  events[#events + 1] = T.flow_event("f", corr, 0, 7, gpu_ts)
  gpu_ts = gpu_ts + dur + 10
end
-- Block_0: mul, add (100 + 200 µs); Block_1, Block_2: mul, add, mul (300 +
-- 400 + 500 and 310 + 410 + 510 µs)
events[#events + 1] = ev("python_function", "nn.Module: Block_0", 0, 900)
op("mul", 20, 100)
op("add", 120, 200)
for i = 1, 2 do
  local t0 = i * 1000
  events[#events + 1] = ev("python_function", "nn.Module: Block_" .. i, t0, 900)
  op("mul", t0 + 20, 300 + 10 * (i - 1))
  op("add", t0 + 120, 400 + 10 * (i - 1))
  op("mul", t0 + 220, 500 + 10 * (i - 1))
end
-- Attn_0: mul, mm, softmax, mm; Attn_1: add, mm, softmax, mm (the same
-- attention kernels after a different first kernel)
for i = 0, 1 do
  local t0 = 5000 + i * 1000
  events[#events + 1] = ev("python_function", "nn.Module: Attn_" .. i, t0, 900)
  op(i == 0 and "mul" or "add", t0 + 20, 50)
  op("mm", t0 + 120, 1000 + 100 * i)
  op("_softmax", t0 + 220, 2000 + 100 * i)
  op("mm", t0 + 320, 3000 + 100 * i)
end
local path = dir .. "/sequences.json"
local f = assert(io.open(path, "w"))
f:write('{"traceEvents":[\n', table.concat(events, ",\n"), "\n]}\n")
f:close()

local trace = tl.load(path, { include_call_stack = true })
local rep = trace:report { platform = "MI300X", group_by_num_kernels = true, include_call_stack = true }
local cands = fusion.candidates(trace, rep.unified_perf_summary)
local blocks, attn = {}, {}
for _, c in ipairs(cands) do
  if c.base_name == "Block" and not c.source then blocks[c.kernel_count] = c end
  if c.base_name == "Attn" and not c.source then attn[#attn + 1] = c end
end
local two, three = blocks[2], blocks[3]
if T.check(two and three, "Block: one candidate per kernel sequence (2 and 3 kernels)") then
  T.eq(two.instance_count, 1, "Block, 2 kernels: one instance")
  T.eq(three.instance_count, 2, "Block, 3 kernels: two instances")
  T.close(two.total_kernel_time_us, 300, "Block, 2 kernels: its instance's time", 0, 1e-9)
  T.close(three.total_kernel_time_us, 1200 + 1230, "Block, 3 kernels: both instances' time", 0, 1e-9)
  T.eq(two.base_instance_count, 3, "Block, 2 kernels: Block has 3 instances in all")
  T.eq(three.base_instance_count, 3, "Block, 3 kernels: Block has 3 instances in all")
  T.eq(#three.kernels, 3, "Block, 3 kernels: its own kernels listed")
end
if T.eq(#attn, 1, "Attn: its two kernel sequences narrow to the same attention kernels, one candidate") then
  local a = attn[1]
  T.eq(a.kernel_count, 3, "Attn: score GEMM, softmax, value GEMM")
  T.eq(a.instance_count, 2, "Attn: both instances")
  T.close(a.total_kernel_time_us, 6000 + 6300, "Attn: both instances' attention kernel time", 0, 1e-9)
  T.eq(a.base_instance_count, nil, "Attn: every instance is in the candidate")
end

-- 2. Shared traces ------------------------------------------------------------------

local function strip(name) return (name:gsub("^nn%.Module: ", ""):gsub("_%d+$", "")) end

-- The attention kernels of each instance of module `base`, counted here from
-- the trace's kernels: from the first softmax kernel, the nearest GEMM kernel
-- before and after it (by name). Returns {key = kernel names joined, n =
-- instances, us = Σ dur} per distinct slice, the largest time first, and the
-- trace's total kernel time (µs).
local function attention_slices(tpath, base)
  local t = tl.load(tpath, { include_call_stack = true })
  local by, order, all_us = {}, {}, 0
  for e in t:events() do
    if e.cat == "kernel" then all_us = all_us + e.dur end
    if e.cat == "python_function" and e.name:sub(1, 11) == "nn.Module: " and strip(e.name) == base then
      local ks = {}
      for _, k in ipairs(e:kernels()) do
        if k.cat == "kernel" then ks[#ks + 1] = k end
      end
      local s
      for i, k in ipairs(ks) do
        if not s and k.name:lower():find("softmax", 1, true) then s = i end
      end
      local a, b
      for i = (s or 1) - 1, 1, -1 do
        if not a and ks[i].name:lower():find("gemm", 1, true) then a = i end
      end
      for i = (s or #ks) + 1, #ks do
        if not b and ks[i].name:lower():find("gemm", 1, true) then b = i end
      end
      if a and b then
        local names, us = {}, 0
        for i = a, b do
          names[#names + 1] = ks[i].name
          us = us + ks[i].dur
        end
        local key = table.concat(names, "\n")
        if not by[key] then
          by[key] = { key = key, n = 0, us = 0 }
          order[#order + 1] = by[key]
        end
        by[key].n = by[key].n + 1
        by[key].us = by[key].us + us
      end
    end
  end
  table.sort(order, function(x, y) return x.us > y.us end)
  return order, all_us
end

local function check_trace(file, base, want_other)
  local tpath = shared and shared .. "/traces/h100/" .. file
  if not (tpath and T.file_exists(tpath)) then
    print(file .. " not found: skipped")
    return
  end
  local out = dir .. "/" .. base
  local ok, code, so, se = T.run(string.format("%s run orchestrator.lua %s -o %s --no-rules -q", T.q(bin), T.q(tpath),
    T.q(out)))
  if not T.check(ok, base .. ": orchestrator exit " .. tostring(code) .. "\n" .. so .. se) then return end
  local m = json.decode(tl.fs.read_file(out .. "/category_data/kernel_fusion_metrics.json") or "{}")
  local manifest = json.decode(tl.fs.read_file(out .. "/category_data/category_manifest.json") or "{}")
  local baseline = manifest.gpu_utilization and manifest.gpu_utilization.total_time_ms or 0
  local slices, all_us = attention_slices(tpath, base)
  local main = slices[1]
  if not T.check(main ~= nil, base .. ": attention kernels found in the trace") then return end
  local e
  for _, x in ipairs(m.impact_estimates or {}) do
    if x.operation == base then e = x end
  end
  if not T.check(e ~= nil, base .. ": the attention candidate is reported") then return end
  T.eq(table.concat(e.affected_gpu_kernels, "\n"), main.key, base .. ": its kernels are the slowest sequence's")
  T.eq(e.instance_count, main.n, base .. ": the instances that run that sequence")
  T.close(e.time_ms, main.us / 1000, base .. ": time = its instances' kernel time, counted from the trace", 0, 0.0006)
  T.check(e.time_ms <= all_us / 1000, base .. ": within the trace's kernel time")
  T.check(e.impact_score_high <= e.time_ms / baseline * 100 + 0.01, string.format("%s: saving %.2f%% within the "
    .. "candidate's share %.2f%%", base, e.impact_score_high, e.time_ms / baseline * 100))
  local union = 0
  for _, x in ipairs(m.impact_estimates) do union = union + x.time_ms end
  T.check(union <= all_us / 1000 + 1e-3, base .. ": the reported candidates' time within the kernel time")
  local findings = tl.fs.read_file(out .. "/system_findings/kernel_fusion_findings.md") or ""
  T.check(findings:find("P1: Unfused Attention", 1, true) ~= nil, base .. ": the P1 card is the attention")
  local other = slices[2]
  if T.check(other ~= nil, base .. ": a second attention kernel sequence in the trace") then
    T.check(findings:find(string.format("over %d of its %d instances (the other %d launch a different kernel "
      .. "sequence)", main.n, main.n + other.n, other.n), 1, true) ~= nil,
      base .. ": the card says the other instances launch other kernels")
    T.check(findings:find(string.format("`%s` (%d kernels, %d of its %d instances, ", base, want_other, other.n,
      main.n + other.n), 1, true) ~= nil, base .. ": the other kernel sequence is listed, with its reason")
  end
  T.check(not findings:find("table: 0x", 1, true), base .. ": no interpreter values")
end

-- timesformer: spatial attention (12 instances, cunn_SoftMaxForward) ~83% of
-- kernel time; the temporal one (12 instances, 5 kernels) is under 2%
check_trace("facebook_timesformer-base-finetuned-k400__1016002.json.gz", "TimesformerSelfAttention", 5)
-- OWLv2: vision attention (120 instances); the 60 text-attention instances
-- are another sequence (5 kernels)
check_trace("google_owlv2-large-patch14-ensemble__1016001.json.gz", "Owlv2Attention", 5)

T.rmrf(dir)
T.finish()

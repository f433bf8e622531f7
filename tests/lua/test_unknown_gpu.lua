-- Issue 11 items 3 and 4: a GPU without an arch file is analysed without the
-- roofline (exit 0, the report passes `tracelens validate`, one sentence says
-- efficiency needs --platform/--arch, no interpreter values in the text);
-- shipped arch files are detected from the names traces spell; and the
-- "within target" verdict needs at least half of the GPU kernel time
-- analysed (the coverage line of the Executive Summary says how much was).
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local tmp = T.tmpdir()
local read = tl.fs.read_file
local NOTE = "Efficiency against the GPU's peak needs --platform or --arch"
local VERDICT = "All categories are within target"

local function count(s, needle)
  local n, at = 0, 1
  while true do
    local i = s:find(needle, at, true)
    if not i then return n end
    n, at = n + 1, i + #needle
  end
end

-- Runs the analysis of trace into tmp/name (no --platform unless given).
local function analyse(trace, name, extra)
  local out = tmp .. "/" .. name
  local ok, code, stdout, stderr = T.run(string.format("cd %s && %s run orchestrator.lua %s -o %s -q %s",
    T.q(tmp), T.q(bin), T.q(trace), T.q(out), extra or ""))
  return code, stdout or "", stderr or "", read(out .. "/analysis.md") or "", out
end

local function validates(out, what)
  local ok, code, stdout, stderr = T.run(string.format("%s validate %s", T.q(bin), T.q(out)))
  T.check(code == 0 and (stdout or ""):find("RESULT: PASS", 1, true),
    what .. ": tracelens validate passes: " .. tostring(stdout) .. tostring(stderr))
end

-- No Lua value and no efficiency figure in a report without a roofline.
local function clean_text(md, what)
  local text = md:gsub("data:image/png;base64,[%w+/=]+", "")
  T.check(not text:find("table: 0x", 1, true), what .. ": no Lua table address")
  T.check(not text:find("%f[%w][Nn][Aa][Nn]%f[%W]"), what .. ": no nan")
  T.check(not text:find("%f[%w]nil%f[%W]"), what .. ": no nil")
  T.check(not text:find("%f[%w]inf%f[%W]"), what .. ": no inf")
  T.check(not text:find("% of peak", 1, true) and not text:find("TB/s peak", 1, true)
    and not text:find("TFLOPS peak", 1, true), what .. ": no share of a peak")
  T.check(not text:find("Peak HBM BW", 1, true) and not text:find("Peak MAF", 1, true),
    what .. ": no peak figures in the Appendix")
end

-- An unknown GPU: exit 0, validated, the sentence once (naming the device) in
-- analysis.md and on stderr, nothing of a roofline.
local function unknown_gpu(trace, name, device)
  local code, stdout, stderr, md, out = analyse(trace, name)
  T.eq(code, 0, name .. ": exit 0 (stderr: " .. stderr .. ")")
  T.check(not stderr:find("no GPU platform", 1, true), name .. ": no 'no GPU platform' error")
  T.eq(count(md, NOTE), 1, name .. ": the efficiency sentence once in analysis.md")
  T.eq(count(stderr, NOTE), 1, name .. ": the efficiency sentence once on stderr (even with -q)")
  if device then
    local line = md:match("[^\n]*" .. NOTE:gsub("%p", "%%%0") .. "[^\n]*") or ""
    T.check(line:find(device, 1, true), name .. ": the sentence names the device " .. device .. ": " .. line)
    T.check(md:match("^# [^\n]*" .. device:gsub("%p", "%%%0")), name .. ": the title names the device")
  end
  T.check(md:find("**Analysis coverage**", 1, true), name .. ": the coverage line")
  clean_text(md, name)
  validates(out, name)
  local perf = read(out .. "/perf_report_csvs/unified_perf_summary.csv") or ""
  local header = perf:match("^[^\n]*") or ""
  T.check(header ~= "" and not header:find("Roofline", 1, true), name .. ": the perf report has no roofline columns")
  return md
end

-- The demo trace (an H100) renamed to devices without an arch file.
local demo = read(root .. "/examples/demo_trace.json")
local H100 = "NVIDIA H100 80GB HBM3"
T.check(demo and demo:find(H100, 1, true), "the demo trace names its GPU")
local function variant(name, text)
  local path = tmp .. "/" .. name .. ".json"
  tl.fs.write_file(path, text)
  return path
end
local p100 = variant("p100", (demo:gsub(H100, "NVIDIA Tesla P100-PCIE-16GB")))
local md = unknown_gpu(p100, "p100", "NVIDIA Tesla P100-PCIE-16GB")
-- the analyzers judge by time share: findings exist and say why there is no efficiency
T.check(md:find("no roofline", 1, true), "p100: the findings say there is no roofline")
T.check(not md:find("No FLOPs or byte count is modelled", 1, true),
  "p100: modelled ops are not called unmodelled")
-- the arch files its memory and vendor match are named, as a condition
T.check(md:find("judges operations by their share of GPU time. Its 79.2 GiB of memory and 32-wide warps match the "
  .. "arch files A100 and H100: if one of them is the GPU, --platform NAME gives the roofline.\n", 1, true),
  "p100: the 80 GB arch files named (85018279936 bytes)")
do
  local mi = variant("mystery_amd", (demo:gsub(H100, "Mystery Accelerator"):gsub('"totalGlobalMem": *85018279936',
    '"totalGlobalMem": 206158430208'):gsub('"warpSize": *32', '"warpSize": 64')))
  local md_mi = unknown_gpu(mi, "mystery_amd", "Mystery Accelerator")
  T.check(md_mi:find("Its 192.0 GiB of memory and 64-wide wavefronts match the arch file MI300X: if that is the GPU, "
    .. "--platform MI300X gives the roofline.", 1, true), "192 GiB, 64-wide: MI300X named")
  local small = variant("small_gpu", (demo:gsub(H100, "Small GPU"):gsub('"totalGlobalMem": *85018279936',
    '"totalGlobalMem": 17179869184')))
  T.check(not unknown_gpu(small, "small_gpu", "Small GPU"):find("GiB of memory", 1, true), "16 GiB: no arch file named")
end
unknown_gpu(variant("empty_name", (demo:gsub(H100, ""))), "empty_name")
unknown_gpu(variant("no_props", (demo:gsub('"deviceProperties"', '"deviceProperties_gone"'))), "no_props")
-- --platform none: the same analysis, said the same way
do
  local code, _, stderr, md2 = analyse(root .. "/examples/demo_trace.json", "platform_none", "--platform none")
  T.eq(code, 0, "--platform none: exit 0")
  T.eq(count(md2, NOTE), 1, "--platform none: the sentence once")
  T.eq(count(stderr, NOTE), 1, "--platform none: the sentence on stderr")
  T.check(md2:find(H100, 1, true), "--platform none: the sentence names the device")
  clean_text(md2, "--platform none")
end

-- Shipped arch files are detected from the names traces spell.
for _, c in ipairs({ { "Tesla V100-SXM2-32GB", "V100-SXM2" }, { "NVIDIA L40S", "L40S" } }) do
  local name = c[2]:gsub("%W", "_")
  local code, stdout, stderr, md3 = analyse(variant("dev_" .. name, (demo:gsub(H100, c[1]))), "dev_" .. name)
  T.eq(code, 0, c[1] .. ": exit 0")
  T.check(stdout:find("platform " .. c[2] .. ", detected", 1, true), c[1] .. ": detected as " .. c[2] .. ": " .. stdout)
  T.eq(count(md3, NOTE), 0, c[1] .. ": no efficiency sentence with an arch file")
  T.check(not stderr:find(NOTE, 1, true), c[1] .. ": no efficiency sentence on stderr")
end

-- Shared traces (skipped without ../shared/data).
local data = shared and tl.fs.kind(shared) == "directory" and shared or nil
local function shared_trace(rel)
  local path = data and (data .. "/" .. rel)
  return path and tl.fs.kind(path) == "file" and path or nil
end
local mi250 = shared_trace("hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz")
if mi250 then
  local md4 = unknown_gpu(mi250, "hta_mi250", "AMD Radeon Graphics")
  -- its categories are all analysed, but its GPU computes for 1.24% of the
  -- trace: no within-target verdict on the kernels (docs/analysis.md)
  T.check(md4:find("covered 100.0% of GPU kernel time", 1, true), "hta mi250: full coverage")
  T.check(md4:find("Its 64.0 GiB of memory and 64-wide wavefronts match the arch files MI210 and MI250X: if one of them "
    .. "is the GPU, --platform NAME gives the roofline.", 1, true), "hta mi250: the 64 GB AMD arch files named")
  T.check(not md4:find(VERDICT, 1, true) and md4:find("but that is no verdict on the kernels: the GPU computes for "
    .. "only 1.24%", 1, true), "hta mi250: no within-target verdict on a GPU that computes 1.24% of the time")
end
local vllm = shared_trace("inference/vllm_decode_full/graph_execution.json.gz")
if vllm then unknown_gpu(vllm, "vllm_no_name") end

-- Item 4: no clean bill of health for work nobody analysed.
local function coverage_of(md5)
  local pct = md5:match("%*%*Analysis coverage%*%*: the per%-category analyzers covered ([%d.]+)%%")
  if md5:find("**Analysis coverage**: the per-category analyzers covered none", 1, true) then pct = "0" end
  return tonumber(pct)
end
local gpu_only = shared_trace("traces/mi210/gpu_only_trace/gpu_only_trace.json.gz")
if gpu_only then
  local code, stdout, stderr, md5, out = analyse(gpu_only, "gpu_only")
  T.eq(code, 0, "gpu-only trace: exit 0 (" .. stderr .. ")")
  T.check(stdout:find("platform MI210, detected", 1, true), "gpu-only trace: MI210 detected: " .. stdout)
  T.check(not md5:find(VERDICT, 1, true), "gpu-only trace: no within-target verdict")
  -- no CPU op at all (launch calls at the top level): every kernel is
  -- analysed by its name, as GPU work without a launching op (the trace's 562
  -- GPU events, 5.3 ms: `tracelens check`)
  local pct = coverage_of(md5)
  T.check(pct and pct > 0 and pct < 100, "gpu-only trace: its kernels analysed by name, in part: " .. tostring(pct))
  T.check(md5:find("**Unlinked GPU work**: 5.34 ms of GPU time (100.0% of all GPU event time, 562 events) has no "
    .. "launching CPU operation in the trace", 1, true), "gpu-only trace: all of its GPU work said to have no op")
  T.check(md5:find("not analysed", 1, true) or md5:find("Not analysed", 1, true), "gpu-only trace: says what was not")
  validates(out, "gpu-only trace")
end
local sglang = shared_trace("inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz")
if sglang then
  local code, _, stderr, md6, out = analyse(sglang, "sglang")
  T.eq(code, 0, "sglang decode: exit 0 (" .. stderr .. ")")
  T.check(not md6:find(VERDICT, 1, true), "sglang decode: no within-target verdict")
  local pct = coverage_of(md6)
  T.check(pct and pct < 50, "sglang decode: coverage below half: " .. tostring(pct))
  T.check(md6:find("Not analysed: other", 1, true), "sglang decode: the other category named as not analysed")
  validates(out, "sglang decode")
end
-- a trace whose categories are analysed keeps the verdict out only when it has findings
do
  local code, _, _, md7 = analyse(root .. "/examples/demo_trace.json", "demo")
  T.eq(code, 0, "demo: exit 0")
  local pct = coverage_of(md7)
  T.check(pct and pct >= 50 and pct <= 100, "demo: most GPU time analysed: " .. tostring(pct))
end
if not data then print("SKIP (partly): no shared data at " .. tostring(shared)) end

T.finish()

-- The pseudo-op pass (--enable_pseudo_ops, perf-report spec §3.10) on the
-- hand-made trace tests/data/pseudo_ops_trace.json (45 events, UIDs 0-44):
--   0  vllm::moe_forward (M=8, E=4)   1 TopK (Concrete Inputs[1] = "2")
--   2,3,4 its launches (corr 11, 12, 13) of kernels 9 (up, _swiglu, ts 1100),
--     8 (down, ts 1200: before the up kernel in UID order) and 10 (finalize
--     matmul_scatter)
--   14 vllm::moe_forward (M=16, Sequence number 77, no TopK) with launches 15,
--     16 of kernels 19 (up) and 20 (down)
--   23 python "aiter/mla.py(123): mla_decode_fwd" over 24
--     aiter::mla_decode_stage1_asm_fwd (launch 25 -> kernel 30) and 26
--     aiter::mla_reduce_v1 (launch 27 -> kernel 31)
--   34 aiter::fused_moe_ (Sequence number 9) over python frames 35
--     "...: flydsl_moe_stage1" (launch 36 -> kernel 41) and 37
--     "...: flydsl_moe_stage2" (launch 38 -> kernel 42)
-- and, written by the test, a trace where one extension fails (its warning
-- on stderr is expected). Every expected value below is worked out by hand.
local root, _, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
bin = bin or T.tracelens_bin()
local path = root .. "/tests/data/pseudo_ops_trace.json"

local function uids(list)
  local out = {}
  for i, e in ipairs(list) do out[i] = e.uid end
  return table.concat(out, " ")
end

-- ------------------------------------------ without python functions
local plain = tl.load(path)
T.eq(#plain, 45, "events of the plain trace")
T.eq(plain:info().pseudo_ops, nil, "no pseudo-op summary without the option")
local t = tl.load(path, {enable_pseudo_ops = true})
-- only the MoE ops (the frame-based extensions need python functions in the tree)
T.eq(#t, 50, "5 pseudo ops appended")
local info = t:info().pseudo_ops
T.eq(info.injected, 5, "info: injected")
T.eq(info.renamed, 0, "info: renamed")
T.eq(#info.extensions, 3, "extensions detected: triton MoE, flydsl, MLA decode")
T.eq(info.extensions[1].name, "MoE_Unfused_Triton", "first extension")
T.eq(info.extensions[1].injected, 5, "triton MoE pseudo ops")
T.eq(info.extensions[2].injected, 0, "flydsl: its frames are not in the tree")
T.eq(info.extensions[3].injected, 0, "MLA decode: its frame is not in the tree")

local function check_moe(tr, tag)
  -- UIDs in detection order: moe 0 (up, down, finalize), then moe 14 (up, down)
  local want = {
    [45] = {"pseudo_op::moe_triton_unfused_up", 0, "2", "9", 2, true, 0, 11},
    [46] = {"pseudo_op::moe_triton_unfused_down", 0, "3", "8", 2, false, 0, 12},
    [47] = {"pseudo_op::moe_triton_unfused_finalize_matmul_scatter", 0, "4", "10", nil, nil, 0, 13},
    [48] = {"pseudo_op::moe_triton_unfused_up", 14, "15", "19", 4, true, 77, 21},
    [49] = {"pseudo_op::moe_triton_unfused_down", 14, "16", "20", 4, false, 77, 22},
  }
  for uid = 45, 49 do
    local w, e = want[uid], tr:node(uid)
    local p = tag .. " UID " .. uid
    T.eq(e.name, w[1], p .. " name")
    T.eq(e.cat, "cpu_op", p .. " cat")
    T.eq(e.ts, nil, p .. " has no ts")
    T.eq(e.dur, nil, p .. " has no dur")
    T.eq(e:parent().uid, w[2], p .. " parent: the op above the launch")
    T.eq(uids(e:children()), w[3], p .. " children: the launch")
    T.eq(uids(e:kernels()), w[4], p .. " gpu_events: the kernel")
    local a = e.args
    T.eq(a["MoE topk"], w[5], p .. " MoE topk (TopK's Concrete Inputs[1], else 4)")
    T.eq(a["MoE GEMM gated"], w[6], p .. " MoE GEMM gated (_swiglu)")
    T.eq(a["Pseudo op"], true, p .. " Pseudo op")
    T.eq(a["Sequence number"], w[7], p .. " Sequence number (the op's, else its UID)")
    T.eq(a["External id"], w[8], p .. " External id (the kernel's correlation)")
    T.eq(e.pid, 1, p .. " pid")
    local donor = tr:node(w[2]).args
    T.eq(#a["Input Dims"], #donor["Input Dims"], p .. " Input Dims copied")
    T.eq(a["Input Dims"][1][1], donor["Input Dims"][1][1], p .. " Input Dims[0][0]")
    T.eq(a["Input Strides"] == nil, donor["Input Strides"] == nil, p .. " Input Strides copied or absent")
  end
  -- the original op: launches moved under the pseudo ops (appended in order)
  T.eq(uids(tr:node(0):children()), "1 45 46 47", tag .. " children of moe_forward 0")
  T.eq(uids(tr:node(14):children()), "48 49", tag .. " children of moe_forward 14")
  -- [KEEP] the launch keeps its parent: the kernel's launcher is unchanged
  T.eq(tr:node(2):parent().uid, 0, tag .. " launch 2 still has parent 0")
  T.eq(tr:node(9):launcher().uid, 0, tag .. " launcher of kernel 9")
  T.eq(uids(tr:node(0):kernels()), "9 8 10", tag .. " moe_forward's gpu_events unchanged")
end
check_moe(t, "plain")

-- ---------------------------------------------- with python functions
local tp = tl.load(path, {enable_pseudo_ops = true, include_call_stack = true})
T.eq(#tp, 53, "with python functions: 8 pseudo ops")
T.eq(tp:info().pseudo_ops.injected, 8, "info: injected (python)")
check_moe(tp, "python")
-- flydsl: above the stage frames, in their place under aiter::fused_moe_ 34
for k, w in ipairs({{50, "pseudo_op::moe_flydsl_stage1", 35, 4010.0, "41", "flydsl_moe_stage1"},
                    {51, "pseudo_op::moe_flydsl_stage2", 37, 4200.0, "42", "flydsl_moe_stage2"}}) do
  local e = tp:node(w[1])
  local p = "flydsl UID " .. w[1]
  T.eq(e.name, w[2], p .. " name")
  T.eq(e.ts, w[4], p .. " ts of the stage frame")
  T.eq(e.dur, 100.0, p .. " dur of the stage frame")
  T.eq(e:parent().uid, 34, p .. " parent")
  T.eq(uids(e:children()), tostring(w[3]), p .. " children: the stage frame")
  T.eq(tp:node(w[3]):parent().uid, w[1], p .. " the stage frame's parent")
  T.eq(uids(e:kernels()), w[5], p .. " gpu_events")
  T.eq(e.args["Sequence number"], 9, p .. " Sequence number of aiter::fused_moe_")
  T.eq(e.args["MoE flydsl stage"], w[6], p .. " MoE flydsl stage")
  T.eq(e.args["Input Dims"][2][2], 256, p .. " Input Dims of aiter::fused_moe_")
  -- the frame's launches now have the pseudo op as their nearest cpu_op
  T.eq(tp:node(k == 1 and 41 or 42):launcher().uid, w[1], p .. " launcher of its kernel")
end
T.eq(uids(tp:node(34):children()), "50 51", "aiter::fused_moe_ children: the pseudo ops in place")
-- MLA decode: wraps all children of the python frame 23
local m = tp:node(52)
T.eq(m.name, "pseudo_mla_decode_fwd", "MLA name")
T.eq(m.ts, 3000.0, "MLA ts of the frame")
T.eq(m.dur, 500.0, "MLA dur of the frame")
T.eq(m:parent().uid, 23, "MLA parent")
T.eq(uids(m:children()), "24 26", "MLA children: all of the frame's")
T.eq(uids(tp:node(23):children()), "52", "the frame's only child")
T.eq(tp:node(26):parent().uid, 52, "a wrapped child's parent")
T.eq(uids(m:kernels()), "30 31", "MLA gpu_events: the frame's")
T.eq(m.args["Input Dims"][1][3], 576, "MLA shapes of aiter::mla_decode_stage1_asm_fwd")
T.eq(m.args["Sequence number"], 23, "MLA Sequence number: the frame's UID (the donor has none)")

-- ------------------------------------------------------------ reports
local function rows_named(tb, name)
  local out = {}
  for _, row in tb:rows() do
    if row.name == name then out[#out + 1] = row end
  end
  return out
end

-- the plain trace's own report has no pseudo op
local r0 = plain:report()
T.eq(#rows_named(r0.unified_perf_summary, "pseudo_op::moe_triton_unfused_up"), 0, "no pseudo ops without the option")
-- a report with the option on a trace loaded without it: a private copy
local r = plain:report{enable_pseudo_ops = true, platform = "none"}
T.eq(#plain, 45, "the shared trace is unchanged")
local u = r.unified_perf_summary
local ups = rows_named(u, "pseudo_op::moe_triton_unfused_up")
T.eq(#ups, 2, "two up rows (M=8 topk 2, M=16 topk 4)")
-- M=8 K=N=64 E=4 topk=2 gated, FP4 weights (0.5 B), bf16 in/out:
-- flops 2*8*64*64*2*2 = 262144; E_active = 4*(1-(2/4)^8) = 3.984375;
-- bytes 8*64*2 + 3.984375*2*64*64*0.5 + 8*64*2*2 = 1024 + 16320 + 2048 = 19392
local up8 = ups[1].ex_UID == 45 and ups[1] or ups[2]
T.eq(up8.ex_UID, 45, "up row of moe 0")
T.close(up8.GFLOPS, 262144 / 1e9, "up GFLOPS", 1e-12, 0)
T.close(up8["Data Moved (MB)"], 19392 / 1048576, "up Data Moved (MB)", 1e-12, 0)
T.eq(up8["op category"], "MoE_unfused", "up category")
T.eq(up8["Compute Spec"], "matrix_fp4", "up Compute Spec")
T.eq(up8.total_duration_us, 0.0, "up total_duration_us")
T.eq(up8.duration_us_median, nil, "up has no CPU duration")
T.eq(up8["Kernel Time (µs)_sum"], 30.0, "up kernel time")
T.check(up8.perf_params:find("'topk': 2", 1, true) and up8.perf_params:find("'gated': True", 1, true),
  "up perf_params: " .. tostring(up8.perf_params))
-- M=16 topk=4 (default: no TopK op): flops 2*16*64*64*4 = 524288 (down);
-- E_active = 4; bytes 16*64*4*2 + 4*64*64*0.5 + 16*64*2 = 8192 + 8192 + 2048 = 18432
local downs = rows_named(u, "pseudo_op::moe_triton_unfused_down")
local down16 = downs[1].ex_UID == 49 and downs[1] or downs[2]
T.eq(down16.ex_UID, 49, "down row of moe 14")
T.close(down16.GFLOPS, 524288 / 1e9, "down GFLOPS", 1e-12, 0)
T.close(down16["Data Moved (MB)"], 18432 / 1048576, "down Data Moved (MB)", 1e-12, 0)
T.check(down16.perf_params:find("'topk': 4", 1, true) and down16.perf_params:find("'gated': False", 1, true),
  "down perf_params: " .. tostring(down16.perf_params))
local fin = rows_named(u, "pseudo_op::moe_triton_unfused_finalize_matmul_scatter")
T.eq(#fin, 1, "finalize row")
T.eq(fin[1] and fin[1]["op category"], "other", "finalize category (no perf model)")
T.eq(fin[1] and fin[1].has_perf_model, false, "finalize has no perf model")
T.check(r.MoE_unfused_fwd ~= nil and #r.MoE_unfused_fwd == 4, "MoE_unfused_fwd sheet: 4 rows")
-- launchers: the kernels stay with vllm::moe_forward: 30+20+5 + 30+20 us
local moe = rows_named(r.ops_summary, "vllm::moe_forward")
T.eq(moe[1] and moe[1].total_direct_kernel_time_sum, 105.0, "ops_summary: moe_forward's direct kernel time")
T.eq(#rows_named(r.ops_summary, "pseudo_op::moe_triton_unfused_up"), 0, "pseudo ops are not launchers")
-- the same report from a trace loaded with the option
local r2 = t:report{platform = "none"}
T.eq(#r2.unified_perf_summary, #u, "loaded with the option: same unified rows")
T.eq(#rows_named(r2.unified_perf_summary, "pseudo_op::moe_triton_unfused_down"), 2, "loaded with the option: down rows")
local ok, err = pcall(function() return t:report{enable_pseudo_ops = false} end)
T.check(not ok and tostring(err):find("pseudo ops", 1, true), "enable_pseudo_ops=false on a trace loaded with them: " .. tostring(err))

-- ---------------------------------------------------------- the CLI
local out = T.tmpdir()
local okc, code, _, cerr = T.run(T.q(bin) .. " report -q --no-xlsx --platform none --enable_pseudo_ops " .. T.q(path) .. " -o " .. T.q(out))
T.check(okc, "tracelens report --enable_pseudo_ops: " .. tostring(code) .. " " .. cerr)
local h, rows = T.read_csv(out .. "/perf_report_csvs/MoE_unfused_fwd.csv")
T.eq(#rows, 4, "CLI: MoE_unfused_fwd rows")
T.eq(h[1], "name", "CLI: MoE_unfused_fwd header")
T.rmrf(out)
out = T.tmpdir()
okc, code, _, cerr = T.run(T.q(bin) .. " report -q --no-xlsx --platform none --enable-pseudo-ops --include-call-stack "
  .. T.q(path) .. " -o " .. T.q(out))
T.check(okc, "tracelens report --enable-pseudo-ops --include-call-stack: " .. tostring(code) .. " " .. cerr)
local _, urows = T.read_csv(out .. "/perf_report_csvs/unified_perf_summary.csv")
local names = {}
for _, row in ipairs(urows) do names[row[1]] = true end
T.check(names["pseudo_op::moe_flydsl_stage1"] and names["pseudo_mla_decode_fwd"],
  "CLI with call stacks: the flydsl and MLA pseudo ops are unified rows")
T.rmrf(out)
out = T.tmpdir()
okc = T.run(T.q(bin) .. " report -q --no-xlsx --platform none " .. T.q(path) .. " -o " .. T.q(out))
T.check(okc and not T.file_exists(out .. "/perf_report_csvs/MoE_unfused_fwd.csv"), "CLI without the flag: no MoE_unfused_fwd sheet")
T.rmrf(out)
-- a failing extension: two matmul_ogs kernels of one graph launch (UID 1)
-- under vllm::moe_forward 0. The up op (UID 10) takes the launch from 0's
-- children; the down op then cannot (the reference's list.remove raises), so
-- the extension stops with what it made, and MLA_Decode still runs (UID 11).
local fail_json = [==[{"traceEvents":[
{"ph":"X","cat":"cpu_op","name":"vllm::moe_forward","pid":1,"tid":1,"ts":100,"dur":900,"args":{"Input Dims":[[8,64],[8,4],[],[]]}},
{"ph":"X","cat":"cuda_runtime","name":"hipGraphLaunch","pid":1,"tid":1,"ts":200,"dur":10,"args":{"correlation":5}},
{"ph":"X","cat":"kernel","name":"_matmul_ogs_a_swiglu","pid":0,"tid":7,"ts":1100,"dur":30,"args":{"correlation":5,"stream":7}},
{"ph":"X","cat":"kernel","name":"_matmul_ogs_a","pid":0,"tid":7,"ts":1200,"dur":20,"args":{"correlation":5,"stream":7}},
{"ph":"X","cat":"python_function","name":"aiter/mla.py(123): mla_decode_fwd","pid":1,"tid":1,"ts":3000,"dur":500,"args":{}},
{"ph":"X","cat":"cpu_op","name":"aiter::mla_decode_stage1_asm_fwd","pid":1,"tid":1,"ts":3010,"dur":100,"args":{"Input Dims":[[4,16,576]]}},
{"ph":"X","cat":"cuda_runtime","name":"hipModuleLaunchKernel","pid":1,"tid":1,"ts":3020,"dur":10,"args":{"correlation":31}},
{"ph":"s","cat":"ac2g","name":"ac2g","id":31,"pid":1,"tid":1,"ts":3020},
{"ph":"X","cat":"kernel","name":"mla_k","pid":0,"tid":7,"ts":3500,"dur":40,"args":{"correlation":31,"stream":7}},
{"ph":"f","bp":"e","cat":"ac2g","name":"ac2g","id":31,"pid":0,"tid":7,"ts":3500}
]}]==]
local fdir = T.tmpdir()
local fpath = fdir .. "/fail.json"
local ff = assert(io.open(fpath, "w"))
ff:write(fail_json)
ff:close()
okc, code, _, cerr = T.run(T.q(bin) .. " report -q --no-xlsx --platform none --enable_pseudo_ops --include-call-stack "
  .. T.q(fpath) .. " -o " .. T.q(fdir .. "/out"))
T.check(okc, "a failing extension does not fail the report: " .. tostring(code) .. " " .. cerr)
T.check(cerr:find("warning: pseudo ops: MoE_Unfused_Triton: failed:", 1, true), "the failure is on stderr: " .. cerr)
local _, frows = T.read_csv(fdir .. "/out/perf_report_csvs/unified_perf_summary.csv")
local fnames = {}
for _, row in ipairs(frows) do fnames[row[1]] = true end
T.check(fnames["pseudo_op::moe_triton_unfused_up"] and fnames["pseudo_mla_decode_fwd"]
  and not fnames["pseudo_op::moe_triton_unfused_down"], "the failed extension's first op and the next extension's op")
local tf = tl.load(fpath, {enable_pseudo_ops = true, include_call_stack = true})
local fi = tf:info().pseudo_ops
T.eq(#tf, 12, "failing case: 2 pseudo ops")
T.eq(fi.extensions[1].failed, true, "MoE_Unfused_Triton failed")
T.eq(fi.extensions[1].injected, 1, "MoE_Unfused_Triton injected one op first")
T.eq(fi.extensions[2].failed, false, "MLA_Decode did not")
T.eq(tf:node(10).name, "pseudo_op::moe_triton_unfused_up", "UID 10")
T.eq(tf:node(11).name, "pseudo_mla_decode_fwd", "UID 11")
T.rmrf(fdir)

-- the other frame-based extensions and the sglang_profiler names, on a
-- trace written here (UIDs in the comments; kernels and flows follow)
do
  local ev, corr = {}, 0
  local function X(cat, name, ts, dur, args)
    ev[#ev + 1] = string.format('{"ph":"X","cat":"%s","name":"%s","pid":1,"tid":1,"ts":%d,"dur":%d,"args":{%s}}',
      cat, name, ts, dur, args or "")
  end
  local kernels = {}
  local function launch(ts, kname)
    corr = corr + 1
    X("cuda_runtime", "hipModuleLaunchKernel", ts, 2, '"correlation":' .. corr)
    kernels[#kernels + 1] = {corr, ts, kname}
  end
  X("cpu_op", "aiter::v4_attention_with_output", 100, 1000, '"Input Dims":[[32,64,512],[100,1,512]]') -- 0
  launch(110, "qk_norm_rope_H64_D512_RD64_flydsl")                                                     -- 1
  launch(120, "hca_compress_forward_D512_R128_NW4_SL256_S128_flydsl")                                  -- 2
  X("python_function", "srt/layers/paged_decode.py(42): sparse_attn_v4_paged_decode", 200, 500)      -- 3
  X("cpu_op", "aiter::sparse_decode_split", 210, 100)                                                  -- 4
  launch(220, "sparse_decode_kernel")                                                                  -- 5
  X("python_function", "paged_decode.py(43): sparse_attn_v4_paged_decode_x", 750, 100)               -- 6 (no \b)
  launch(760, "other_kernel")                                                                          -- 7
  X("python_function", "aiter/mla.py(99): mla_fp8_prefill_attn", 2000, 500)                          -- 8
  X("cpu_op", "aiter::mla_prefill_ps_asm_fwd", 2010, 100, '"Input Dims":[[100,16,192]],"Sequence number":5') -- 9
  launch(2020, "mla_prefill_kernel")                                                                   -- 10
  X("python_function", "x.py(1): mla_fp8_prefill_attn_v2", 3000, 100)                                -- 11 (no \b)
  X("cpu_op", "aiter::mla_prefill_ps_asm_fwd", 3010, 50)                                               -- 12
  launch(3020, "mla_prefill_kernel")                                                                   -- 13
  X("cpu_op", "sglang_profiler::rmsnorm_fwd_109", 5000, 10)                                            -- 14
  X("cpu_op", "sglang_profiler::rmsnorm_fwd_109", 5100, 10)                                            -- 15
  X("python_function", "sglang_profiler::other_7", 5200, 10)                                           -- 16 (first event: not a cpu_op)
  X("cpu_op", "sglang_profiler::_5", 5300, 10)                                                         -- 17 (nothing before _5)
  X("cpu_op", "sglang_profiler::a_1_2", 5400, 10)                                                      -- 18
  for _, k in ipairs(kernels) do                                                                       -- 19..
    ev[#ev + 1] = string.format('{"ph":"s","cat":"ac2g","name":"ac2g","id":%d,"pid":1,"tid":1,"ts":%d}', k[1], k[2])
    ev[#ev + 1] = string.format('{"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":7,"ts":%d,"dur":5,"args":{"correlation":%d,"stream":7}}',
      k[3], 10000 + k[2], k[1])
    ev[#ev + 1] = string.format('{"ph":"f","bp":"e","cat":"ac2g","name":"ac2g","id":%d,"pid":0,"tid":7,"ts":%d}', k[1], 10000 + k[2])
  end
  local d = T.tmpdir()
  local f = assert(io.open(d .. "/frames.json", "w"))
  f:write('{"traceEvents":[' .. table.concat(ev, ",\n") .. "]}")
  f:close()
  local n = #ev -- 19 + 3 per kernel
  local tf = tl.load(d .. "/frames.json", {enable_pseudo_ops = true, include_call_stack = true})
  local fi = tf:info().pseudo_ops
  T.eq(#tf, n + 2, "frames: 2 pseudo ops")
  T.eq(fi.renamed, 3, "frames: renamed events (14, 15, 18)")
  T.eq(tf:node(14).name, "sglang_profiler::rmsnorm_fwd", "sglang name 14")
  T.eq(tf:node(15).name, "sglang_profiler::rmsnorm_fwd", "sglang name 15")
  T.eq(tf:node(16).name, "sglang_profiler::other_7", "a name whose first event is no cpu_op is kept")
  T.eq(tf:node(17).name, "sglang_profiler::_5", "sglang_profiler::_5 is kept")
  T.eq(tf:node(18).name, "sglang_profiler::a_1", "only the last _digits go")
  -- detection order: MLA_Prefill, then V4_Paged_Decode
  local pre, v4 = tf:node(n), tf:node(n + 1)
  T.eq(pre.name, "pseudo_mla_prefill_fwd", "prefill pseudo op (UID n)")
  T.eq(pre:parent().uid, 8, "prefill parent: the frame")
  T.eq(uids(pre:children()), "9", "prefill children")
  T.eq(pre.ts, 2000.0, "prefill ts")
  T.eq(pre.args["Sequence number"], 5, "prefill Sequence number of the donor")
  T.eq(pre.args["Input Dims"][1][3], 192, "prefill shapes of aiter::mla_prefill_ps_asm_fwd")
  T.eq(tf:node(12):parent().uid, 11, "mla_fp8_prefill_attn_v2 is not wrapped")
  T.eq(v4.name, "pseudo_v4_paged_decode_hca", "V4 mode hca (an hca_ kernel under the attention op)")
  T.eq(v4:parent().uid, 3, "V4 parent: the frame")
  T.eq(uids(v4:children()), "4", "V4 children")
  T.eq(v4.args.v4_mode, "hca", "v4_mode")
  T.eq(v4.args.v4_call_index, 0, "v4_call_index")
  T.eq(v4.args.v4_H_Q, 64, "v4_H_Q from qk_norm_rope_H64_D512_RD64")
  T.eq(v4.args.v4_d_h, 512, "v4_d_h")
  T.eq(v4.args.v4_tp, tonumber(os.getenv("TL_TP") or "1") or 1, "v4_tp (TL_TP, default 1)")
  T.eq(v4.args.v4_model_name, os.getenv("TL_MODEL"), "v4_model_name (TL_MODEL)")
  T.eq(v4.args["Input Dims"][1][2], 64, "V4 shapes of aiter::v4_attention_with_output")
  T.eq(v4.args["Sequence number"], 3, "V4 Sequence number: the frame's UID")
  T.eq(tf:node(7):parent().uid, 6, "sparse_attn_v4_paged_decode_x is not wrapped")
  T.rmrf(d)
end

-- the aiter fused MoE and GPTQ/AWQ extensions, on a trace written here
do
  local ev, corr, kernels = {}, 0, {}
  local function X(cat, name, ts, dur, args)
    ev[#ev + 1] = string.format('{"ph":"X","cat":"%s","name":"%s","pid":1,"tid":1,"ts":%d,"dur":%d,"args":{%s}}',
      cat, name, ts, dur, args or "")
  end
  local function launch(ts, kname)
    corr = corr + 1
    X("cuda_runtime", "hipModuleLaunchKernel", ts, 2, '"correlation":' .. corr)
    kernels[#kernels + 1] = {corr, ts, kname}
  end
  X("cpu_op", "vllm::moe_forward", 100, 1000)                                                          -- 0
  X("cpu_op", "vllm::rocm_aiter_fused_moe", 110, 500, '"Input Dims":[[8,64],[4,256,64],[4,64,128],[8,2]]') -- 1
  launch(120, "aiter::MoeSortingKernel_fmoe")                                                          -- 2
  launch(130, "aiter::fmoe_quant_kernel")                                                              -- 3
  launch(140, "aiter::fmoe_bf16_g1u1_32x256")                                                          -- 4
  X("cpu_op", "vllm::rocm_aiter_fused_moe", 700, 200)                                                  -- 5 (has a cpu_op below)
  X("cpu_op", "aten::empty", 710, 10)                                                                  -- 6
  launch(720, "aiter::fmoe_bf16_g1u1_32x256")                                                          -- 7
  X("cpu_op", "vllm::outplace_fused_experts", 2000, 500,
    '"Input Dims":[[8,64],[4,256,32],[4,64,64],[8,6],[8,6]],"Sequence number":3')                       -- 8
  launch(2010, "fused_moe_kernel_gptq_awq_a")                                                          -- 9
  launch(2020, "fused_moe_kernel_gptq_awq_b")                                                          -- 10
  for _, k in ipairs(kernels) do
    ev[#ev + 1] = string.format('{"ph":"s","cat":"ac2g","name":"ac2g","id":%d,"pid":1,"tid":1,"ts":%d}', k[1], k[2])
    ev[#ev + 1] = string.format('{"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":7,"ts":%d,"dur":5,"args":{"correlation":%d,"stream":7}}',
      k[3], 10000 + k[2], k[1])
    ev[#ev + 1] = string.format('{"ph":"f","bp":"e","cat":"ac2g","name":"ac2g","id":%d,"pid":0,"tid":7,"ts":%d}', k[1], 10000 + k[2])
  end
  local d = T.tmpdir()
  local f = assert(io.open(d .. "/moe.json", "w"))
  f:write('{"traceEvents":[' .. table.concat(ev, ",\n") .. "]}")
  f:close()
  local n = #ev
  local tm = tl.load(d .. "/moe.json", {enable_pseudo_ops = true})
  local ext = {}
  for _, e in ipairs(tm:info().pseudo_ops.extensions) do ext[#ext + 1] = e.name .. "=" .. e.injected end
  T.eq(table.concat(ext, " "), "MoE_Fused=1 MoE_GPTQ_AWQ=2", "aiter fused (not triton) and GPTQ/AWQ")
  T.eq(#tm, n + 3, "moe: 3 pseudo ops")
  local a = tm:node(n)
  T.eq(a.name, "pseudo_op::moe_aiter_fused_1stage", "aiter pseudo op")
  T.eq(a:parent().uid, 1, "aiter parent")
  T.eq(uids(a:children()), "4", "aiter: the fmoe kernel's launch (sorting and quant kernels excluded)")
  T.eq(a.args["Sequence number"], 1, "aiter Sequence number: the op's UID")
  T.eq(a.args["Input Dims"][2][2], 256, "aiter shapes")
  T.eq(a.args["MoE topk"], nil, "aiter: no MoE topk arg (its model reads D[3][1])")
  T.eq(tm:node(7):parent().uid, 5, "an aiter op with a cpu_op below is left alone")
  local up, down = tm:node(n + 1), tm:node(n + 2)
  T.eq(up.name, "pseudo_op::moe_gptq_awq_up", "gptq up")
  T.eq(down.name, "pseudo_op::moe_gptq_awq_down", "gptq down")
  T.eq(uids(up:children()) .. "/" .. uids(down:children()), "9/10", "gptq launches by kernel ts")
  T.eq(up.args["MoE topk"], 6, "gptq topk = Input Dims[4][1]")
  T.eq(up.args["MoE GEMM gated"], true, "gptq up gated")
  T.eq(down.args["MoE GEMM gated"], false, "gptq down not gated")
  T.eq(down.args["Sequence number"], 3, "gptq Sequence number")
  T.rmrf(d)
end

local _, _, help = T.run(T.q(bin) .. " report --help")
T.check(help:find("--enable_pseudo_ops", 1, true), "report --help names --enable_pseudo_ops")

T.finish()

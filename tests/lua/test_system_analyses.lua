-- System-tier analyses without shared data (analysis-layer spec §4, §3.5,
-- §3.6, §9, §10): the §4 classification examples, the three worked examples
-- of §10 with the reference's numbers, and small hand-made traces whose
-- expected values are worked out in the comments (no memcpy/comm, integer
-- microsecond durations, memcpy directions incl. [FIX, Q35], communication,
-- a trace without candidates).
local root = arg[1]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local json = require "tracelens.json"
local classify = require "tracelens.classify_kernels"
local mk = require "tracelens.multi_kernel"
local fusion = require "tracelens.fusion"

local function kind(v) return math.type(v) or type(v) end

-- §4: the reference's results -----------------------------------------------
local examples = {
  { "unified_attention_2d_kernel", "Attention (AMD unified)", "Others", 20 },
  { "void at::native::vectorized_layer_norm_kernel<float>", "LayerNorm", "Others", 20 },
  { "Memcpy DtoD (Device -> Device)", "MemCpy", "MemCpy", 30 },
  { "triton_poi_fused_add_0", "Unknown", "Others", 0 },
  { "ncclDevKernel_AllReduce", "Unknown", "Others", 0 },
  { "quant_kernel", "Unknown", "Others", 0 },
  { "norm kernel", "Unknown", "Others", 0 },
  { "fmoe_g1u1_silu_bf16", "MoE GEMM+SiLU (aiter)", "Others", 25 },
  { "_fwd_kernel_rotary", "Rotary Embedding", "Elementwise", 18 },
  { "void at::native::elementwise_kernel<128, 2, gelu>", "Activation (GELU)", "Others", 15 },
  { "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", "RMSNorm (fused triton)", "Others", 20 },
  { "Cijk_Alik_Bljk_HHS", "GEMM", "GEMM", 12 },
  { "wvSplitK_hf_", "GEMM", "GEMM", 12 },
  { "vectorized_gather_kernel", "Elementwise", "Elementwise", 20 },
  { "reduce_segments", "Attention Reduce", "Others", 20 },
  { "swiglu_gemm", "MoE GateUp+SwiGLU GEMM", "Others", 25 },
  { "void at::native::vectorized_elementwise_kernel<8, at::native::GeluCUDAKernelImpl...>", "Elementwise",
    "Elementwise", 5 },
}
for _, e in ipairs(examples) do
  local t, p, c = classify.classify(e[1])
  T.eq(t, e[2], e[1] .. " type")
  T.eq(p, e[3], e[1] .. " perf category")
  T.eq(c, e[4], e[1] .. " confidence")
  T.eq(kind(c), "integer", e[1] .. " confidence is an int")
end
T.eq(#classify.rules(), 129, "129 rules")
-- the collapsed duplicates never win a tie: "Normalization" is never returned
T.eq((classify.classify("some_rmsnorm2d_kernel")), "RMSNorm", "fine-grained type wins the tie")
T.eq((classify.classify("PER_TOKEN_GROUP_QUANT_kernel")), "Quantize (per-group)", "case-insensitive; R040 beats R092")

-- §10 worked examples (MI300X: 5.3 TB/s, vector 163, matrix 708; E2E 10 ms) ---
local MI300X = { platform = "MI300X", peak_hbm_bw_tbs = 5.3,
  max_achievable_tflops = json.obj("matrix_bf16", 708, "vector_bf16", 163) }
local function ctx(extra)
  local c = { baseline_ms = 10, scope = "standalone" }
  for k, v in pairs(MI300X) do c[k] = v end
  for k, v in pairs(extra or {}) do c[k] = v end
  return c
end
local function row(kernel, dm, gflops, spec, cat)
  return { name = "op_" .. kernel, ["op category"] = cat or "elementwise", ["Input Dims"] = "((4, 1024),)",
    kernel_details_summary = "[{'name': '" .. kernel .. "', 'stream': 0, 'count': 1}]",
    ["Data Moved (MB)"] = dm, GFLOPS = gflops, ["Compute Spec"] = spec }
end

-- MyMLP: 3 elementwise kernels, 24 instances
local mlp = json.obj("module_name", "nn.Module: MyMLP_0", "base_name", "MyMLP", "parent_chain", json.arr(),
  "instance_count", 24, "kernel_count", 3, "eligible_kernel_count", 3,
  "kernels", json.arr {
    json.obj("name", "ew_a", "type", "Elementwise", "dur_us", 10.0, "data_in_mb", 4.0, "data_out_mb", 4.0),
    json.obj("name", "ew_b", "type", "Elementwise", "dur_us", 14.0),
    json.obj("name", "ew_c", "type", "Elementwise", "dur_us", 9.0, "data_in_mb", 4.0, "data_out_mb", 4.0) },
  "has_fused_kernel", false, "total_kernel_time_us", 792.0, "input_dims", json.null)
local mlp_rows = { row("ew_a", 8.0, 0.002, "vector_bf16"), row("ew_b", 12.0, 0.004, "vector_bf16"),
  row("ew_c", 8.0, 0.002, "vector_bf16") }
local m = fusion.analyze(json.arr { mlp }, ctx { unified = mlp_rows })
T.eq(m.status, "OK", "MyMLP status")
T.eq(m.candidate_count, 1, "MyMLP candidate_count")
local e = m.impact_estimates[1]
if T.check(e ~= nil, "MyMLP estimate") then
  T.eq(e.impact_score, 6.61, "MyMLP impact")
  T.eq(e.impact_score_low, 5.67, "MyMLP low")
  T.eq(e.impact_score_high, 7.56, "MyMLP high")
  T.eq(e.estimation, "full", "MyMLP estimation")
  T.eq(e.bound_type, "memory", "MyMLP bound")
  T.eq(e.time_ms, 0.792, "MyMLP time_ms")
  T.eq(e.confidence, "high", "MyMLP confidence (name mlp + elementwise_chain)")
  T.eq(e.fusion_type, "memory_bound", "MyMLP fusion_type")
  T.eq(e.modeled_kernel_count, 3, "MyMLP modeled")
  T.eq(table.concat(json.keys(e), ","), "operation,category,type,impact_score,impact_score_low,impact_score_high,"
    .. "estimation,bound_type,time_ms,instance_count,kernel_count,modeled_kernel_count,confidence,"
    .. "affected_gpu_kernels,fusion_type", "estimate key order (the reference's)")
  local side = json.decode(fusion.gpu_events_file(m))
  T.eq(#side.estimates, #m.impact_estimates, "one GPU event list per reported estimate")
  T.eq(side.estimates[1].operation, e.operation, "listed in estimate order")
  T.eq(#side.estimates[1].gpu_event_uids, 0, "MyMLP's kernels carry no gpu_op_uid: no GPU events to list")
  T.eq(m.high_confidence_kernel_map.ew_b, "MyMLP", "high-confidence map")
  T.eq(m.total_impact_score, 6.61, "total impact")
  T.eq(table.concat(json.keys(m), ","), "category,status,total_time_ms,candidate_count,estimated_count,"
    .. "total_impact_score,platform,peak_hbm_bw_tbs,impact_estimates,high_confidence_kernel_map", "metrics key order")
end
-- the intermediate numbers of the worked example: mem 1.50943, vec 0.04908, fused 1.51679 us
local mem_us = 8e6 / 5.3e12 * 1e6
local vec_us = 0.008 * 1e9 / (163 * 1e12) * 1e6
T.close(mem_us, 1.50943, "mem_us", 1e-5, 1e-5)
T.close(vec_us, 0.04908, "vec_us", 1e-4, 1e-5)
T.close(mem_us + 0.15 * vec_us, 1.51679, "fused_us", 1e-5, 1e-5)

-- MyLinearAct: GEMM 900 us + 30 + 40 us epilogue, 10 instances
local lin = json.obj("module_name", "nn.Module: MyLinearAct_0", "base_name", "MyLinearAct", "parent_chain", json.arr(),
  "instance_count", 10, "kernel_count", 3, "eligible_kernel_count", 3,
  "kernels", json.arr {
    json.obj("name", "gemm_k", "type", "GEMM", "dur_us", 900.0),
    json.obj("name", "act_k", "type", "Elementwise", "dur_us", 30.0),
    json.obj("name", "bias_k", "type", "Elementwise", "dur_us", 40.0) },
  "has_fused_kernel", false, "total_kernel_time_us", 9700.0, "input_dims", json.null)
local lin_rows = { row("gemm_k", 50.0, 100.0, "matrix_bf16", "GEMM"), row("act_k", 16.0, 0.004, "vector_bf16"),
  row("bias_k", 16.0, 0.004, "vector_bf16") }
m = fusion.analyze(json.arr { lin }, ctx { unified = lin_rows })
e = m.impact_estimates[1]
if T.check(e ~= nil, "MyLinearAct estimate") then
  T.eq(e.impact_score, 6.12, "MyLinearAct impact")
  T.eq(e.impact_score_low, 5.25, "MyLinearAct low")
  T.eq(e.impact_score_high, 7.0, "MyLinearAct high")
  T.eq(e.time_ms, 9.7, "MyLinearAct time_ms")
  T.eq(e.bound_type, "compute", "MyLinearAct bound")
  T.eq(e.fusion_type, "matrix_compute", "MyLinearAct fusion_type")
  T.eq(e.confidence, "low", "MyLinearAct confidence")
  T.eq(next(m.high_confidence_kernel_map), nil, "no high-confidence kernels")
end

-- comparative Attn: t1 1200 us, t2 700 us, 3 instances
local attn = json.obj("module_name", "nn.Module: Attn_0", "base_name", "Attn", "parent_chain", json.arr(),
  "instance_count", 3, "kernel_count_trace1", 3, "kernel_count_trace2", 1, "delta", 2,
  "kernels_trace1", json.arr {
    json.obj("name", "Cijk_qk", "type", "GEMM", "dur_us", 500.0, "lca_id", 18.0, "gpu_op_uid", 1),
    json.obj("name", "softmax_warp_forward", "type", "Unknown", "dur_us", 200.0, "lca_id", 18.0, "gpu_op_uid", 2),
    json.obj("name", "Cijk_pv", "type", "GEMM", "dur_us", 500.0, "lca_id", 18.0, "gpu_op_uid", 3) },
  "kernels_trace2", json.arr { json.obj("name", "flash_fwd", "type", "Attention (flash)", "dur_us", 700.0) },
  "has_fused_kernel", false, "total_kernel_time_us_trace1", 1200.0, "total_kernel_time_us_trace2", 700.0,
  "input_dims", json.null)
m = fusion.analyze(json.arr { attn }, ctx { scope = "comparative", unified = {} })
e = m.impact_estimates[1]
if T.check(e ~= nil, "Attn estimate") then
  T.eq(e.impact_score, 4.38, "Attn impact")
  T.eq(e.impact_score_low, 3.75, "Attn low")
  T.eq(e.impact_score_high, 5.0, "Attn high")
  T.eq(e.estimation, "measured", "Attn estimation")
  T.eq(e.confidence, "medium", "Attn confidence (composition only; 'attn' is no name hint)")
  T.eq(e.delta_kernel_count, 2, "Attn delta")
  T.eq(e.time_ms, 1.2, "Attn time_ms")
  T.eq(e.bound_type, "compute", "Attn bound")
end

-- §10 filters and fallbacks
m = fusion.analyze(json.arr(), ctx { unified = {} })
T.eq(json.encode(m), '{\n  "category": "kernel_fusion",\n  "status": "NO_DATA",\n  "candidate_count": 0,\n'
  .. '  "impact_estimates": []\n}', "no candidates -> NO_DATA")
m = fusion.analyze(nil, ctx { unified = {} })
T.eq(m.status, "ERROR", "missing candidates -> ERROR")
m = fusion.analyze(json.arr { mlp }, ctx { unified = mlp_rows, baseline_ms = 40 })
T.eq(m.candidate_count, 0, "2% floor: 792 us < 40 ms * 20")
m = fusion.analyze(json.arr { mlp }, ctx { unified = mlp_rows, baseline_ms = 0 })
T.eq(m.estimated_count, 0, "no baseline: no estimates")
T.eq(kind(m.total_impact_score), "integer", "empty total_impact_score is the int 0")

-- §3.6 helpers
T.eq(fusion.strip_module_index("nn.Module: BertLayer_0"), "BertLayer", "strip_module_index")
T.eq(fusion.strip_module_index("aten::linear"), "aten::linear", "strip_module_index keeps op names")
T.eq(fusion.strip_module_index("a_1_22"), "a_1", "one trailing index only")
local din, dout = fusion.compute_data_in_out("GEMM", "{'M': 2, 'N': 3, 'K': 4}", 26.0)
T.eq(din, 26.0 * (8 + 12) / 26, "GEMM data in") -- M*K + K*N = 20 of 26
T.eq(dout, 26.0 * 6 / 26, "GEMM data out")
din, dout = fusion.compute_data_in_out("elementwise", "{'shape_in1': (4,)}", 3.0)
T.eq(din, 2.0, "elementwise in = 2/3")
T.eq(dout, 1.0, "elementwise out = 1/3")
din, dout = fusion.compute_data_in_out("reduce", "{}", 3.0)
T.eq(din, 3.0, "reduce in")
T.eq(dout, 0.0, "reduce out")
din, dout = fusion.compute_data_in_out("other", "not a literal (", 3.0)
T.eq(din, 1.5, "parse error -> half")
din = fusion.compute_data_in_out("other", "", nil)
T.eq(din, nil, "no data moved -> None")

-- Hand-made traces --------------------------------------------------------------

local dir = T.tmpdir()
local function write_trace(name, events)
  local path = dir .. "/" .. name
  local f = assert(io.open(path, "w"))
  f:write('{"traceEvents":[\n', table.concat(events, ",\n"), "\n]}\n")
  f:close()
  return path
end
local function ev(cat, name, pid, tid, ts, dur, args)
  local a = {}
  for k, v in pairs(args or {}) do a[#a + 1] = string.format("%q:%s", k, v) end
  table.sort(a)
  return string.format('{"ph":"X","cat":"%s","name":%q,"pid":%d,"tid":%d,"ts":%s,"dur":%s,"args":{%s}}',
    cat, name, pid, tid, ts, dur, table.concat(a, ","))
end

-- a runtime launch linked to a GPU event on (0, tid) by ac2g s/f flows
local function launch(corr, ts, tid)
  return ev("cuda_runtime", "cudaLaunchKernel", 1, 1, ts, 5, { correlation = tostring(corr) }) .. ",\n"
    .. string.format('{"ph":"s","cat":"ac2g","name":"ac2g","id":%d,"pid":1,"tid":1,"ts":%s},\n', corr, ts)
    .. string.format('{"ph":"f","cat":"ac2g","name":"ac2g","id":%d,"pid":0,"tid":%d,"ts":%s,"bp":"e"}', corr, tid, ts)
end

-- A: integer-us trace, no memcpy, no communication. Two launches under a
-- module: kernels [50, 58] and [60, 66].
local A = write_trace("a.json", {
  ev("python_function", "nn.Module: Block_0", 1, 1, 0, 100),
  ev("cpu_op", "aten::mul", 1, 1, 10, 20, { ["Input Dims"] = "[[4,4],[4,4]]", ["Input type"] = '["float","float"]' }),
  launch(1, 12, 7),
  ev("cpu_op", "aten::add", 1, 1, 40, 20, { ["Input Dims"] = "[[4,4],[4,4],[]]",
    ["Input type"] = '["float","float","Scalar"]' }),
  launch(2, 42, 7),
  ev("kernel", "void at::native::vectorized_elementwise_kernel<4, at::native::MulFunctor<float> >", 0, 7, 50, 8,
    { correlation = "1", stream = "7" }),
  ev("kernel", "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >", 0, 7, 60, 6,
    { correlation = "2", stream = "7" }),
})
local tA = tl.load(A, { include_call_stack = true })
local d = mk.data(tA)
T.eq(json.encode(d.memcpy_summary), '{\n  "total_count": 0,\n  "total_time_us": 0,\n  "by_direction": {}\n}',
  "no memcpy: int zeros")
T.eq(json.encode(d.nccl_summary), '{\n  "total_count": 0,\n  "total_time_us": 0\n}', "no comm: int zeros")
local ov = d.overlap_analysis
T.eq(ov.total_time_us, 16, "total = 66 - 50")
T.eq(kind(ov.total_time_us), "integer", "integer-us trace: integer total")
T.eq(ov.computation_time_us, 14, "computation = 8 + 6")
T.eq(kind(ov.computation_time_us), "integer", "integer computation")
T.eq(kind(ov.total_comm_time_us), "integer", "empty comm union: int 0")
T.eq(kind(ov.exposed_memcpy_time_us), "integer", "empty memcpy union: int 0")
T.eq(ov.comm_overlap_ratio, json.null, "no comm: ratio null")
T.eq(ov.memcpy_overlap_ratio, json.null, "no memcpy: ratio null")
T.eq(kind(ov.comm_percent_of_total), "float", "0 / total * 100 is a float")
T.eq(table.concat(json.keys(ov), ","), "total_time_us,computation_time_us,total_comm_time_us,exposed_comm_time_us,"
  .. "total_memcpy_time_us,exposed_memcpy_time_us,comm_overlap_ratio,memcpy_overlap_ratio,comm_percent_of_total,"
  .. "memcpy_percent_of_total", "overlap key order")

local met = mk.analyze(d, { { type = "computation_time", ["time ms"] = 0.014 },
  { type = "exposed_comm_time", ["time ms"] = 0.0 }, { type = "exposed_memcpy_time", ["time ms"] = 0.0 },
  { type = "total_time", ["time ms"] = 0.016 } })
T.eq(met.status, "SUCCESS", "metrics status")
T.eq(met.total_time_ms, 0.016, "metrics total")
T.eq(met.cross_validation.status, "PASS", "cross validation passes")
T.eq(met.cross_validation.checks[2].mk_ms, 0, "both zero: literal 0")
T.eq(kind(met.cross_validation.checks[2].mk_ms), "integer", "both zero: int")
T.eq(met.memcpy_assessment.flagged, false, "memcpy not flagged")
T.eq(met.nccl_blocking_assessment.details, "No communication events detected", "nccl details")
met = mk.analyze(d, nil)
T.eq(met.cross_validation, json.null, "no timeline: cross_validation null")
T.eq(met.total_time_ms, 0.016, "no timeline: total from the overlap data")
T.eq(mk.analyze(nil).status, "ERROR", "missing data file")

local cands = fusion.candidates(tA, nil)
T.eq(#cands, 2, "A: module + sibling candidates")
local c1, c2 = cands[1], cands[2]
T.eq(c1.module_name, "nn.Module: Block_0", "module candidate")
T.eq(c1.base_name, "Block", "base name")
T.eq(c1.total_kernel_time_us, 14, "total = 8 + 6")
T.eq(kind(c1.total_kernel_time_us), "integer", "integer durations: integer total")
T.eq(kind(c1.kernels[1].dur_us), "integer", "integer dur_us")
T.eq(c1.kernels[1].gpu_op_uid, 9, "gpu_op_uid is the event's UID (after 3 + 3 events of two launches)")
T.eq(c1.kernel_type_summary.Elementwise, 2, "type summary")
T.eq(c1.input_dims, json.null, "python events have no input dims")
T.eq(#c1.parent_chain, 0, "a root module")
T.eq(c2.source, "sibling_sequence", "sibling candidate")
T.eq(c2.kernels[1].op, "aten::mul", "sibling op")
T.eq(c2.kernels[2].op, "aten::add", "sibling op 2")
T.eq(table.concat(json.keys(c2.kernels[1]), ","), "op,kernel_type,kernel_name,dur_us,gpu_op_uid", "sibling key order")
T.eq(table.concat(json.keys(c1), ","), "module_name,base_name,parent_chain,instance_count,kernel_count,"
  .. "eligible_kernel_count,kernels,kernel_type_signature,kernel_type_summary,has_fused_kernel,total_kernel_time_us,"
  .. "input_dims", "module candidate key order")
-- with the unified table the two (same kernel set) are deduplicated: nn.Module wins
local rep = tA:report { platform = "MI300X" }
cands = fusion.candidates(tA, rep.unified_perf_summary)
T.eq(#cands, 1, "dedup by kernel set")
T.eq(cands[1] and cands[1].module_name, "nn.Module: Block_0", "the nn.Module candidate is kept")

-- B: memcpy directions ([FIX, Q35] legacy underscore names), communication,
-- float durations. Compute [100, 110]; nccl [105, 125] (5 us hidden);
-- HtoD copy [130, 133.5]; legacy D2H copy kernel [200, 202.25] (bytes 0);
-- second nccl [300, 301].
local B = write_trace("b.json", {
  ev("cpu_op", "aten::mm", 1, 1, 90.0, 10.5, {}),
  launch(1, 91, 7),
  ev("kernel", "Cijk_Alik_Bljk_HHS", 0, 7, 100.0, 10.0, { correlation = "1", stream = "7" }),
  ev("kernel", "ncclDevKernel_AllReduce_Sum_f32", 0, 13, 105.0, 20.0, { correlation = "9", stream = "13" }),
  ev("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 0, 7, 130.0, 3.5, { correlation = "10", bytes = "4096" }),
  ev("kernel", "MEMORY_COPY_DEVICE_TO_HOST", 0, 7, 200.0, 2.25, { correlation = "11", bytes = "0" }),
  ev("kernel", "ncclDevKernel_Broadcast", 0, 13, 300.0, 1.0, { correlation = "12", stream = "0" }),
})
local tB = tl.load(B)
d = mk.data(tB)
local by = d.memcpy_summary.by_direction
T.eq(table.concat(json.keys(by), ","), "D2H,H2D", "directions in order D2H, H2D (legacy name -> D2H, Q35)")
T.eq(by.H2D.total_bytes, 4096, "H2D bytes")
T.eq(by.H2D.avg_bytes, 4096.0, "H2D avg bytes")
T.eq(by.H2D.total_time_us, 3.5, "H2D time")
T.eq(by.D2H.total_bytes, 0, "D2H: bytes 0 is falsy")
T.eq(by.D2H.avg_bytes, 0, "D2H: no truthy size -> int 0")
T.eq(kind(by.D2H.avg_bytes), "integer", "avg_bytes int 0")
T.eq(by.D2H.max_time_us, 2.25, "D2H max")
T.eq(d.memcpy_summary.total_time_us, 5.75, "total = 2.25 + 3.5")
local n = d.nccl_summary
T.eq(n.total_count, 2, "comm count")
T.eq(n.total_time_us, 21.0, "comm total")
T.eq(n.avg_time_us, 10.5, "comm avg")
T.eq(n.max_time_us, 20.0, "comm max")
T.eq(n.top_ops[1].name, "ncclDevKernel_AllReduce_Sum_f32", "longest first")
T.eq(n.top_ops[1].stream, 13, "stream")
T.eq(n.top_ops[2].stream, json.null, "stream 0 is falsy -> null")
ov = d.overlap_analysis
T.eq(ov.total_time_us, 201.0, "total = 301 - 100")
T.eq(ov.computation_time_us, 10.0, "computation")
T.eq(ov.total_comm_time_us, 21.0, "comm union")
T.eq(ov.exposed_comm_time_us, 16.0, "exposed comm = 21 - 5")
T.eq(ov.total_memcpy_time_us, 5.75, "memcpy union")
T.eq(ov.exposed_memcpy_time_us, 5.75, "memcpy fully exposed")
T.eq(ov.comm_overlap_ratio, 0.2381, "1 - 16/21")
T.eq(ov.memcpy_overlap_ratio, 0.0, "1 - 5.75/5.75")
T.eq(ov.comm_percent_of_total, 7.96, "16/201")
T.eq(ov.memcpy_percent_of_total, 2.86, "5.75/201")
met = mk.analyze(d, nil)
T.eq(met.nccl_blocking_assessment.flagged, true, "7.96% > 5% exposed comm")
T.eq(met.nccl_blocking_assessment.description, "Exposed (non-overlapped) communication: 8.0% of total GPU time",
  "nccl description")
T.eq(met.overlap_assessment.details, "Insufficient communication data for overlap analysis", "< 100 us of comm")
T.eq(met.memcpy_assessment.flagged, false, "H2D 3.5 of 201 us = 1.74%, D2H 1.12%: neither > 5% nor > 10 copies")
T.eq(met.memcpy_assessment.percent_of_total, 2.86, "memcpy 5.75 of 201 us")
T.eq(#met.patterns_detected, 1, "only the nccl pattern")

-- C: no candidates (one op, one kernel)
local C = write_trace("c.json", {
  ev("cpu_op", "aten::mm", 1, 1, 90.0, 10.5, {}),
  launch(1, 91, 7),
  ev("kernel", "Cijk_Alik_Bljk_HHS", 0, 7, 100.0, 10.0, { correlation = "1", stream = "7" }),
})
local tC = tl.load(C, { include_call_stack = true })
rep = tC:report { platform = "MI300X" }
cands = fusion.candidates(tC, rep.unified_perf_summary)
T.eq(json.encode(cands), "[]", "no candidates")
m = fusion.analyze(cands, ctx { unified = rep.unified_perf_summary, baseline_ms = 0.01 })
T.eq(m.status, "NO_DATA", "no candidates -> NO_DATA")
-- an error inside the extraction gives [] and the error text
local res, err = fusion.candidates({}, nil)
T.eq(json.encode(res), "[]", "extraction error -> []")
T.check(type(err) == "string", "extraction error text")
d = mk.data({})
T.check(type(d.error) == "string" and d.memcpy_summary.total_count == 0, "data error -> fallback object")

T.rmrf(dir)
T.finish()

-- The inference report's sheets (inference-and-comparative spec §1.6) on a
-- small hand-made trace, through trace:report{inference = true, ...} and
-- the command line: the module variants of the op sheets (parent_module,
-- call_stack, the 256-character cut), the per-category sheets (Normalization
-- gives Normalization_fwd; a backward row moved out of CONV_fwd is the whole
-- of CONV_bwd), NCCL ops in unified_perf_summary with collective analysis
-- on, the inference defaults (no kernel_summary), and the standard report
-- unchanged on the same trace.
local root, _, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
bin = bin or T.tracelens_bin()

local dir = T.tmpdir()

local function X(cat, name, pid, tid, ts, dur, args)
  return string.format('{"ph":"X","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%s,"dur":%s,"args":{%s}}',
    cat, name, pid, tid, ts, dur, args or "")
end
local MM = '"Input Dims":[[4,8],[8,16]],"Input type":["float","float"],"Input Strides":[[8,1],[16,1]],'
  .. '"Concrete Inputs":["",""]'
local LN = '"Input Dims":[[4,16],[],[16],[16]],"Input type":["float","","float","float"],'
  .. '"Input Strides":[[16,1],[],[1],[1]],"Concrete Inputs":["","[16]","",""]'
local CB = '"Input Dims":[[4,768,14,14],[4,3,224,224],[768,3,16,16],[],[],[],[],[],[],[],[]],'
  .. '"Input type":["c10::BFloat16","c10::BFloat16","c10::BFloat16","ScalarList"],'
  .. '"Concrete Inputs":["","","","[768]","[16, 16]","[0, 0]","[1, 1]","False","[0, 0]","1","[True, True, True]"]'
local CP = '"Input Dims":[[4,16],[4,16]],"Input type":["float","float"],"Input Strides":[[16,1],[16,1]],'
  .. '"Concrete Inputs":["",""]'

-- one op: cpu_op (10 us), its launch, the ac2g flow ends, the kernel
local function op(ev, name, args, ts, corr, kname, stream, kts, kdur)
  ev[#ev + 1] = X("cpu_op", name, 1, 1, ts, 10, args .. ',"External id":' .. corr)
  ev[#ev + 1] = X("cuda_runtime", "cudaLaunchKernel", 1, 1, ts + 1, 2, '"correlation":' .. corr)
  ev[#ev + 1] = string.format('{"ph":"s","id":%d,"pid":1,"tid":1,"ts":%s,"cat":"ac2g","name":"ac2g"}', corr, ts + 1)
  ev[#ev + 1] = string.format('{"ph":"f","id":%d,"pid":0,"tid":%d,"ts":%s,"cat":"ac2g","name":"ac2g","bp":"e"}',
    corr, stream, kts)
  ev[#ev + 1] = X("kernel", kname, 0, stream, kts, kdur, '"stream":' .. stream .. ',"correlation":' .. corr)
end

-- nn.Module: Model_0 [0,1000] > a 300-character wrapper module name [2,800]
-- > nn.Module: Block_12 [5,600] > aten::mm, aten::layer_norm,
-- aten::convolution_backward, aten::mm; aten::copy_ in the wrapper only;
-- an NCCL op outside every module.
local LONG = "nn.Module: Wrap" .. string.rep("W", 285) .. "_3"
local CUT = "nn.Module: Wrap" .. string.rep("W", 241) .. ".." -- 256 characters + ".."
local ev = {}
ev[#ev + 1] = X("python_function", "nn.Module: Model_0", 1, 1, 0, 1000)
ev[#ev + 1] = X("python_function", LONG, 1, 1, 2, 798)
ev[#ev + 1] = X("python_function", "nn.Module: Block_12", 1, 1, 5, 595)
op(ev, "aten::mm", MM, 10, 1, "gemm_a", 7, 100, 10)
op(ev, "aten::layer_norm", LN, 30, 2, "ln_k", 7, 120, 5)
op(ev, "aten::convolution_backward", CB, 50, 3, "conv_bwd_k", 7, 130, 20)
op(ev, "aten::mm", MM, 70, 4, "gemm_a", 7, 160, 10)
op(ev, "aten::copy_", CP, 700, 5, "copy_k", 7, 300, 4)
op(ev, "nccl:all_reduce", CP, 1100, 6, "ncclDevKernel_Generic", 8, 400, 50)
local path = dir .. "/inf.json"
local f = assert(io.open(path, "w"))
f:write('{"traceEvents":[' .. table.concat(ev, ",\n") .. ']}')
f:close()

local function cols(tb) return table.concat(tb:columns(), ",") end
local function find(tb, col, val)
  for i = 1, #tb do
    if tb:get(i, col) == val then return tb:row(i) end
  end
end

local t = tl.load(path, {include_call_stack = true})
local r = t:report{inference = true, group_by_parent_module = true, group_by_num_kernels = true, platform = "none"}
T.eq(table.concat(r.__order, " "),
  "gpu_timeline ops_summary_by_category ops_summary ops_unique_args unified_perf_summary GEMM CONV_bwd UnaryElementwise "
  .. "Normalization_fwd coll_analysis idle_breakdown launch_stats", "inference sheets: no kernel_summary, Normalization_fwd, CONV_bwd only")

-- ops_summary: the module variant
local os_ = r.ops_summary
T.eq(cols(os_), "name,parent_module,total_direct_kernel_time_sum,total_subtree_kernel_time_sum,"
  .. "total_subtree_kernel_time_count,total_direct_kernel_time_ms,Count,Categories,call_stack_first,"
  .. "Percentage (%),Cumulative Percentage (%)", "ops_summary columns")
local mm = find(os_, "name", "aten::mm")
T.eq(mm and mm.parent_module, "nn.Module: Block", "aten::mm parent_module: _12 removed")
T.eq(mm and mm.Count, 2, "aten::mm count")
T.eq(mm and mm.total_subtree_kernel_time_count, 2, "aten::mm subtree count")
T.eq(mm and mm.call_stack_first, "['aten::mm', 'nn.Module: Block_12', '" .. CUT .. "', 'nn.Module: Model_0']",
  "aten::mm call stack: innermost first, the long name cut to 256 characters + '..'")
local cp = find(os_, "name", "aten::copy_")
T.eq(cp and cp.parent_module, CUT, "aten::copy_ parent_module: the cut wrapper name")
T.check(find(os_, "name", "nccl:all_reduce") == nil, "NCCL ops are not launchers")

-- ops_summary_by_category
local bc = r.ops_summary_by_category
T.eq(cols(bc), "op category,parent_module,Count,call_stack_first,total_direct_kernel_time_ms,Percentage (%),"
  .. "Cumulative Percentage (%)", "ops_summary_by_category columns")
local g = find(bc, "op category", "GEMM")
T.eq(g and g.parent_module, "nn.Module: Block", "GEMM row's module")
T.eq(g and g.total_direct_kernel_time_ms, 0.02, "GEMM time (2 x 10 us)")

-- ops_unique_args: parent_module after op category, call_stack after ex_UID
local ua = r.ops_unique_args
local c = ua:columns()
T.eq(c[3], "parent_module", "ops_unique_args: parent_module third")
local at
for i, n in ipairs(c) do if n == "ex_UID" then at = i end end
T.eq(at and c[at + 1], "call_stack", "ops_unique_args: call_stack after ex_UID")
local ln = find(ua, "name", "aten::layer_norm")
T.eq(ln and ln.call_stack, "['aten::layer_norm', 'nn.Module: Block_12', '" .. CUT .. "', 'nn.Module: Model_0']",
  "ops_unique_args call_stack")

-- per-category sheets: the moved backward row alone in CONV_bwd
T.eq(#r.CONV_bwd, 1, "CONV_bwd: one row")
T.eq(r.CONV_bwd:get(1, "name"), "aten::convolution_backward", "CONV_bwd: the moved row")
T.eq(r.Normalization_fwd:get(1, "name"), "aten::layer_norm", "Normalization_fwd row")

-- unified_perf_summary: the NCCL op with collective analysis, not without
T.check(find(r.unified_perf_summary, "name", "nccl:all_reduce") ~= nil, "unified has the NCCL op (coll on)")
local r2 = t:report{inference = true, coll_analysis = false, platform = "none"}
T.check(find(r2.unified_perf_summary, "name", "nccl:all_reduce") == nil, "no NCCL op with coll analysis off")
T.eq(cols(r2.ops_summary), "name,total_direct_kernel_time_sum,total_subtree_kernel_time_sum,"
  .. "total_subtree_kernel_time_count,total_direct_kernel_time_ms,Count,Categories,Percentage (%),"
  .. "Cumulative Percentage (%)", "ops_summary without the module columns")
T.check(not r2.ops_unique_args:columns()[3]:match("parent_module"), "no parent_module without the option")
local r3 = t:report{inference = true, kernel_summary = true, platform = "none"}
T.check(r3.kernel_summary ~= nil, "kernel_summary when asked")

-- the standard report is unchanged
local s = t:report{platform = "none"}
T.eq(table.concat(s.__order, " "),
  "gpu_timeline ops_summary_by_category ops_summary ops_unique_args unified_perf_summary GEMM CONV_bwd UnaryElementwise "
  .. "Normalization kernel_summary short_kernel_histogram short_kernels_summary coll_analysis idle_breakdown launch_stats",
  "standard sheets")
T.check(find(s.unified_perf_summary, "name", "nccl:all_reduce") == nil, "standard unified: no NCCL op")
T.eq(cols(s.ops_summary), "name,total_direct_kernel_time_sum,total_subtree_kernel_time_sum,"
  .. "total_direct_kernel_time_ms,total_subtree_kernel_time_ms,Count,Categories,Percentage (%),"
  .. "Cumulative Percentage (%)", "standard ops_summary")

-- a trace without python functions cannot group by module
local ok, err = pcall(function() return tl.load(path):report{inference = true, group_by_parent_module = true} end)
T.check(not ok and tostring(err):match("needs the python functions"), "group_by_parent_module without python")

-- the command line writes the same sheets
local okc, code, _, e = T.run(T.q(bin) .. " report -q --no-xlsx --inference --group_by_parent_module "
  .. "--platform none " .. T.q(path) .. " -o " .. T.q(dir .. "/out"))
T.check(okc, "command line: " .. tostring(code) .. " " .. e)
local h = T.read_csv(dir .. "/out/perf_report_csvs/ops_summary.csv")
T.eq(h and h[2], "parent_module", "command line: ops_summary parent_module")
T.check(T.file_exists(dir .. "/out/perf_report_csvs/Normalization_fwd.csv"), "command line: Normalization_fwd")
T.check(not T.file_exists(dir .. "/out/perf_report_csvs/kernel_summary.csv"), "command line: no kernel_summary")

T.rmrf(dir)
T.finish()

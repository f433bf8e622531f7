-- --detect_recompute and --include_overlap_info end to end, through
-- trace:report{...} and the `tracelens report` command line, on two small
-- hand-made traces (perf-report spec §3.11, §4.6, §4.7, §7.2-7.6, §7.10).
-- Every expected value is worked out by hand in the comments.
local root, _, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
bin = bin or T.tracelens_bin()

local dir = T.tmpdir()

local function X(cat, name, pid, tid, ts, dur, args)
  return string.format('{"ph":"X","cat":"%s","name":"%s","pid":%d,"tid":%d,"ts":%s,"dur":%s,"args":{%s}}',
    cat, name, pid, tid, ts, dur, args or "")
end
local MM1 = '"Input Dims":[[4,8],[8,16]],"Input type":["float","float"],"Input Strides":[[8,1],[16,1]],'
  .. '"Concrete Inputs":["",""]'
local MM2 = '"Input Dims":[[4,8],[8,32]],"Input type":["float","float"],"Input Strides":[[8,1],[32,1]],'
  .. '"Concrete Inputs":["",""]'
local EW2 = '"Input Dims":[[4,16],[4,16]],"Input type":["float","float"],"Input Strides":[[16,1],[16,1]],'
  .. '"Concrete Inputs":["",""]'
local EW1 = '"Input Dims":[[4,16]],"Input type":["float"],"Input Strides":[[16,1]],"Concrete Inputs":[""]'

-- one op = 5 events: cpu_op (10 us), its runtime launch, the two ac2g flow
-- ends, the kernel (on pid 0, tid = stream)
local function op(ev, name, args, ts, corr, kname, stream, kts, kdur)
  ev[#ev + 1] = X("cpu_op", name, 1, 1, ts, 10, args .. ',"External id":' .. corr)
  ev[#ev + 1] = X("cuda_runtime", "cudaLaunchKernel", 1, 1, ts + 1, 2, '"correlation":' .. corr)
  ev[#ev + 1] = string.format('{"ph":"s","id":%d,"pid":1,"tid":1,"ts":%s,"cat":"ac2g","name":"ac2g"}', corr, ts + 1)
  ev[#ev + 1] = string.format('{"ph":"f","id":%d,"pid":0,"tid":%d,"ts":%s,"cat":"ac2g","name":"ac2g","bp":"e"}',
    corr, stream, kts)
  ev[#ev + 1] = X("kernel", kname, 0, stream, kts, kdur, '"stream":' .. stream .. ',"correlation":' .. corr)
end

local function write(path, ev)
  local f = assert(io.open(path, "w"))
  f:write('{"traceEvents":[' .. table.concat(ev, ",\n") .. ']}')
  f:close()
end

-- The recompute trace (UIDs): 0 the training script's python function;
-- 1 aten::mm -> kernel 5 gemm_a [100,110]; 6 a checkpoint recompute_fn
-- (200..300) around 7 aten::mm -> kernel 11 gemm_a [400,420] and
-- 12 aten::relu -> kernel 16 relu_k [430,435]; all on stream 7.
local ev = {}
ev[#ev + 1] = X("python_function", "train.py(10): <module>", 1, 1, 0, 1000)
op(ev, "aten::mm", MM1, 10, 1, "gemm_a", 7, 100, 10)
ev[#ev + 1] = X("python_function", "torch/utils/checkpoint.py(1000): recompute_fn", 1, 1, 200, 100)
op(ev, "aten::mm", MM1, 210, 2, "gemm_a", 7, 400, 20)
op(ev, "aten::relu", EW1, 250, 3, "relu_k", 7, 430, 5)
local rc_path = dir .. "/recompute.json"
write(rc_path, ev)

-- The overlap trace: stream 7 and stream 8 kernels.
--   0 aten::mm    -> gemm_a [100,110] s7    overlaps add_k by 6 us
--   5 aten::add   -> add_k  [104,114] s8
--  10 aten::mul   -> mul_k  [114,119] s7    touches add_k: no overlap
--  15 aten::sub   -> sub_k  [118.5,123.5] s8 0.5 us with mul_k: no overlap
--  20 aten::mm    -> gemm_a [200,210] s7    overlaps copy_k by 5 us
--  25 aten::copy_ -> copy_k [195,205] s8
--  30 aten::mm (other shape) -> gemm_b [300,315] s7
ev = {}
op(ev, "aten::mm", MM1, 0, 1, "gemm_a", 7, 100, 10)
op(ev, "aten::add", EW2, 20, 2, "add_k", 8, 104, 10)
op(ev, "aten::mul", EW2, 40, 3, "mul_k", 7, 114, 5)
op(ev, "aten::sub", EW2, 60, 4, "sub_k", 8, 118.5, 5)
op(ev, "aten::mm", MM1, 80, 5, "gemm_a", 7, 200, 10)
op(ev, "aten::copy_", EW2, 90, 6, "copy_k", 8, 195, 10)
op(ev, "aten::mm", MM2, 100, 7, "gemm_b", 7, 300, 15)
local ov_path = dir .. "/overlap.json"
write(ov_path, ev)

local function cols(tb)
  return table.concat(tb:columns(), ",")
end
local function col_after(tb, a, b, what)
  local c = tb:columns()
  for i = 1, #c - 1 do
    if c[i] == a then return T.eq(c[i + 1], b, what) end
  end
  return T.check(false, what .. ": no column " .. a)
end
local function has_col(tb, name)
  for _, c in ipairs(tb:columns()) do if c == name then return true end end
  return false
end

-- ============================================================ recompute
do
  local plain = tl.load(rc_path)
  local ok, err = pcall(function() return plain:report{detect_recompute = true} end)
  T.check(not ok and tostring(err):match("detect_recompute"),
    "detect_recompute without python functions: " .. tostring(err))

  local trace = tl.load(rc_path, {include_call_stack = true})
  local r = trace:report{detect_recompute = true, include_call_stack = false, platform = "none"}
  T.eq(table.concat(r.__order, ","), "gpu_timeline,ops_summary_by_category,ops_summary,ops_unique_args,"
    .. "unified_perf_summary,GEMM,kernel_summary,short_kernel_histogram,short_kernels_summary,idle_breakdown,launch_stats",
    "recompute sheets")

  -- gpu_timeline: the False block (gemm_a [100,110]) then the True block
  -- (gemm_a [400,420], relu_k [430,435]: busy 25, idle 10, total 35 us)
  local g = r.gpu_timeline
  T.eq(cols(g), "type,time ms,percent,is_recompute", "gpu_timeline columns")
  T.eq(#g, 16, "two blocks of 8 rows")
  T.eq(g:row(1).type, "computation_time", "first block first row")
  T.eq(g:row(1).is_recompute, false, "False block first")
  T.close(g:row(1)["time ms"], 0.01, "False computation ms")
  T.close(g:row(1).percent, 100, "False computation %")
  T.eq(g:row(9).is_recompute, true, "True block second")
  T.close(g:row(9)["time ms"], 0.025, "True computation ms")
  T.close(g:row(9).percent, 25 / 35 * 100, "True computation % of its own total")
  T.eq(g:row(13).type, "idle_time", "True idle row")
  T.close(g:row(13)["time ms"], 0.01, "True idle ms")
  T.close(g:row(14)["time ms"], 0.035, "True total ms")

  -- ops_summary_by_category: (GEMM, True) 20 us, (GEMM, False) 10, (other, True) 5
  local c = r.ops_summary_by_category
  T.eq(cols(c), "op category,is_recompute,Count,total_direct_kernel_time_ms,Percentage (%),"
    .. "Cumulative Percentage (%)", "by_category columns")
  T.eq(#c, 3, "by_category rows")
  T.eq(c:row(1)["op category"] .. "/" .. tostring(c:row(1).is_recompute), "GEMM/true", "by_category row 1")
  T.close(c:row(1).total_direct_kernel_time_ms, 0.02, "by_category row 1 ms")
  T.close(c:row(1)["Percentage (%)"], 20 / 35 * 100, "by_category row 1 %")
  T.eq(c:row(2).is_recompute, false, "by_category row 2")
  T.close(c:row(2).total_direct_kernel_time_ms, 0.01, "by_category row 2 ms")
  T.eq(c:row(3).is_recompute, true, "by_category row 3")
  T.close(c:row(3)["Cumulative Percentage (%)"], 100, "by_category cumulative")

  local s = r.ops_summary
  T.eq(cols(s), "name,is_recompute,total_direct_kernel_time_sum,total_subtree_kernel_time_sum,"
    .. "total_direct_kernel_time_ms,total_subtree_kernel_time_ms,Count,Categories,Percentage (%),"
    .. "Cumulative Percentage (%)", "ops_summary columns")
  T.eq(s:row(1).name .. "/" .. tostring(s:row(1).is_recompute), "aten::mm/true", "ops_summary row 1")
  T.close(s:row(1).total_direct_kernel_time_sum, 20, "ops_summary row 1 sum")
  T.eq(s:row(2).name .. "/" .. tostring(s:row(2).is_recompute), "aten::mm/false", "ops_summary row 2")
  T.eq(s:row(3).name .. "/" .. tostring(s:row(3).is_recompute), "aten::relu/true", "ops_summary row 3")

  local u = r.ops_unique_args
  col_after(u, "Concrete Inputs", "is_recompute", "ops_unique_args: is_recompute after the arg keys")
  col_after(u, "is_recompute", "operation_count", "ops_unique_args: then operation_count")
  T.eq(u:row(1).ex_UID, 7, "ops_unique_args row 1: the recomputed mm")
  T.eq(u:row(1).is_recompute, true, "ops_unique_args row 1 flag")
  T.eq(u:row(2).ex_UID, 1, "ops_unique_args row 2")
  T.eq(u:row(2).is_recompute, false, "ops_unique_args row 2 flag")
  T.eq(u:row(3).ex_UID, 12, "ops_unique_args row 3")

  local gm = r.GEMM
  col_after(gm, "param: B", "is_recompute", "GEMM: is_recompute after the params")
  col_after(gm, "is_recompute", "GFLOPS_first", "GEMM: then the metrics")
  T.eq(#gm, 2, "GEMM: one row per flag")
  T.eq(gm:row(1).UID_first, 7, "GEMM row 1")
  T.close(gm:row(1)["Kernel Time (\u{b5}s)_sum"], 20, "GEMM row 1 kernel time")
  T.eq(gm:row(2).is_recompute, false, "GEMM row 2")

  local un = r.unified_perf_summary
  col_after(un, "Concrete Inputs", "is_recompute", "unified: is_recompute after the arg keys")
  col_after(un, "is_recompute", "ex_UID", "unified: then ex_UID")
  T.check(not has_col(un, "call_stack_full") and not has_col(un, "entry_point"), "unified: no call-stack columns")
  T.eq(un:row(1).ex_UID, 7, "unified row 1")
  T.eq(un:row(1).is_recompute, true, "unified row 1 flag")
  T.eq(un:row(2).is_recompute, false, "unified row 2 flag")
  T.eq(un:row(3).name .. "/" .. tostring(un:row(3).is_recompute), "aten::relu/true", "unified row 3")

  -- total_time of the other sheets: the first block's (10 us)
  local ks = r.kernel_summary
  T.close(ks:row(1)["Percent of total time (%)"], 300, "kernel_summary: gemm_a 30 us of the False block's 10 us")

  -- the call-stack columns follow the trace's python functions by default
  local r2 = trace:report{detect_recompute = true, platform = "none"}
  T.check(has_col(r2.unified_perf_summary, "call_stack_full"), "include_call_stack defaults to the tree's")
  -- without the option: no is_recompute anywhere
  local r3 = trace:report{platform = "none"}
  T.check(not has_col(r3.gpu_timeline, "is_recompute") and not has_col(r3.ops_summary, "is_recompute")
    and not has_col(r3.unified_perf_summary, "is_recompute") and not has_col(r3.GEMM, "is_recompute"),
    "no is_recompute without the option")
  T.eq(#r3.gpu_timeline, 8, "one timeline block without the option")

  -- the command line: --detect_recompute alone loads python functions,
  -- without the call-stack columns; with --include-call-stack they come
  local out = dir .. "/rc_cli"
  local okc, code, _, errtext = T.run(T.q(bin) .. " report " .. T.q(rc_path) .. " -o " .. T.q(out)
    .. " --detect_recompute --no-xlsx -q --platform none")
  T.check(okc, "report --detect_recompute exits 0 (" .. tostring(code) .. "): " .. errtext)
  local h, rows = T.read_csv(out .. "/perf_report_csvs/gpu_timeline.csv")
  T.eq(table.concat(h, ","), "type,time ms,percent,is_recompute", "CLI gpu_timeline header")
  T.eq(table.concat(rows[1], ","), "computation_time,0.01,100.0,False", "CLI gpu_timeline row 1")
  T.eq(table.concat(rows[9], ","), "computation_time,0.025,71.42857142857143,True", "CLI gpu_timeline row 9")
  h = T.read_csv(out .. "/perf_report_csvs/unified_perf_summary.csv")
  T.eq(h[#h], "Cumulative Percentage (%)", "CLI unified: no call-stack columns")
  h, rows = T.read_csv(out .. "/perf_report_csvs/ops_summary.csv")
  T.eq(h[2], "is_recompute", "CLI ops_summary key")
  T.eq(rows[1][2], "True", "CLI ops_summary flag")
  out = dir .. "/rc_cli2"
  okc = T.run(T.q(bin) .. " report " .. T.q(rc_path) .. " -o " .. T.q(out)
    .. " --detect-recompute --include-call-stack --no-xlsx -q --platform none")
  T.check(okc, "report --detect-recompute --include-call-stack exits 0")
  h = T.read_csv(out .. "/perf_report_csvs/unified_perf_summary.csv")
  T.eq(h[#h - 2], "call_stack_full", "CLI unified: call stack with --include-call-stack")
end

-- ============================================================== overlap
do
  local trace = tl.load(ov_path)
  local plain = trace:report{platform = "none"}
  for _, n in ipairs(plain.__order) do
    T.check(not n:match("kl_overlap"), "no overlap sheet without the option: " .. n)
  end
  local r = trace:report{include_overlap_info = true, platform = "none"}
  T.eq(table.concat(r.__order, ","), "gpu_timeline,ops_summary_by_category,ops_summary,ops_unique_args,"
    .. "ops_unique_args_kl_overlap,unified_perf_summary,unified_perf_summary_kl_overlap,GEMM,GEMM_kl_overlap,"
    .. "BinaryElementwise,BinaryElementwise_kl_overlap,UnaryElementwise,UnaryElementwise_kl_overlap,"
    .. "kernel_summary,short_kernel_histogram,short_kernels_summary,idle_breakdown,launch_stats", "overlap sheets in order")

  -- ops_unique_args_kl_overlap: sorted as ops_unique_args (direct time desc,
  -- ex_UID): gemm_b's mm 15 us, then the 10 us ops by UID, then 5 us
  local u = r.ops_unique_args_kl_overlap
  col_after(u, "name", "overlapping_kernel_names", "kl: overlapping_kernel_names after name")
  col_after(u, "trunc_kernel_details", "overlapping_kernels_details_summary", "kl: overlap summary placement")
  col_after(u, "overlapping_kernels_details_summary", "trunc_overlapping_kernels_details", "kl: trunc placement")
  col_after(u, "trunc_overlapping_kernels_details", "overlap_pct_mean", "kl: overlap_pct stats")
  col_after(u, "overlap_pct_max", "Percentage (%)", "kl: percentages last")
  local want = {30, 0, 5, 20, 25, 10, 15}
  T.eq(#u, #want, "kl rows")
  for i, uid in ipairs(want) do T.eq(u:row(i).ex_UID, uid, "ops_unique_args_kl_overlap row " .. i) end
  local a = u:row(2) -- aten::mm over add_k: 6 of its 10 us
  T.eq(a.overlapping_kernel_names, "['add_k']", "names of the first mm")
  T.eq(a.overlapping_kernels_details_summary, "[{'name': 'add_k', 'stream': 8, 'overlap_pct': 0.6, 'count': 1, "
    .. "'total_duration_us': 10.0, 'mean_duration_us': 10.0, 'median_duration_us': 10.0, "
    .. "'std_dev_duration_us': 0.0, 'min_duration_us': 10.0, 'max_duration_us': 10.0}]", "details summary")
  T.eq(a.trunc_overlapping_kernels_details, "[{'name': 'add_k', 'stream': 8, 'mean_duration_us': 10.0}]",
    "trunc details")
  T.close(a.overlap_pct_mean, 0.6, "overlap_pct_mean")
  T.eq(a.overlap_pct_std, nil, "overlap_pct_std of one instance")
  T.eq(u:row(3).overlapping_kernel_names, "['gemm_a']", "add_k's op sees gemm_a")
  T.close(u:row(4).overlap_pct_max, 0.5, "second mm: 5 of 10 us")
  T.eq(u:row(1).overlapping_kernel_names, nil, "gemm_b overlaps nothing")
  T.eq(u:row(1).overlapping_kernels_details_summary, "[]", "empty summary")
  T.eq(u:row(1).trunc_overlapping_kernels_details, nil, "empty trunc")
  T.eq(u:row(6).overlapping_kernel_names, nil, "mul_k only touches add_k")
  T.eq(u:row(7).overlapping_kernel_names, nil, "sub_k overlaps mul_k by 0.5 us only")
  T.close(u:row(1)["Percentage (%)"], 15 / 65 * 100, "kl percentage")

  -- GEMM_kl_overlap: the (mm, 4x8x16) group (20 us) before gemm_b's (15 us);
  -- in the group by kernel time then UID
  local gm = r.GEMM_kl_overlap
  col_after(gm, "name", "overlapping_kernel_names_first", "GEMM_kl_overlap second column")
  col_after(gm, "overlapping_kernel_names_first", "param: M", "then the params")
  col_after(gm, "trunc_kernel_details", "overlapping_kernels_details__summarize_kernel_stats", "GEMM_kl summary")
  col_after(gm, "overlap_pct_max", "Input Dims_first", "GEMM_kl stats before the args")
  T.eq(#gm, 3, "GEMM_kl rows")
  T.eq(gm:row(1).UID_first, 0, "GEMM_kl row 1")
  T.eq(gm:row(2).UID_first, 20, "GEMM_kl row 2 (same group)")
  T.eq(gm:row(3).UID_first, 30, "GEMM_kl row 3 (15 us alone)")
  T.eq(gm:row(1).overlapping_kernel_names_first, "['add_k']", "GEMM_kl names")
  T.eq(gm:row(2).overlapping_kernel_names_first, "['copy_k']", "GEMM_kl names 2")
  T.eq(gm:row(1).overlap_pct_std, 0.0, "overlap_pct_std NaN -> 0 where there is a mean")
  T.eq(gm:row(3).overlap_pct_std, nil, "no overlap: std stays missing")
  -- (without the overlap key the two 10 us mm rows are one 20 us row; alone,
  -- each would sort below gemm_b's 15 us, as the kl sheets' group sort avoids)
  T.eq(#r.GEMM, 2, "plain GEMM sheet: the two 4x8x16 mm in one row")
  T.close(r.GEMM:row(1)["Kernel Time (\u{b5}s)_sum"], 20, "plain GEMM sheet: 20 us first")

  -- unified_perf_summary_kl_overlap: groups (mm 4x8x16: 20 us), (mm 4x8x32: 15),
  -- add (10, uid 5), copy_ (10, uid 25), mul, sub (5)
  local un = r.unified_perf_summary_kl_overlap
  col_after(un, "name", "overlapping_kernel_names", "unified kl second column")
  col_after(un, "trunc_kernel_details", "overlapping_kernels_details_summary", "unified kl summary")
  col_after(un, "overlap_pct_max", "perf_params", "unified kl stats before perf_params")
  want = {0, 20, 30, 5, 25, 10, 15}
  T.eq(#un, #want, "unified kl rows")
  for i, uid in ipairs(want) do T.eq(un:row(i).ex_UID, uid, "unified_perf_summary_kl_overlap row " .. i) end
  T.close(un:row(2)["Cumulative Percentage (%)"], 20 / 65 * 100, "cumulative % in the group order")
  T.close(un:row(1).overlap_pct_mean, 0.6, "unified kl overlap_pct")
  T.eq(#r.unified_perf_summary, 6, "plain unified: the two 4x8x16 mm in one row")

  -- overlap and recompute together: is_recompute is a key of the kl sheets too
  local tr2 = tl.load(ov_path, {include_call_stack = true})
  local r2 = tr2:report{include_overlap_info = true, detect_recompute = true, platform = "none"}
  col_after(r2.ops_unique_args_kl_overlap, "Concrete Inputs", "is_recompute", "kl ops: is_recompute key")
  col_after(r2.GEMM_kl_overlap, "param: B", "is_recompute", "GEMM_kl: is_recompute key")
  col_after(r2.unified_perf_summary_kl_overlap, "Concrete Inputs", "is_recompute", "unified kl: is_recompute key")

  -- the command line
  local out = dir .. "/ov_cli"
  local okc, code, _, errtext = T.run(T.q(bin) .. " report " .. T.q(ov_path) .. " -o " .. T.q(out)
    .. " --include_overlap_info --no-xlsx -q --platform none")
  T.check(okc, "report --include_overlap_info exits 0 (" .. tostring(code) .. "): " .. errtext)
  local h, rows = T.read_csv(out .. "/perf_report_csvs/ops_unique_args_kl_overlap.csv")
  T.eq(h[2], "overlapping_kernel_names", "CLI kl header")
  T.eq(rows[2][2], "['add_k']", "CLI kl names")
  T.check(T.file_exists(out .. "/perf_report_csvs/GEMM_kl_overlap.csv"), "CLI GEMM_kl_overlap.csv")
  T.check(T.file_exists(out .. "/perf_report_csvs/unified_perf_summary_kl_overlap.csv"), "CLI unified kl csv")
  okc = T.run(T.q(bin) .. " report " .. T.q(ov_path) .. " -o " .. T.q(dir .. "/ov_cli2")
    .. " --include-overlap-info -q --platform none")
  T.check(okc, "report --include-overlap-info (with the xlsx) exits 0")
end

-- ============================================================ tl.write_report
-- The sheets of a report written later, at once or on a thread of their own:
-- the same files, byte for byte, as trace:report{write = DIR}; the empty
-- short_kernels_summary (no kernel under 1 us) is still a bare newline.
do
  local slurp = T.read_file
  local trace = tl.load(ov_path)
  local ro = {platform = "none", short_kernel_threshold_us = 1}
  local r = trace:report(ro)
  ro.write = dir .. "/w_ref"
  trace:report(ro)
  tl.write_report(r, dir .. "/w_now", {name = "now"})
  local job = tl.write_report(r, dir .. "/w_bg", {background = true, xlsx = false})
  T.eq(job:wait(), true, "background write: wait returns true")
  T.eq(job:wait(), true, "wait again: the same answer")
  T.eq(slurp(dir .. "/w_ref/perf_report_csvs/short_kernels_summary.csv"), "\n", "reference: empty summary is a newline")
  for _, name in ipairs(r.__order) do
    local want = slurp(dir .. "/w_ref/perf_report_csvs/" .. name .. ".csv")
    T.check(want ~= nil, "reference CSV " .. name)
    T.eq(slurp(dir .. "/w_now/now_csvs/" .. name .. ".csv"), want, "write_report CSV " .. name)
    T.eq(slurp(dir .. "/w_bg/perf_report_csvs/" .. name .. ".csv"), want, "background CSV " .. name)
  end
  T.check(T.file_exists(dir .. "/w_now/now.xlsx"), "write_report: the workbook")
  T.check(not T.file_exists(dir .. "/w_bg/perf_report.xlsx"), "xlsx = false: no workbook")

  -- a write that fails says so at wait(), and leaves nothing behind
  T.check(io.open(dir .. "/a_file", "w")):close()
  local bad = tl.write_report(r, dir .. "/a_file/out", {background = true})
  local ok, err = pcall(bad.wait, bad)
  T.check(not ok and tostring(err):match("a_file: exists and is not a directory"), "failed background write raises: " .. tostring(err))
  local ok2, err2 = pcall(tl.write_report, {}, dir .. "/x")
  T.check(not ok2 and tostring(err2):match("trace:report"), "not a report: " .. tostring(err2))
end

T.rmrf(dir)
T.finish()

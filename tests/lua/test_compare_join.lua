-- `tracelens compare` on small hand-made report directories: the outer-join
-- semantics (keys sorted, missing keys equal, duplicate keys -> every pair,
-- one-sided rows), int/float kinds as pandas gives them, the diff/pct
-- columns, the split sheets (column pruning, all-empty columns dropped, a
-- 0-row part is "\n"), sorting (descending, stable ties, missing last), the
-- roofline keys, the CSV reader (quoting, NA strings, types), and bad input
-- (exit 1, one line naming the file and line, nothing written).
-- Every expected text below is worked out by hand from the inputs.
local root = arg[1]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local bin = arg[3] or T.tracelens_bin()

local tmp = T.tmpdir()

local function write(path, text)
  os.execute("mkdir -p " .. T.q(path:match("^(.*)/[^/]+$")))
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local slurp = T.read_file

-- Runs compare; returns ok, code, stderr and the output CSV directory.
local function compare(dirs, opts, name)
  local out = tmp .. "/out_" .. name
  local cmd = T.q(bin) .. " compare -q"
  for _, d in ipairs(dirs) do cmd = cmd .. " " .. T.q(tmp .. "/" .. d) end
  local ok, code, _, err = T.run(cmd .. " " .. opts .. " --no-xlsx -o " .. T.q(out))
  return ok, code, err, out .. "/comparison_csvs", out
end

local function lines(t) return table.concat(t, "\n") .. "\n" end

-- 1. gpu_timeline: the join itself (no sorting, no split)
write(tmp .. "/base/gpu_timeline.csv", lines {
  "type,time ms,percent",
  "b,2,20",
  "a,1,10",
  "a,3,30",
  ",5,50",   -- a missing key
  "c,0,0",
})
write(tmp .. "/var/gpu_timeline.csv", lines {
  "type,time ms,percent",
  "a,4,40",
  "a,6,60",
  "NaN,7,70", -- missing too: equals the baseline's missing key
  "d,8,80",
  "c,1,5",
})
local ok, code, err, dir = compare({"base", "var"}, "--sheets gpu_timeline", "join")
if T.check(ok, "join: exit " .. tostring(code) .. ": " .. err) then
  T.eq(slurp(dir .. "/gpu_timeline.csv"), lines {
    "type,time ms__var_diff,time ms__var_pct,base::time ms,base::percent,var::time ms,var::percent",
    -- keys sorted; a: each baseline row with each variant row, baseline-major
    "a,3.0,300.0,1.0,10.0,4.0,40.0",
    "a,5.0,500.0,1.0,10.0,6.0,60.0",
    "a,1.0,33.33333333333333,3.0,30.0,4.0,40.0",
    "a,3.0,100.0,3.0,30.0,6.0,60.0",
    "b,,,2.0,20.0,,",                  -- baseline only: the variant's ints become floats
    "c,1.0,,0.0,0.0,1.0,5.0",          -- pct of a zero baseline is missing
    "d,,,,,8.0,80.0",                  -- variant only
    ",2.0,40.0,5.0,50.0,7.0,70.0",     -- missing keys last, joined with each other
  }, "join: gpu_timeline.csv")
end

-- 2. the same keys on both sides: ints stay ints, the diff of ints is an int
write(tmp .. "/i1/gpu_timeline.csv", lines {"type,time ms", "x,10", "y,4"})
write(tmp .. "/i2/gpu_timeline.csv", lines {"type,time ms", "y,2", "x,25"})
write(tmp .. "/i3/gpu_timeline.csv", lines {"type,time ms", "x,1.5"})
ok, code, err, dir = compare({"i1", "i2"}, "--sheets gpu_timeline --names one two", "ints")
if T.check(ok, "ints: " .. err) then
  T.eq(slurp(dir .. "/gpu_timeline.csv"), lines {
    "type,time ms__two_diff,time ms__two_pct,one::time ms,two::time ms",
    "x,15,150.0,10,25",
    "y,-2,-50.0,4,2",
  }, "ints: gpu_timeline.csv")
end
-- three reports: joined in order; the diff columns per diff column, per variant
ok, code, err, dir = compare({"i1", "i2", "i3"}, "--sheets gpu_timeline --names one two three", "three")
if T.check(ok, "three: " .. err) then
  T.eq(slurp(dir .. "/gpu_timeline.csv"), lines {
    "type,time ms__two_diff,time ms__two_pct,time ms__three_diff,time ms__three_pct,one::time ms,two::time ms," ..
      "three::time ms",
    "x,15,150.0,-8.5,-85.0,10,25,1.5",
    "y,-2,-50.0,,,4,2,",
  }, "three: gpu_timeline.csv")
end

-- 3. ops_summary: sorted by the baseline's total_direct_kernel_time_ms,
-- descending, ties in key order, baseline-less rows last; the reference's
-- deleted columns are gone
local ops_header = "name,total_direct_kernel_time_sum,total_direct_kernel_time_ms,Count,Percentage (%)," ..
  "Cumulative Percentage (%)"
write(tmp .. "/s1/ops_summary.csv", lines {ops_header, "x,1000,1.0,2,10,10", "z,3000,3.0,1,30,40",
  "y,3000,3.0,4,30,70"})
write(tmp .. "/s2/ops_summary.csv", lines {ops_header, "w,500,0.5,1,5,5", "x,2500,2.5,2,25,30",
  "y,7500,7.5,4,75,100"})
ok, code, err, dir = compare({"s1", "s2"}, "--sheets ops_summary", "sort")
if T.check(ok, "sort: " .. err) then
  T.eq(slurp(dir .. "/ops_summary.csv"), lines {
    "name,total_direct_kernel_time_ms__s2_diff,total_direct_kernel_time_ms__s2_pct,Count__s2_diff,Count__s2_pct," ..
      "s1::total_direct_kernel_time_ms,s1::Count,s1::Percentage (%),s1::Cumulative Percentage (%)," ..
      "s2::total_direct_kernel_time_ms,s2::Count,s2::Percentage (%)",
    "y,4.5,150.0,0.0,0.0,3.0,4.0,30.0,70.0,7.5,4.0,75.0",
    "z,,,,,3.0,1.0,30.0,40.0,,,",
    "x,1.5,150.0,0.0,0.0,1.0,2.0,10.0,10.0,2.5,2.0,25.0",
    "w,,,,,,,,,0.5,1.0,5.0",
  }, "sort: ops_summary.csv")
end

-- 4. ops_unique_args: the split sheets
local ua = "name,Input type,Input Dims,Input Strides,Concrete Inputs,op category,operation_count," ..
  "total_direct_kernel_time_mean,total_direct_kernel_time_sum,ex_UID"
write(tmp .. "/u1/ops_unique_args.csv", lines {ua,
  "op1,\"('float',)\",\"((2, 3),)\",\"((3, 1),)\",,GEMM,2,5.0,10.0,7",
  "op2,\"('float',)\",\"((4,),)\",\"((1,),)\",,other,1,1.5,1.5,9"})
write(tmp .. "/u2/ops_unique_args.csv", lines {ua,
  "op1,\"('float',)\",\"((2, 3),)\",\"((3, 1),)\",,GEMM,2,12.5,25.0,70",
  "op3,\"('int',)\",\"((1,),)\",\"((1,),)\",,other,3,1.0,3.0,"})
ok, code, err, dir = compare({"u1", "u2"}, "--sheets ops_all", "split")
if T.check(ok, "split: " .. err) then
  T.eq(table.concat(T.glob(T.q(dir) .. "/*.csv"), " "):gsub("[^ ]*/", ""),
    "ops_unique_args_intersect_u2.csv ops_unique_args_only_baseline_u2.csv ops_unique_args_only_variant_u2.csv",
    "split: the three parts")
  -- Concrete Inputs (a key) is empty everywhere: missing keys join, the column is dropped
  T.eq(slurp(dir .. "/ops_unique_args_intersect_u2.csv"), lines {
    "name,Input type,Input Dims,Input Strides,total_direct_kernel_time_sum__u2_diff," ..
      "total_direct_kernel_time_sum__u2_pct,total_direct_kernel_time_mean__u2_diff," ..
      "total_direct_kernel_time_mean__u2_pct,operation_count__u2_diff,operation_count__u2_pct," ..
      "u1::op category,u1::operation_count,u1::total_direct_kernel_time_mean,u1::total_direct_kernel_time_sum," ..
      "u1::ex_UID,u2::op category,u2::operation_count,u2::total_direct_kernel_time_mean," ..
      "u2::total_direct_kernel_time_sum,u2::ex_UID",
    "op1,\"('float',)\",\"((2, 3),)\",\"((3, 1),)\",15.0,150.0,7.5,150.0,0.0,0.0," ..
      "GEMM,2.0,5.0,10.0,7.0,GEMM,2.0,12.5,25.0,70.0",
  }, "split: intersect")
  T.eq(slurp(dir .. "/ops_unique_args_only_baseline_u2.csv"), lines {
    "name,Input type,Input Dims,Input Strides,u1::op category,u1::operation_count," ..
      "u1::total_direct_kernel_time_mean,u1::total_direct_kernel_time_sum,u1::ex_UID",
    "op2,\"('float',)\",\"((4,),)\",\"((1,),)\",other,1.0,1.5,1.5,9.0",
  }, "split: only_baseline (no variant or diff columns)")
  -- op3's ex_UID is empty: the all-empty column is dropped
  T.eq(slurp(dir .. "/ops_unique_args_only_variant_u2.csv"), lines {
    "name,Input type,Input Dims,Input Strides,u2::op category,u2::operation_count," ..
      "u2::total_direct_kernel_time_mean,u2::total_direct_kernel_time_sum",
    "op3,\"('int',)\",\"((1,),)\",\"((1,),)\",other,3.0,1.0,3.0",
  }, "split: only_variant")
end
-- a part without rows is a file holding one newline
ok, code, err, dir = compare({"u1", "u1"}, "--sheets ops_all --names a b", "empty_part")
if T.check(ok, "empty part: " .. err) then
  T.eq(slurp(dir .. "/ops_unique_args_only_baseline_b.csv"), "\n", "a 0-row part is \"\\n\"")
  T.eq(slurp(dir .. "/ops_unique_args_only_variant_b.csv"), "\n", "a 0-row part is \"\\n\" (variant)")
  local h, rows = T.read_csv(dir .. "/ops_unique_args_intersect_b.csv")
  T.eq(#rows, 2, "same report twice: every row intersects")
  T.eq(h[5], "total_direct_kernel_time_sum__b_diff", "the first diff column follows the four keys")
  T.eq(rows[1][1] .. "," .. rows[2][1], "op1,op2", "intersect sorted by the baseline's sum, descending")
end

-- 5. roofline: keys are name + the sorted param: columns every report has
local g = "name,param: M,param: B,GFLOPS_first,Kernel Time (µs)_sum,Kernel Time (µs)_mean,name_count," ..
  "TFLOPS/s_mean,TB/s_mean"
write(tmp .. "/r1/GEMM.csv", lines {g, "aten::mm,64,1,2.0,10.0,5.0,2,100.0,1.0"})
write(tmp .. "/r2/GEMM.csv", lines {g .. ",param: transpose",
  "aten::mm,64,1,2.0,20.0,10.0,2,50.0,0.5,\"(True, False)\""})
write(tmp .. "/r3/GEMM.csv", g .. "\n") -- no rows: the sheet is skipped
ok, code, err, dir = compare({"r1", "r2"}, "--sheets roofline", "roofline")
if T.check(ok, "roofline: " .. err) then
  T.eq(slurp(dir .. "/GEMM_intersect_r2.csv"), lines {
    "name,param: B,param: M,Kernel Time (µs)_sum__r2_diff,Kernel Time (µs)_sum__r2_pct," ..
      "Kernel Time (µs)_mean__r2_diff,Kernel Time (µs)_mean__r2_pct,name_count__r2_diff,name_count__r2_pct," ..
      "TFLOPS/s_mean__r2_diff,TFLOPS/s_mean__r2_pct,TB/s_mean__r2_diff,TB/s_mean__r2_pct," ..
      "r1::GFLOPS_first,r1::Kernel Time (µs)_sum,r1::Kernel Time (µs)_mean,r1::name_count,r1::TFLOPS/s_mean," ..
      "r1::TB/s_mean,r2::Kernel Time (µs)_sum,r2::Kernel Time (µs)_mean,r2::name_count,r2::TFLOPS/s_mean," ..
      "r2::TB/s_mean,r2::param: transpose",
    "aten::mm,1,64,10.0,100.0,5.0,100.0,0,0.0,-50.0,-50.0,-0.5,-50.0,2.0,10.0,5.0,2,100.0,1.0,20.0,10.0,2,50.0," ..
      "0.5,\"(True, False)\"",
  }, "roofline: GEMM_intersect (GFLOPS_first only from the baseline)")
  T.eq(slurp(dir .. "/GEMM_only_baseline_r2.csv"), "\n", "roofline: empty only_baseline")
end
ok, code, err, dir = compare({"r1", "r3"}, "--sheets roofline", "roofline_empty")
T.check(ok, "roofline with an empty sheet: " .. err)
T.check(not T.file_exists(dir .. "/GEMM_intersect_r3.csv"), "a roofline sheet without rows somewhere is skipped")

-- 6. the CSV reader: quoting, NA strings, numbers, booleans, duplicate names
write(tmp .. "/c1/gpu_timeline.csv", "\xEF\xBB\xBFtype,time ms,flag,note,note,\r\n" ..
  "\"q,\"\"x\"\"\ny\",1e3,True,None,n/a,1\r\n" ..
  "\r\n" ..
  "  \n" ..
  "plain,-inf,False,#N/A,text,2\r\n")
write(tmp .. "/c2/gpu_timeline.csv", "type,time ms\nplain,1\n")
ok, code, err, dir = compare({"c1", "c2"}, "--sheets gpu_timeline", "reader")
if T.check(ok, "reader: " .. err) then
  T.eq(slurp(dir .. "/gpu_timeline.csv"), lines {
    "type,time ms__c2_diff,time ms__c2_pct,c1::time ms,c1::flag,c1::note,c1::note.1,c1::Unnamed: 5,c2::time ms",
    "plain,inf,,-inf,False,,text,2,1.0",            -- inf / -inf: no pct
    "\"q,\"\"x\"\"\ny\",,,1000.0,True,,,1,",
  }, "reader: gpu_timeline.csv")
end

-- 7. bad input: exit 1, one line naming the file (and line), nothing written
local function expect_error(name, dirs, opts, pattern)
  local ok2, code2, err2, _, out = compare(dirs, opts, name)
  T.check(not ok2 and code2 == 1, name .. ": exit " .. tostring(code2) .. ", expected 1")
  local n = select(2, err2:gsub("\n", ""))
  T.eq(n, 1, name .. ": one line on stderr (" .. err2 .. ")")
  T.check(err2:find(pattern, 1, true) ~= nil, name .. ": stderr has '" .. pattern .. "': " .. err2)
  T.check(not T.dir_exists(out) and not T.file_exists(out), name .. ": nothing written")
end
write(tmp .. "/bad_quote/gpu_timeline.csv", lines {"type,time ms", "a,1", "\"b,2", "c,3"})
expect_error("quote", {"bad_quote", "c2"}, "--sheets gpu_timeline",
  "bad_quote/gpu_timeline.csv: line 3: the quoted field opened here never ends")
write(tmp .. "/bad_fields/gpu_timeline.csv", lines {"type,time ms", "a,1", "b,2,3"})
expect_error("fields", {"c2", "bad_fields"}, "--sheets gpu_timeline",
  "bad_fields/gpu_timeline.csv: line 3: expected 2 fields (as the header), saw 3")
write(tmp .. "/bad_utf8/gpu_timeline.csv", "type,time ms\na,1\n\xff\xfe,2\n")
expect_error("utf8", {"c2", "bad_utf8"}, "--sheets gpu_timeline", "bad_utf8/gpu_timeline.csv: line 3: byte 0xFF")
write(tmp .. "/bad_utf8b/gpu_timeline.csv", "type,time ms\n\xc2\xb5s,1\nx\xf8\x80\x80,2\n") -- µ is fine, 0xF8 never is
expect_error("utf8 lead", {"c2", "bad_utf8b"}, "--sheets gpu_timeline", "bad_utf8b/gpu_timeline.csv: line 3: byte 0xF8")
write(tmp .. "/bad_key/gpu_timeline.csv", lines {"kind,time ms", "a,1"})
expect_error("key", {"c2", "bad_key"}, "--sheets gpu_timeline",
  "bad_key/gpu_timeline.csv: no column 'type' (a join key of the gpu_timeline comparison)")
write(tmp .. "/bad_num/gpu_timeline.csv", lines {"type,time ms", "a,fast"})
expect_error("numbers", {"c2", "bad_num"}, "--sheets gpu_timeline",
  "bad_num/gpu_timeline.csv: expected numbers in column 'time ms'")
write(tmp .. "/empty/gpu_timeline.csv", "")
expect_error("empty file", {"c2", "empty"}, "--sheets gpu_timeline", "empty/gpu_timeline.csv: no column 'type'")
expect_error("missing sheet", {"c2", "u1"}, "--sheets gpu_timeline", "u1: no gpu_timeline.csv in this report")
expect_error("missing ops sheet", {"u1", "c2"}, "--sheets ops_all", "no ops_unique_args.csv in this report")
expect_error("no report", {"c2", "nope"}, "", "nope: cannot open: No such file or directory")
write(tmp .. "/book.xlsx", "PK")
expect_error("xlsx", {"c2", "book.xlsx"}, "", "book.xlsx: not a zip archive: expected an .xlsx workbook")
expect_error("same tags", {"c2", "c2"}, "--sheets gpu_timeline", "have the same tag 'c2': pass unique --names")
expect_error("ops_summary absent", {"c2", "c2"}, "--names a b", "c2: no ops_summary.csv in this report")

T.rmrf(tmp)
T.finish()

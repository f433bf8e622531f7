-- The kernel fusion section of a comparative analysis.md (the MoE case of
-- the shared agent cases): every kernel name in the kernel tables is written
-- the same way (a code span, template arguments as written, whether or not
-- they read as an HTML tag), and a kernel the classifier does not know is
-- "Unknown" in the Insight's composition as in the table's Type column, and
-- the pattern name says "Elementwise" once.
local root, shared = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local case = shared .. "/agent_cases/comparative/test01_moe_fused_vs_unfused"
if not T.file_exists(case .. "/trace1.json") then T.skip("no " .. case) end

local bin = T.tracelens_bin()
local tmp = T.tmpdir()
local out = tmp .. "/moe"
local ok, code, stdout, stderr = T.run(string.format("%s run orchestrator.lua %s --compare %s -o %s -q", T.q(bin),
  T.q(case .. "/trace1.json"), T.q(case .. "/trace2.json"), T.q(out)))
T.check(ok, "orchestrator exit " .. tostring(code) .. "\n" .. stdout .. stderr)

for _, file in ipairs({ out .. "/analysis.md", out .. "/system_findings/kernel_fusion_findings.md" }) do
  local s = T.read_file(file) or ""
  local what = file:sub(#out + 2)
  T.check(not s:find("&lt;", 1, true), what .. ": no entity in a kernel name")
  for _, name in ipairs({ "moe_sorting_kernel<BF16>", "ck_moe_stage1_kernel<BF16, 128, 128>",
    "ck_moe_stage2_kernel<BF16, 128, 128>", "moe_sum_kernel<BF16>", "triton__moe_fused_kernel_0d1d2d3d4d5d6d7d8d9d10d" }) do
    T.check(s:find("| `" .. name .. "` | Unknown |", 1, true), what .. ": kernel row for " .. name)
  end
  T.check(s:find("launches 4 separate GPU kernels per instance (4 Unknown)", 1, true),
    what .. ": the Insight calls the unclassified kernels Unknown, as the table does")
  T.check(not s:find("(4 Elementwise)", 1, true), what .. ": no Elementwise for unclassified kernels")
  T.check(s:find("Trace 2 runs the same module with 1 kernel.", 1, true), what .. ": 1 kernel, singular")
  T.check(s:find("P1: Unfused Elementwise Sequence (1.16 ms, 1 instance)", 1, true)
    and not s:find("Elementwise Elementwise", 1, true), what .. ": the pattern names Elementwise once")
end

T.rmrf(tmp)
T.finish()

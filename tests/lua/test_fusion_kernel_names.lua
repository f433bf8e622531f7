-- The comparative analysis.md of the MoE case of the shared agent cases
-- (trace 1: AITER's moe_sorting 120 µs, ck_moe_stage1 480 µs, ck_moe_stage2
-- 480 µs and moe_sum 80 µs under `moe_layer`; trace 2: one fused Triton
-- kernel of 800 µs under `moe_layer`):
-- - every kernel name in the kernel tables is written the same way (a code
--   span, template arguments as written, whether or not they read as an HTML
--   tag);
-- - a kernel the classifier does not type is typed by what its name shows,
--   in the Insight's composition as in the table's Type column (the MoE
--   stages: MoE Sorting, MoE GEMM, MoE Sum), and "Unknown" when its name
--   shows nothing either (the fused Triton kernel); the MoE GEMMs make the
--   card a mixture-of-experts card, not an elementwise one;
-- - each AITER operation is compared with the region's whole 800 µs, so none
--   is slower on its own, while `moe_layer` takes 1160 µs against 800 µs:
--   the Compute section says so instead of "within target".
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
  for _, row in ipairs({ { "moe_sorting_kernel<BF16>", "MoE Sorting", "120.0" },
    { "ck_moe_stage1_kernel<BF16, 128, 128>", "MoE GEMM", "480.0" }, { "ck_moe_stage2_kernel<BF16, 128, 128>", "MoE GEMM",
      "480.0" }, { "moe_sum_kernel<BF16>", "MoE Sum", "80.0" },
    { "triton__moe_fused_kernel_0d1d2d3d4d5d6d7d8d9d10d", "Unknown", "800.0" } }) do
    T.check(s:find("| `" .. row[1] .. "` | " .. row[2] .. " | " .. row[3] .. " |", 1, true),
      what .. ": kernel row for " .. row[1])
  end
  T.check(s:find("launches 4 separate GPU kernels per instance (1 MoE Sorting, 2 MoE GEMM, 1 MoE Sum)", 1, true),
    what .. ": the Insight types the kernels as the table does")
  T.check(s:find("Trace 2 runs the same module with 1 kernel.", 1, true), what .. ": 1 kernel, singular")
  -- 120 + 480 + 480 + 80 µs = 1.16 ms
  T.check(s:find("P1: Unfused Mixture-of-Experts (1.16 ms, 1 instance)", 1, true), what .. ": the MoE pattern")
  T.check(s:find("Replace the 4 kernels of `moe_layer` with one fused MoE kernel", 1, true), what .. ": the MoE action")
  T.check(not s:find("Elementwise", 1, true) and not s:find("elementwise kernels", 1, true),
    what .. ": no elementwise card for MoE GEMMs")
  T.check(s:find("no kernel typed as a GEMM or convolution (the kernel classifier gives its 2 MoE GEMM kernels no type)",
    1, true) and not s:find("no matrix kernels", 1, true), what .. ": the fusion pattern does not deny the GEMMs")
end

-- The Compute section and its Detailed Analysis mirror: no "within target"
-- verdict. 1160 µs against 800 µs: a 360 µs gap, 45.0% of trace 2's time.
local s = T.read_file(out .. "/analysis.md") or ""
T.check(not s:find("within target", 1, true), "analysis.md: no within-target verdict")
local verdict = "No compute kernel finding reaches the reporting threshold, but that does not mean that every category "
  .. "keeps up with Trace 2. TraceDiff aligns `moe_layer` of the two traces as one region, which holds 4 operation "
  .. "signatures of Trace 1 (`aiter::ck_moe_stage1`, `aiter::ck_moe_stage2`, `aiter::moe_sorting_fwd`, "
  .. "`aiter::moe_sum`), and each of them is compared with the region's whole Trace 2 time (0.80 ms), so none can show "
  .. "as slower on its own. The region as a whole takes 1.16 ms in Trace 1 against 0.80 ms in Trace 2, so Trace 1 is "
  .. "0.36 ms (45.0%) slower there (Kernel Fusion Opportunities, P1, compares it as a whole)."
local n = 0
for _ in s:gmatch(verdict:gsub("%p", "%%%0")) do n = n + 1 end
T.eq(n, 2, "analysis.md: the region's gap in the Compute section and in Compute Kernel Insights")

T.rmrf(tmp)
T.finish()

-- What a comparative analysis.md says about kernel fusion when the
-- comparative fusion analysis (work Trace 1 runs as separate kernels that
-- Trace 2 fuses) finds nothing: that, not "no fusion opportunity", and
-- Trace 1's own candidates as its standalone analysis reports them.
--
-- Qwen1.5 H100 vs MI300X, both orders: both traces run the same unfused
-- RMSNorm, RoPE and SwiGLU chains, so the comparative analysis finds no
-- difference, and each trace's standalone analysis reports three candidates
-- (impact order on both: RMSNorm, RoPE, SwiGLU). Their kernel times, summed
-- by a script over the trace (the `kernel` events whose launch call lies
-- inside an `nn.Module: Qwen2RMSNorm_N` / `nn.Module: Qwen2MLP_N` /
-- `modeling_qwen2.py(68): apply_rotary_pos_emb` event of its thread):
--   H100:   RMSNorm 7.378 ms (49 instances), RoPE 6.952 ms (24), SwiGLU 7.983 ms (24)
--   MI300X: RMSNorm 5.674 ms (49),           RoPE 4.523 ms (24), SwiGLU 9.370 ms (24)
-- The agent case test03 (trace 1 runs one flash-attention kernel, trace 2
-- the unfused GEMM, softmax, GEMM): no candidate either way round, and the
-- report must not claim the traces have no fusion difference at all.
local root, shared = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local h100 = shared .. "/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
local mi300 = shared .. "/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
local case = shared .. "/agent_cases/comparative/test03_attention_fused_vs_unfused"
if not T.file_exists(h100) or not T.file_exists(mi300) then T.skip("no Qwen traces under " .. shared) end

local bin = T.tracelens_bin()
local tmp = T.tmpdir()

local function analyse(name, t1, t2)
  local out = tmp .. "/" .. name
  local ok, code, so, se = T.run(string.format("%s run orchestrator.lua %s --compare %s -o %s -q", T.q(bin), T.q(t1),
    T.q(t2), T.q(out)))
  T.check(ok, name .. ": orchestrator exit " .. tostring(code) .. "\n" .. so .. se)
  return T.read_file(out .. "/analysis.md") or ""
end

local NONE = "The comparative kernel fusion analysis found no work that Trace 1 runs as separate kernels and Trace 2 "
  .. "runs as fewer, fused ones (the only fusion difference it looks for)."

local function count(s, text)
  local n, at = 0, 1
  while true do
    local i = s:find(text, at, true)
    if not i then return n end
    n, at = n + 1, i + #text
  end
end

local function own(rms, rope, swiglu)
  return "The standalone fusion analysis of Trace 1 proposes 3 candidates, largest impact first: Unfused RMSNorm "
    .. "(`Qwen2RMSNorm`, " .. rms .. " ms of kernel time over 49 instances), Unfused RoPE "
    .. "(`modeling_qwen2.py(68): apply_rotary_pos_emb`, " .. rope .. " ms of kernel time over 24 instances) and "
    .. "Unfused SwiGLU (`Qwen2MLP`, " .. swiglu .. " ms of kernel time over 24 instances); the standalone analysis "
    .. "of Trace 1 gives their cards and impact estimates."
end

for _, c in ipairs({ { "h100_vs_mi300", h100, mi300, own("7.378", "6.952", "7.983") },
  { "mi300_vs_h100", mi300, h100, own("5.674", "4.523", "9.37") } }) do
  local s = analyse(c[1], c[2], c[3])
  T.check(not s:find("No kernel fusion opportunit", 1, true), c[1] .. ": no claim that there is no fusion opportunity")
  T.eq(count(s, NONE .. " " .. c[4]), 2, c[1] .. ": the Executive Summary and the fusion section name trace 1's own "
    .. "candidates")
  T.check(not s:find("the kernel fusion analysis proposes no candidate", 1, true),
    c[1] .. ": no card says the fusion analysis has no candidate")
end

-- a compute card's fusion advice in comparative mode (MI300X first: `aten::add`
-- in Qwen2RMSNorm) says which analysis proposes nothing, and why
local s = T.read_file(tmp .. "/mi300_vs_h100/analysis.md") or ""
T.check(s:find("(`torch.compile` fuses such chains); the comparative kernel fusion analysis, which looks only for "
  .. "work that Trace 2 fuses and Trace 1 does not, proposes no candidate that covers it (fusion within Trace 1 is "
  .. "what the standalone analysis of Trace 1 reports).", 1, true), "mi300_vs_h100: the card's fusion advice")

if T.file_exists(case .. "/trace1.json") then
  local t = analyse("test03", case .. "/trace1.json", case .. "/trace2.json")
  T.eq(count(t, NONE .. " The standalone fusion analysis of Trace 1 proposes no candidate either."), 2,
    "test03: nothing found, in either analysis")
  T.check(not t:find("no fusion difference between the traces", 1, true),
    "test03: trace 2 runs unfused what trace 1 fuses: not 'no fusion difference'")
end

T.rmrf(tmp)
T.finish()

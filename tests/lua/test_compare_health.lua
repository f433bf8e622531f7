-- The Warnings of a comparative analysis.md cover both traces: the trace
-- health check (tracelens.health) of each, every row led by its trace.
-- Qwen1.5 H100 vs MI300X: both traces hold GPU work launched before the
-- trace (GPU events with no launch call, starting before the trace's first
-- launch call), counted by a script over each trace:
--   H100:   509 events, 13.742 ms of 45.647 ms of GPU time (30.1%)
--   MI300X: 463 events, 13.319 ms of 43.063 ms of GPU time (30.9%)
-- Before, only trace 1's warning was written.
local root, shared = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local h100 = shared .. "/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
local mi300 = shared .. "/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
if not T.file_exists(h100) or not T.file_exists(mi300) then T.skip("no Qwen traces under " .. shared) end

local bin = T.tracelens_bin()
local tmp = T.tmpdir()

local ROW = "- %s: **GPU work launched before the trace** (warning): %s GPU events (%s ms, %s of all GPU event time) start "
  .. "before the trace's first launch call"
local H = { "Trace 1 (H100)", "Trace 2 (H100)", "509", "13.7", "30.1%" }
local M = { "Trace 1 (MI300X)", "Trace 2 (MI300X)", "463", "13.3", "30.9%" }

for _, c in ipairs({ { "h100_vs_mi300", h100, mi300, H, M }, { "mi300_vs_h100", mi300, h100, M, H } }) do
  local out = tmp .. "/" .. c[1]
  local ok, code, so, se = T.run(string.format("%s run orchestrator.lua %s --compare %s -o %s -q", T.q(bin),
    T.q(c[2]), T.q(c[3]), T.q(out)))
  T.check(ok, c[1] .. ": orchestrator exit " .. tostring(code) .. "\n" .. so .. se)
  local s = T.read_file(out .. "/analysis.md") or ""
  local one, two = c[4], c[5]
  local r1 = string.format(ROW, one[1], one[3], one[4], one[5])
  local r2 = string.format(ROW, two[2], two[3], two[4], two[5])
  local i1, i2 = s:find(r1, 1, true), s:find(r2, 1, true)
  T.check(i1 ~= nil, c[1] .. ": trace 1's warning, named\n" .. r1)
  T.check(i2 ~= nil, c[1] .. ": trace 2's warning, named\n" .. r2)
  T.check(i1 and i2 and i1 < i2, c[1] .. ": trace 1's first")
  T.check(s:find("**Trace health** (`tracelens check TRACE` gives the full list for each trace)", 1, true),
    c[1] .. ": the lead-in speaks of each trace")
end

T.rmrf(tmp)
T.finish()

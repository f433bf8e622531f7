-- The analysis of every agent case against the reference report: standalone
-- (../shared/data/agent_cases/standalone/<case>/trace.json) and comparative
-- (.../comparative/<case>/trace1.json --compare trace2.json): the compute and
-- fusion P-item markers (category, low, mid, high), the Top Operations rows,
-- the Executive Summary metrics (both traces' columns when comparative), and
-- `tracelens validate` passing.
-- Numbers shown rounded are compared within one unit of the reference's last
-- shown digit (its prose was written by a language model that rounded freely).
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local P = require "report_parse"

if not tl.fs.listdir(shared .. "/agent_cases/standalone") then T.skip("no shared data at " .. shared .. "/agent_cases") end

local read = tl.fs.read_file

local function close_to(ours, ref_cell, what)
  if ours ~= nil and ours == ref_cell then return T.check(true, what) end -- e.g. both "—"
  local r, unit = P.number(ref_cell)
  local o = P.number(ours)
  return T.check(r ~= nil and o ~= nil and math.abs(o - r) <= unit * 1.0001 + 1e-9,
    string.format("%s: ours %s, reference %s", what, tostring(ours), tostring(ref_cell)))
end

local function same_markers(ours, ref, what, keys)
  T.eq(#ours, #ref, what .. ": number of P-items")
  for i = 1, math.min(#ours, #ref) do
    for _, k in ipairs(keys) do
      if k == "category" then
        T.eq(ours[i][k], ref[i][k], string.format("%s P%d %s", what, i, k))
      else
        close_to(ours[i][k], ref[i][k], string.format("%s P%d %s", what, i, k))
      end
    end
  end
end

-- Cases whose reference shares of compute time add up to more than 100% (kernels
-- overlapping in time: its whole is the GPU's busy time), listed in
-- tests/golden/deviations.tsv as `agent_cases/<case>  analysis.md  % of Compute Time`:
-- the expected share is then of the categories' kernel time (FIX shares,
-- docs/compat.md), computed from the reference's own Time column.
local share_fix = {}
for line in io.lines(root .. "/tests/golden/deviations.tsv") do
  local trace, sheet, col = line:match("^([^\t#]*)\t([^\t]*)\t([^\t]*)\t")
  if sheet == "analysis.md" and col == "% of Compute Time" then share_fix[trace:match("[^/]+$")] = true end
end
-- Cases where the reference names trace 2's top category in lower case (its
-- enhanced name, `gemm`), listed as `agent_cases/<case>  analysis.md  Top
-- Bottleneck Category`: tracelens prints the display name (FIX names, docs/compat.md).
local name_fix = {}
for line in io.lines(root .. "/tests/golden/deviations.tsv") do
  local trace, sheet, col = line:match("^([^\t#]*)\t([^\t]*)\t([^\t]*)\t")
  if sheet == "analysis.md" and col == "Top Bottleneck Category" then name_fix[trace:match("[^/]+$")] = true end
end

local function fixed_shares(ref)
  local rows, sum, out = P.top_ops(ref), 0, {}
  for _, r in ipairs(rows) do sum = sum + (P.number(r.cells[3]) or 0) end
  for i, r in ipairs(rows) do out[i] = string.format("%.1f%%", (P.number(r.cells[3]) or 0) / sum * 100) end
  return out
end

local function exec_summary(case, ours, ref, col)
  local em, rm = P.exec_metrics(ours, col), P.exec_metrics(ref, col)
  for _, k in ipairs({ "Total Time", "Compute %", "Idle %", "Exposed Communication %" }) do
    close_to(em[k], rm[k], case .. " exec " .. k .. " (column " .. col .. ")")
  end
  local ocat = tostring(em["Top Bottleneck Category"]):match("^(.-)%s*%(")
  local rcat = tostring(rm["Top Bottleneck Category"]):match("^(.-)%s*%(")
  if name_fix[case] and col == 3 then
    T.check(ocat and rcat and ocat:lower() == rcat:lower() and ocat ~= rcat,
      string.format("%s exec top bottleneck category (column 3): the display name of %s, got %s", case, tostring(rcat),
        tostring(ocat)))
  else
    T.eq(ocat, rcat, case .. " exec top bottleneck category (column " .. col .. ")")
  end
  local rshare = tostring(rm["Top Bottleneck Category"]):match("%((.-)%)")
  if share_fix[case] and col == 2 then rshare = fixed_shares(ref)[1] end
  close_to(tostring(em["Top Bottleneck Category"]):match("%((.-)%)"), rshare,
    case .. " exec top bottleneck share (column " .. col .. ")")
end

local tmp = T.tmpdir()
local runs = {}
for _, scope in ipairs({ "standalone", "comparative" }) do
  local cases_dir = shared .. "/agent_cases/" .. scope
  for _, case in ipairs(tl.fs.listdir(cases_dir) or {}) do
    local dir = cases_dir .. "/" .. case
    local traces = scope == "standalone" and T.q(dir .. "/trace.json")
      or T.q(dir .. "/trace1.json") .. " --compare " .. T.q(dir .. "/trace2.json") .. " --platform2 H100"
    runs[#runs + 1] = { case = case, dir = dir, scope = scope, traces = traces }
  end
end
for _, r in ipairs(runs) do
  local case, dir = r.case, r.dir
  local ref = read(dir .. "/ref/analysis.md")
  if ref then
    local out = tmp .. "/" .. case
    local ok, code, stdout, stderr = T.run(string.format("%s run orchestrator.lua %s -o %s --platform MI300X --no-rules -q",
      T.q(bin), r.traces, T.q(out)))
    T.check(ok, case .. ": orchestrator exit " .. tostring(code) .. "\n" .. stdout .. stderr)
    local ours = read(out .. "/analysis.md") or ""
    -- Executive Summary (comparative: trace 1 and trace 2 columns)
    exec_summary(case, ours, ref, 2)
    if r.scope == "comparative" then exec_summary(case, ours, ref, 3) end
    -- P-items
    same_markers(P.markers(P.section(ours, "Compute Kernel Optimizations"), "p_item"),
      P.markers(P.section(ref, "Compute Kernel Optimizations"), "p_item"), case .. " compute",
      { "category", "low", "mid", "high" })
    same_markers(P.markers(P.section(ours, "Kernel Fusion Opportunities"), "p_item"),
      P.markers(P.section(ref, "Kernel Fusion Opportunities"), "p_item"), case .. " fusion", { "low", "mid", "high" })
    -- Top Operations
    local ot, rt = P.top_ops(ours), P.top_ops(ref)
    T.eq(#ot, #rt, case .. " top ops rows")
    local fixed = share_fix[case] and fixed_shares(ref)
    for i = 1, math.min(#ot, #rt) do
      local o, rr = ot[i].cells, rt[i].cells
      if fixed then
        rr = { table.unpack(rr) }
        rr[r.scope == "comparative" and 5 or 4] = fixed[i]
      end
      T.eq(o[1], rr[1], case .. " top ops rank " .. i)
      T.eq(tostring(o[2]):lower(), tostring(rr[2]):lower(), case .. " top ops category " .. i)
      -- standalone: Time, % of Compute, Ops; comparative: T1 Time, T2 Time, % of Compute, Ops, Difference
      local numeric = r.scope == "comparative" and { 3, 4, 5, 7 } or { 3, 4 }
      for _, c in ipairs(numeric) do close_to(o[c], rr[c], case .. " top ops column " .. c .. " row " .. i) end
      local ops_col = r.scope == "comparative" and 6 or 5
      T.eq(o[ops_col], rr[ops_col], case .. " top ops count " .. i)
      T.eq(ot[i].low, rt[i].low, case .. " top ops low " .. i)
      T.eq(ot[i].high, rt[i].high, case .. " top ops high " .. i)
    end
    -- the report passes the structural checks
    local vok, vcode, vout, verr = T.run(string.format("%s validate %s", T.q(bin), T.q(out)))
    T.check(vok, case .. ": tracelens validate exit " .. tostring(vcode) .. "\n" .. vout .. verr)
  end
end
T.rmrf(tmp)
T.finish()

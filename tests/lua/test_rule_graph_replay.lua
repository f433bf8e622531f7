-- The shipped rule many_small_launches counts launches, and kernels a graph
-- launch replays are not launches: one cudaGraphLaunch submits the whole
-- graph, whose kernels run as its nodes (the loop already is a GPU graph).
-- A decode loop of graph replays (/tmp/rv/cap graph_decode) showed one
-- "Operation launched 288 times with kernels under 10 µs" card per replayed
-- kernel ("Batch the repeated calls ... or capture the loop in a GPU graph"),
-- each a second card for an op the `other` category already had.
--   1. a built trace of graph launches replaying short kernels: the rule
--      selects nothing;
--   2. a built trace of one op launched 150 times, 4 µs each: flagged, with
--      the count and time computed by hand; its category (`other`) has a
--      card for the same op, and the executive summary counts the two apart;
--   3. rule.graph_replayed on a trace merged with its capture traces: the
--      captured ops grafted under graph launches (UIDs past the replay's own
--      events, docs/lua-api.md) are replayed, the others not.
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local json = require "tracelens.json"
local rule = require "tracelens.rule"

local tmp = T.tmpdir()
local ev, flow = T.x_event, T.flow_event

local function analyse(path, name)
  local out = tmp .. "/" .. name
  local ok, code, so, se = T.run(string.format("cd %s && %s run orchestrator.lua %s --platform H100 -q -o %s",
    T.q(root), T.q(bin), T.q(path), T.q(out)))
  T.check(ok, name .. ": orchestrator exit " .. tostring(code) .. "\n" .. so .. se)
  local m = json.decode(T.read_file(out .. "/category_data/many_small_launches_metrics.json") or "{}")
  return T.read_file(out .. "/analysis.md") or "", m
end

-- 1. Graph replays --------------------------------------------------------------
-- 120 cudaGraphLaunch calls (no CPU op above them), each replaying three
-- kernels of 3, 4 and 5 µs 0.6 µs apart: three synthetic ops of 120 replays
-- each, averaging under 10 µs, which are no launches of their own.
local LAUNCHES = 120
local KERNELS = { { "graph_small_norm_kernel", 3 }, { "graph_small_gemv_kernel", 4 }, { "graph_small_act_kernel", 5 } }
do
  -- one eager op first (a trace without CPU ops has no unified_perf_summary)
  local events, corr = {
    ev("cpu_op", "aten::argmax", 10, 20),
    ev("cuda_runtime", "cudaLaunchKernel", 12, 5, { correlation = "100000" }),
    flow("s", 100000, 1, 1, 12),
    ev("kernel", "argmax_kernel", 40, 15, { correlation = "100000", stream = "7" }, 0, 7),
    flow("f", 100000, 0, 7, 40),
  }, 0
  for i = 0, LAUNCHES - 1 do
    local ts = 100 + i * 40
    corr = corr + 1
    events[#events + 1] = ev("cuda_runtime", "cudaGraphLaunch", ts, 10, { correlation = tostring(corr) })
    events[#events + 1] = flow("s", corr, 1, 1, ts)
    -- as Kineto writes a replay: every kernel carries the launch's correlation and an ac2g "f"
    local gts = ts + 12
    for _, k in ipairs(KERNELS) do
      events[#events + 1] = string.format('{"ph":"X","cat":"kernel","name":%q,"pid":0,"tid":7,"ts":%.1f,"dur":%d,'
        .. '"args":{"correlation":%d,"stream":7}}', k[1], gts, k[2], corr)
      events[#events + 1] = string.format('{"ph":"f","cat":"ac2g","name":"ac2g","id":%d,"pid":0,"tid":7,"ts":%.1f,'
        .. '"bp":"e"}', corr, gts)
      gts = gts + k[2] + 0.6
    end
  end
  local path = T.write_trace(tmp .. "/graph.json", events)
  local md, m = analyse(path, "graph")
  -- the synthetic ops are there, replayed 120 times each with kernels under 10 µs
  local short = 0
  for _, r in ipairs(T.csv_records(tmp .. "/graph/perf_report_csvs/unified_perf_summary.csv")) do
    if r.name:find("^cudaGraphLaunch%->graph_small_") and tonumber(r.operation_count) == LAUNCHES
        and tonumber(r["Kernel Time (µs)_mean"]) < 10 then
      short = short + 1
    end
  end
  T.eq(short, #KERNELS, "graph: one synthetic op per replayed kernel, 120 replays of under 10 µs each")
  T.eq(m.operation_count, 0, "graph: the rule selects no replayed kernel")
  T.eq(#(m.category_findings or {}), 0, "graph: no many_small_launches finding")
  T.check(not md:find("Operation launched", 1, true), "graph: no \"Operation launched N times\" card")
  T.check(not md:find("category=many_small_launches", 1, true), "graph: no card of the rule")
end

-- 2. Real small launches ----------------------------------------------------------
-- 150 calls of one op, each launching one 4 µs kernel (cudaLaunchKernel): 150
-- launches, 0.6 ms of kernel time, still flagged.
local CALLS, DUR = 150, 4
do
  local events = {}
  for i = 0, CALLS - 1 do
    local ts, corr = 100 + i * 20, i + 1
    events[#events + 1] = ev("cpu_op", "myext::small_op", ts, 12)
    events[#events + 1] = ev("cuda_runtime", "cudaLaunchKernel", ts + 2, 6, { correlation = tostring(corr) })
    events[#events + 1] = flow("s", corr, 1, 1, ts + 2)
    events[#events + 1] = ev("kernel", "myext_small_kernel", ts + 10, DUR, { correlation = tostring(corr), stream = "7" },
      0, 7)
    events[#events + 1] = flow("f", corr, 0, 7, ts + 10)
  end
  local path = T.write_trace(tmp .. "/eager.json", events)
  local md, m = analyse(path, "eager")
  local ops = m.operations or {}
  T.eq(#ops, 1, "eager: the rule selects the one op")
  if ops[1] then
    T.eq(ops[1].name, "myext::small_op", "eager: the op")
    T.eq(ops[1].count, CALLS, "eager: launched 150 times")
    T.close(ops[1].time_ms, CALLS * DUR / 1000, "eager: 0.6 ms of kernel time", 0, 1e-9)
  end
  T.check(#(m.category_findings or {}) >= 1, "eager: a many_small_launches finding")
  T.check(md:find("Operation launched " .. CALLS .. " times with kernels under 10 µs", 1, true),
    "eager: the rule's card in analysis.md")
  -- the op is also the one op of its category (`other`), whose card judges the same 0.6 ms: the
  -- executive summary counts the rule's finding apart from the category's
  T.check(md:find("%*%*Impact%*%*") and md:find("category=other ", 1, true), "eager: the category's card too")
  T.check(md:find("The per-category analysis gives 1 compute finding, and the rules 1 more about operations that "
    .. "are also in their own categories", 1, true), "eager: the rule's finding counted apart")
end

-- 3. A trace merged with its capture traces ----------------------------------------
local DIR = shared .. "/inference/vllm_decode_full"
local trace_path, folder = DIR .. "/graph_execution.json.gz", DIR .. "/capture_traces"
if T.file_exists(trace_path) and T.file_exists(folder .. "/execution_details.json") then
  local plain = tl.load(trace_path)
  local merged = tl.load(trace_path, { capture_folder = folder, write_execution_details = false })
  local replayed = rule.graph_replayed({ trace = merged })
  local grafted, eager = 0, 0
  for _, r in merged:table("unified_perf_summary"):rows() do
    local synthetic = r.name:find(" (Synthetic Op)", 1, true) ~= nil
    -- grafted copies get the UIDs after the replay's own events
    local want = not synthetic and r.ex_UID >= #plain
    if want then grafted = grafted + 1 elseif not synthetic then eager = eager + 1 end
    T.eq(replayed(r), want, "merged: " .. r.name .. " (ex_UID " .. r.ex_UID .. ")")
  end
  T.check(grafted > 0 and eager > 0, "merged: captured ops grafted under graph launches, and ops of their own")
  -- the plain trace: the replayed kernels' synthetic ops are named after the graph launch
  local syn = 0
  for _, r in plain:table("unified_perf_summary"):rows() do
    local launcher = r.name:match("^(.-)%->.* %(Synthetic Op%)$")
    T.eq(rule.graph_replayed({ trace = plain })(r), launcher == "hipGraphLaunch", "plain: " .. r.name)
    if launcher == "hipGraphLaunch" then syn = syn + 1 end
  end
  T.check(syn > 0, "plain: synthetic ops of the graph launches")
else
  print("SKIP: " .. DIR .. " not found")
end

T.rmrf(tmp)
T.finish()

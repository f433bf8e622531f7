-- The bundled example trace against the ground truth its generator computed
-- independently: exact timeline (ns), every kernel's launcher, fwd/bwd links.
local root = arg[1]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local cjson = require "cjson"

local f = assert(io.open(root .. "/examples/demo_trace.truth.json"))
local truth = cjson.decode(f:read("a"))
f:close()

local trace = tl.load(root .. "/examples/demo_trace.json")
local info = trace:info()
T.eq(info.num_events, truth.num_events, "num_events")
T.eq(info.num_gpu_events, truth.num_gpu_events, "num_gpu_events")
T.eq(info.categories.kernel, truth.num_kernels, "kernels")
T.eq(info.num_linked_gpu_events, truth.num_gpu_events, "all GPU events linked")
T.eq(info.discarded_events, 0, "no bleed discards")

local tlv = trace:timeline()
for k, ns in pairs(truth.gpu_timeline_ns) do
  -- exact: ns / 1000 is one correctly rounded division on both sides
  T.eq(tlv[k], ns / 1000, "timeline " .. k)
end

-- every non-NCCL GPU event's launcher
local want = {}
for _, kl in ipairs(truth.kernel_launchers) do want[kl.kernel_uid] = kl.launcher end
local n = 0
for _, cat in ipairs({"kernel", "gpu_memcpy", "gpu_memset"}) do
  for ev in trace:events{cat = cat} do
    local l = ev:launcher()
    if want[ev.uid] then
      n = n + 1
      T.eq(l and l.name, want[ev.uid], "launcher of " .. ev.uid .. " " .. ev.name)
    end
  end
end
T.eq(n, #truth.kernel_launchers, "launcher count")

for _, link in ipairs(truth.fwd_bwd_links) do
  local bwd = trace:node(link.bwd_uid)
  local fwd = bwd:fwd()
  T.eq(fwd and fwd.uid, link.fwd_uid, "fwd of " .. link.bwd_name)
  T.eq(trace:node(link.fwd_uid):bwd(), bwd, "bwd of " .. link.fwd_name)
end

-- the same trace with python functions in the tree: same timeline
local tp = tl.load(root .. "/examples/demo_trace.json", {include_call_stack = true})
T.eq(tp:timeline().busy_time, tlv.busy_time, "busy time with call stacks")
-- a cpu_op under an nn.Module python function has that function as an ancestor
local found = false
for ev in tp:events{cat = "cpu_op", name = "aten::addmm"} do
  local p = ev:parent()
  while p do
    if p.cat == "python_function" and p.name:find("^nn%.Module:") then found = true break end
    p = p:parent()
  end
  if found then break end
end
T.check(found, "aten::addmm sits under an nn.Module python function with include_call_stack")
for ev in tp:events{cat = "cpu_op", name = "aten::addmm"} do
  local ms = ev:module_stack()
  T.check(#ms >= 1 and ms[1] ~= "root" and not ms[#ms]:find("_%d+$"), "module stack: " .. table.concat(ms, " > "))
  break
end
T.eq(trace:node(0):module_stack()[1], "root", "module stack without python functions")
-- with call stacks, unified_perf_summary gains entry_point and call_stack_full (§7.6.1)
local u = tp:report{platform = "none"}.unified_perf_summary
local cols = u:columns()
T.eq(cols[#cols - 2], "call_stack_full", "call_stack_full before the percentages")
T.eq(cols[#cols - 3], "entry_point", "entry_point before call_stack_full")
local seen = false
for _, row in u:rows() do
  if row.name == "aten::addmm" then
    seen = true
    T.check(row.call_stack_full:find("'nn.Module: Linear', 'aten::linear', 'aten::addmm', 'nvjet", 1, true),
      "addmm call stack: " .. row.call_stack_full)
    T.check(not row.call_stack_full:find("Linear_0", 1, true), "_N suffixes removed")
  end
end
T.check(seen, "aten::addmm row present")
local plain = trace:report{platform = "none"}.unified_perf_summary:columns()
T.eq(plain[#plain - 2], "has_perf_model", "no call-stack columns without include_call_stack")
T.finish()

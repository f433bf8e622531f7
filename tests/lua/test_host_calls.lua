-- Where the host time of slow operations goes (trace:host_calls(), and the
-- CPU/idle analyzer's card built on it; docs/analyzers.md "CPU/idle").
--   1. A small trace written here: an op whose host time is a 5 ms
--      cudaStreamSynchronize, one whose host time is a 4 ms cudaMalloc, one
--      with a 3 ms cudaLaunchKernel, one under 5x its kernel time (not
--      counted): the figures by kind, checked against the trace as written.
--   2. The shared traces (skipped when absent): trace:host_calls() against
--      the same figures computed here from the events (a Lua walk), and the
--      card: HTA's MI250 toy training step spends its host time in one
--      6.5 ms hipLaunchKernel (not a synchronization: the host-time card
--      with the lazy-loading advice), SGLang's decode step in one 463 ms
--      hipMemcpyWithStream (the synchronization card stays).
local root, shared = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local bin = T.tracelens_bin()
local tmp = T.tmpdir()

-- 1. the small trace: op (cpu_op) > a 10 us kernel launch (linked to its
-- kernel by correlation), then the call that takes the op's host time
local ev, corr = {}, 0
local function op(name, ts, dur, call, call_dur, kernel_dur)
  ev[#ev + 1] = T.x_event("cpu_op", name, ts, dur)
  corr = corr + 1
  ev[#ev + 1] = T.x_event("cuda_runtime", "cudaLaunchKernel", ts + 10, 10, { correlation = tostring(corr) })
  ev[#ev + 1] = T.x_event("kernel", "k_" .. name, ts + dur + 100, kernel_dur,
    { correlation = tostring(corr), stream = "7", device = "0" }, 1, 7)
  if call then ev[#ev + 1] = T.x_event("cuda_runtime", call, ts + 30, call_dur) end
end
op("aten::item", 1000, 5100, "cudaStreamSynchronize", 5000, 10)
op("aten::empty", 10000, 4100, "cudaMalloc", 4000, 20)
op("aten::add", 20000, 3100, "cudaLaunchKernel", 3000, 30)
op("aten::mm", 30000, 200, "cudaMemcpyAsync", 50, 100) -- 200 < 5 x 100: not counted
local small = T.write_trace(tmp .. "/small.json", ev)
local script = tmp .. "/hc.lua"
local f = assert(io.open(script, "w"))
f:write([[
local t = tl.load(arg[1])
local function show(h)
  for _, k in ipairs({ "sync", "copy", "launch", "setup" }) do
    local x = h[k]
    print(k, x.calls, string.format("%.3f", x.us), x.longest or "-", x.longest_op or "-")
  end
end
show(t:host_calls())
-- only the ops of the given names (the analysis' flagged signatures)
show(t:host_calls({ names = { "aten::item", "aten::add", "no::such_op" } }))
print(pcall(t.host_calls, t, { names = { 7 } }))
]])
f:close()
f = assert(io.open(tmp .. "/hc2.lua", "w"))
f:write([[
local t = tl.load(arg[1])
local h = t:host_calls({ names = { "aten::conv2d" } })
for _, k in ipairs({ "launch", "setup" }) do
  print(k, h[k].calls, string.format("%.3f", h[k].us), h[k].longest or "-", h[k].longest_op or "-")
end
]])
f:close()
local ok, code, out, err = T.run(string.format("%s run %s %s", T.q(bin), T.q(script), T.q(small)))
T.check(ok, "host_calls on the small trace: exit " .. tostring(code) .. "\n" .. out .. err)
-- launches: the three 10 us ones of the counted ops and aten::add's 3 ms one
local want = {
  "sync\t1\t5000.000\tcudaStreamSynchronize\taten::item",
  "copy\t0\t0.000\t-\t-",
  "launch\t4\t3030.000\tcudaLaunchKernel\taten::add",
  "setup\t1\t4000.000\tcudaMalloc\taten::empty",
  -- names: aten::empty's allocation and its launch left out
  "sync\t1\t5000.000\tcudaStreamSynchronize\taten::item",
  "copy\t0\t0.000\t-\t-",
  "launch\t3\t3020.000\tcudaLaunchKernel\taten::add",
  "setup\t0\t0.000\t-\t-",
  "false\thost_calls: names[1] is not a string",
}
T.eq(out, table.concat(want, "\n") .. "\n", "host_calls of the small trace")

-- a call inside a child op: alexnet's 6 s cudaFree inside aten::cudnn_convolution, under the flagged
-- aten::conv2d. With names = {aten::conv2d} the child does not count, its parent does: the call is the
-- parent's host time (it was left out, and the card called 12 s of runtime calls "framework and Python code")
ev, corr = {}, 0
ev[#ev + 1] = T.x_event("cpu_op", "aten::conv2d", 1000, 6200)
op("aten::cudnn_convolution", 1050, 6100, "cudaFree", 6000, 10)
local nested = T.write_trace(tmp .. "/nested.json", ev)
ok, code, out, err = T.run(string.format("%s run %s %s", T.q(bin), T.q(script), T.q(nested)))
T.check(ok, "host_calls on the nested trace: exit " .. tostring(code) .. "\n" .. out .. err)
T.check(out:find("setup\t1\t6000.000\tcudaFree\taten::cudnn_convolution\n", 1, true),
  "nested, every op: the child op counts itself: " .. out)
ok, code, out = T.run(string.format("%s run %s %s", T.q(bin), T.q(tmp .. "/hc2.lua"), T.q(nested)))
T.eq(out, "launch\t1\t10.000\tcudaLaunchKernel\taten::conv2d\nsetup\t1\t6000.000\tcudaFree\taten::conv2d\n",
  "nested, names = {aten::conv2d}: the child's calls are the parent's")

-- 2. the shared traces
local function shared_trace(rel)
  local p = (shared or "") .. "/" .. rel
  return T.file_exists(p) and p or nil
end
local toy = shared_trace("hta/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz")
local sglang = shared_trace("inference/sglang_decode/sglang_Qwen3-8B_decode.json.gz")
if not (toy and sglang) then
  T.rmrf(tmp)
  T.skip("no shared traces under " .. tostring(shared))
end

-- the same figures from the events: each runtime call counted under its
-- nearest enclosing cpu_op whose duration is more than 5x its kernels' time
-- (ops that do not count passed: a call inside a child op is part of the
-- counting op's host time)
local check = tmp .. "/walk.lua"
f = assert(io.open(check, "w"))
f:write([[
local t = tl.load(arg[1])
-- an asynchronous copy waits (copy) when its copy is device-to-host or pageable, else it enqueues (launch)
local function waits(e)
  for _, g in ipairs(e:kernels()) do
    local l = g.name:lower()
    if g.cat == "gpu_memcpy" and (l:find("dtoh", 1, true) or l:find("pageable", 1, true)) then return true end
  end
  return false
end
local function kind(n, e)
  local l = n:lower()
  if l:find("synchronize", 1, true) then return "sync" end
  if l:find("memcpy", 1, true) then
    if not l:find("async", 1, true) then return "sync" end
    return waits(e) and "copy" or "launch"
  end
  if l:find("launch", 1, true) or l:find("memset", 1, true) then return "launch" end
  return "setup"
end
local walk = { sync = 0, copy = 0, launch = 0, setup = 0 }
local counts = {}
for _, cat in ipairs({ "cuda_runtime", "cuda_driver" }) do
  for e in t:events({ cat = cat }) do
    local p = e:parent()
    local counted = false
    while p and not counted do
      if p.cat == "cpu_op" then
        local g = 0
        for _, k in ipairs(p:kernels()) do g = g + k.dur_ns end
        counted = g > 0 and p.dur_ns > 5 * g
      end
      if not counted then p = p:parent() end
    end
    if counted then
      local k = kind(e.name, e)
      walk[k] = walk[k] + e.dur_ns
      counts[k] = (counts[k] or 0) + 1
    end
  end
end
local h = t:host_calls()
for _, k in ipairs({ "sync", "copy", "launch", "setup" }) do
  print(k, counts[k] or 0, h[k].calls, walk[k], math.floor(h[k].us * 1000 + 0.5))
end
]])
f:close()
for _, tr in ipairs({ toy, sglang }) do
  ok, code, out, err = T.run(string.format("%s run %s %s", T.q(bin), T.q(check), T.q(tr)))
  T.check(ok, tr .. ": exit " .. tostring(code) .. "\n" .. out .. err)
  for line in out:gmatch("[^\n]+") do
    local k, n1, n2, ns1, ns2 = line:match("^(%a+)\t(%d+)\t(%d+)\t(%d+)\t(%d+)$")
    T.check(k and n1 == n2 and ns1 == ns2, tr .. ": the C figures equal the walk's: " .. line)
  end
end

local function card(tr, name)
  local dir = tmp .. "/" .. name
  local ok2, code2, o, e = T.run(string.format("cd %s && %s run orchestrator.lua %s -o %s -q", T.q(root .. "/lua"),
    T.q(bin), T.q(tr), T.q(dir)))
  T.check(ok2, name .. ": orchestrator exit " .. tostring(code2) .. "\n" .. o .. e)
  return T.read_file(dir .. "/system_findings/cpu_idle_findings.md") or "", T.read_file(dir .. "/analysis.md") or ""
end

local toy_card, toy_md = card(toy, "toy")
T.check(toy_card:find("Host time inside operations far exceeds their kernel time", 1, true),
  "toy: the host-time card, not the synchronization card")
T.check(not toy_card:find("Host-side synchronization stalls", 1, true), "toy: no synchronization card")
T.check(toy_card:find("no runtime call inside them waits for it", 1, true), "toy: no synchronizing call")
T.check(toy_card:find("(the longest: `hipLaunchKernel` in `aten::add_`, 6.543 ms)", 1, true),
  "toy: the 6.5 ms launch call named")
T.check(toy_card:find("CUDA_MODULE_LOADING=EAGER", 1, true), "toy: the lazy-loading advice")
-- the idle card defers to that one-time work: no graph capture first
T.check(toy_card:find("Most of that idle time, though, passes while the host does one-time work inside operations", 1,
  true) and toy_card:find("First measure steps after warm-up", 1, true), "toy: the idle card defers to the warm-up")
T.check(toy_md:find("top issue is: Host time inside operations far exceeds their kernel time", 1, true),
  "toy: the Executive Summary names the card")

local sg_card = card(sglang, "sglang")
-- its GPU idles with the launched resolve_future_token_ids_kernel waiting:
-- the synchronization card is the one for a host waiting on waiting work
T.check(sg_card:find("The host synchronizes on launched work that waits to start", 1, true),
  "sglang: the synchronization card")
T.check(sg_card:find("463.064 ms is in runtime calls that wait for the GPU: 1 synchronization or copy "
  .. "(`hipMemcpyWithStream` in `aten::copy_`, 463.064 ms)", 1, true), "sglang: the blocking copy named")

T.rmrf(tmp)
T.finish()

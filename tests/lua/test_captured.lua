-- The traces captured on an NVIDIA H200 with PyTorch 2.11 (tests/data/captured,
-- bench/capture/capture_traces.py): each is analysed and validates, and what
-- analysis.md says about them is checked against the workload (the script is
-- the ground truth) and against figures recomputed here from the raw JSON.
local root, _, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local cjson = require "cjson"
local tmp = T.tmpdir()
local dir = root .. "/tests/data/captured"

local function analyse(name)
  local out = tmp .. "/" .. name
  local ok, code, _, err = T.run(string.format("cd %s && %s run orchestrator.lua %s -o %s -q", T.q(root .. "/lua"),
    T.q(bin), T.q(dir .. "/" .. name .. ".json.gz"), T.q(out)))
  T.check(ok, name .. ": orchestrator exit " .. tostring(code) .. " " .. tostring(err))
  local vok, vcode, vout = T.run(string.format("%s validate %s", T.q(bin), T.q(out)))
  T.check(vok, name .. ": validate exit " .. tostring(vcode) .. " " .. tostring(vout))
  return T.read_file(out .. "/analysis.md") or "", out
end

local function has(text, needle, what) T.check(text:find(needle, 1, true) ~= nil, what .. ": \"" .. needle .. "\"") end
local function lacks(text, needle, what) T.check(not text:find(needle, 1, true), what .. ": unexpected \"" .. needle .. "\"") end

local function events(name)
  local ok, _, text = T.run("gzip -dc " .. T.q(dir .. "/" .. name .. ".json.gz"))
  T.check(ok, name .. ": gzip -dc")
  return cjson.decode(text).traceEvents
end

-- integer ns from the file's µs (whole µs and the fraction apart, as test_idle_breakdown)
local function ns(v)
  local w = math.floor(v)
  return w * 1000 + math.floor((v - w) * 1000 + 0.5)
end

-- graph_decode: 32 graph replays, each followed by `nxt.cpu()`, a blocking device-to-host copy. The host-wait gaps
-- of stream 7 that open while the next launch's thread is blocked in a call that waits for the GPU, recomputed
-- from the JSON: a synchronize, or a cudaMemcpyAsync whose copy (same correlation) is device-to-host.
do
  local evs = events("graph_decode")
  local BLOCK = { cudaDeviceSynchronize = true, cudaStreamSynchronize = true, cudaEventQuery = true,
    cudaEventSynchronize = true, cudaMemcpy = true, cudaMemcpyAsync = true }
  local copy_of, call_of, blocking, gpu = {}, {}, {}, {}
  for _, e in ipairs(evs) do
    local a = e.args or {}
    if e.cat == "gpu_memcpy" and a.correlation then copy_of[a.correlation] = e.name end
    if e.cat == "cuda_runtime" and a.correlation then call_of[a.correlation] = e end
  end
  for _, e in ipairs(evs) do
    local a = e.args or {}
    if e.cat == "cuda_runtime" and BLOCK[e.name] and (e.name ~= "cudaMemcpyAsync"
        or (copy_of[a.correlation] or ""):find("DtoH", 1, true)) then
      blocking[#blocking + 1] = { thread = e.pid .. "/" .. e.tid, s = ns(e.ts), e = ns(e.ts) + ns(e.dur) }
    end
    if e.ph == "X" and (e.cat == "kernel" or e.cat == "gpu_memcpy" or e.cat == "gpu_memset") and a.stream == 7 then
      gpu[#gpu + 1] = { s = ns(e.ts), e = ns(e.ts) + ns(e.dur), call = call_of[a.correlation], i = #gpu }
    end
  end
  table.sort(gpu, function(x, y) return x.s < y.s or (x.s == y.s and x.i < y.i) end)
  local host, sync, nsync, fin = 0, 0, 0, gpu[1].e
  for i = 2, #gpu do
    local g, gap = gpu[i], gpu[i].s - fin
    local c = g.call
    if gap >= 30 and c and ns(c.ts) >= fin then
      host = host + gap
      local th, at = c.pid .. "/" .. c.tid, ns(c.ts)
      for _, b in ipairs(blocking) do
        if b.thread == th and b.s <= fin and b.e >= fin and b.e <= at then
          sync, nsync = sync + gap, nsync + 1
          break
        end
      end
    end
    fin = math.max(fin, g.e)
  end
  local s7
  for _, x in ipairs(tl.load(dir .. "/graph_decode.json.gz"):idle_breakdown()) do
    if x.stream == 7 then s7 = x end
  end
  T.eq(s7.host_wait_us, host / 1000, "graph_decode: host wait recomputed")
  T.eq(s7.host_sync_wait_us, sync / 1000, "graph_decode: host wait after a blocking call recomputed")
  T.eq(s7.host_sync_wait_gaps, nsync, "graph_decode: gaps after a blocking call")
  T.eq(nsync, 31, "graph_decode: the gap after each of the first 31 copies (the 32nd ends the step)")
  local md = analyse("graph_decode")
  has(md, string.format("on stream 7 (the busiest) %.3f ms of idle time (31 gaps) opens while the host is blocked",
    sync / 1e6), "graph_decode: the sync-drain card with the recomputed figure")
  has(md, "**Host wait after synchronisation**", "graph_decode: the GPU-feed line")
  lacks(md, "Capture the steady-state step as a GPU graph", "graph_decode: the loop is a graph already")
  lacks(md, "CPU-bound launch", "graph_decode: the host waits, it does not launch slowly")
  lacks(md, "Operation launched", "graph_decode: replayed kernels are not launches")
  lacks(md, "or a CUDA graph of them", "graph_decode: its repeated kernels run in graph replays already")
  has(md, "it has no launch of its own", "graph_decode: a graph node's short calls pay no launch")
  -- the critical path cannot enter graph replays (HTA gives a graph launch no launch edge): no verdict, with or
  -- without cuda_sync events (graph_decode_sync: the same loop recorded with enable_cuda_sync_events)
  local cp = tl.load(dir .. "/graph_decode.json.gz"):critical_path{ step = 3, summary = true }
  T.check(cp.graph_gpu_us > 0.9 * cp.gpu_us, "graph_decode: graph launches replay most of the step's GPU time")
  has(md, string.format("**No bound from the critical path**: HTA's longest path through ProfilerStep#3 "
    .. "(`tracelens critical-path`) is %.3f of its", cp.length_us / 1000), "graph_decode: no verdict")
  has(md, string.format("but graph launches replay %.0f%% of the step's GPU time", cp.graph_gpu_us / cp.gpu_us * 100),
    "graph_decode: the graph share said")
  local md_sync = analyse("graph_decode_sync")
  has(md_sync, "but graph launches replay", "graph_decode_sync: no verdict with sync events either")
  lacks(md_sync, "The trace records no synchronisation events", "graph_decode_sync: it has them")
  -- the blocking copies' share of the path in `tracelens critical-path`'s split
  local _, _, cli = T.run(string.format("%s critical-path %s -o %s", T.q(bin), T.q(dir .. "/graph_decode.json.gz"),
    T.q(tmp .. "/cp.json.gz")))
  has(cli, string.format("of cpu_bound, in calls that wait for the GPU (synchronizations, blocking copies): %.3f ms",
    cp.blocking_us / 1000), "graph_decode: the CLI's split")
end

-- gpt_train: the loss read back each step (`loss.item()`), no cuda_sync events (not asked for), Python stacks.
do
  local md = analyse("gpt_train")
  has(md, "enable_cuda_sync_events=True", "gpt_train: how to get the sync records")
  lacks(md, "written by PyTorch 2.1 and later", "gpt_train: PyTorch 2.11 wrote none without the option")
  has(md, "The trace was recorded with `with_stack=True`", "gpt_train: the profiler's host time said")
  -- 8184 = 33 x 248: nvjet's 128x248 tile divides it
  lacks(md, "M=8184 of `aten::addmm` is not a multiple of 16", "gpt_train: no edge-tile claim for a divided side")
  -- the LayerNorm backward's gradient accumulation: no residual add, and the projection an upper bound
  has(md, "Accumulate the input gradient inside the LayerNorm backward's input-gradient kernel", "gpt_train: LN bwd")
  has(md, "so the projection is an upper bound", "gpt_train: the LN backward saving bounded")
  -- the per-step `loss.item()`: its synchronize named in the host-time card
  has(md, "(the longest: `cudaStreamSynchronize` in `aten::_local_scalar_dense`", "gpt_train: loss.item()'s wait named")
  lacks(md, "Fuse the residual add into the LayerNorm kernel", "gpt_train: no residual add in a backward node")
  local ok, _, out = T.run(T.q(bin) .. " check " .. T.q(dir .. "/gpt_train.json.gz"))
  T.check(ok, "gpt_train: a note does not fail the check")
  has(out, "no synchronisation records: 3 calls of cudaDeviceSynchronize", "gpt_train: check notes the missing records")
end

-- resnet_train: convolution_backward's filter is its third tensor (grad_output, input, weight)
do
  local md = analyse("resnet_train")
  has(md, "3×3 filter, 256→256 channels, 14×14 input", "resnet_train: the backward 3x3 conv labelled right")
  -- the critical path stays on the autograd thread: the forward on the main thread is not on it
  has(md, "The path stays on 1 of the 2 CPU threads with work in the step", "resnet_train: the path's threads said")
  lacks(md, "14×14 filter", "resnet_train: no grad_output read as a filter")
end

-- streams: two 256 MiB pinned copies each step; the critical path holds the device-to-host one (with the sync
-- events too: Stream Sync and Stream Wait Event records)
do
  local md = analyse("streams")
  has(md, "so the memory copies on the path", "streams: the copies named in the verdict")
  has(md, "1 of 2 members use quantized weights", "streams: torch._scaled_mm's FP8 product is quantized")
  -- the copy cards fit the copies: 256 MiB copies back (not scalar reads), host-to-device already pinned
  has(md, "Copy less back: the largest transfer moves 256.0 MiB, a bulk copy, not a scalar read.", "streams: D2H")
  has(md, "The copies already come from pinned host memory", "streams: H2D pinned already")
  lacks(md, "Stage inputs in pinned host memory", "streams: no advice to pin what is pinned")
  local cp = tl.load(dir .. "/streams_sync.json.gz"):critical_path{ summary = true }
  T.check(cp.copies_us > 0.5 * cp.by_category.gpu_compute and not cp.blind, "streams_sync: copies hold the path's "
    .. "GPU time; sync edges seen")
  has(analyse("streams_sync"), "so the memory copies on the path", "streams_sync: the copies named")
  -- its two Stream Wait Event records name no event record (-1): the check says the path cannot follow them
  local _, _, out = T.run(T.q(bin) .. " check " .. T.q(dir .. "/streams_sync.json.gz"))
  has(out, "cross-stream waits without their event record: 2 Stream Wait Event records name no event record",
    "streams_sync: the unlinked waits noted")
end

-- compiled: torch.compile's Triton kernels: its CUDA-graph mode is the remedy named, not torch.compile itself.
-- No synchronisation ends a step: the warm-up step's tail runs into ProfilerStep#3 (27 GPU events launched before
-- the trace, 14 of them after its first launch call, told by their correlation ids), so the critical path is
-- ProfilerStep#4's.
do
  local steps = tl.load(dir .. "/compiled.json.gz"):steps()
  T.check(steps[1].number == 3 and steps[1].before_trace_us > 0 and steps[2].before_trace_us == 0,
    "compiled: step 3 runs work launched before the trace, step 4 none")
  local md = analyse("compiled")
  has(md, "HTA's longest path through ProfilerStep#4", "compiled: the path of the step without earlier work")
  has(md, "- **Scale**: hidden size 2048", "compiled: d=2048 (LayerNorm(2048)), not the 8192 tokens of the backward mm")
  has(md, '`torch.compile(mode="reduce-overhead")`', "compiled: the compile mode that adds graphs")
  lacks(md, "(CUDA graphs, `torch.compile`, fused kernels)", "compiled: torch.compile is in use already")
end

-- compiled_decode: the graph_decode model under torch.compile(mode="reduce-overhead"): Inductor's CUDA graphs
-- replayed inside `Torch-Compiled Region: 0/0`, each iteration reading its token back with `.cpu()`
do
  local md = analyse("compiled_decode")
  lacks(md, "as attention work", "compiled_decode: a region replaying a whole model is no attention op")
  lacks(md, "record them with the profiler's `record_shapes=True`", "compiled_decode: shapes were recorded")
  has(md, "**No bound from the critical path**", "compiled_decode: graph replays, no verdict")
  has(md, "GPU idle after host synchronizations", "compiled_decode: the read-back drains the queue")
end

T.rmrf(tmp)
T.finish()

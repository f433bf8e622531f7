-- The capture merge (inference spec §1.4 classification, §1.5 merge):
-- tl.load(replay, {capture_folder = DIR}) and trace:capture_summary().
--
-- Part 1, hand-made traces written by the test: a replay (an iteration
-- annotation "execute_4_..." of batch 4 over one hipGraphLaunch, corr 100,
-- at ts 20 us, dur 10 us, whose kernels start at 200 us) and a capture
-- trace (a _dummy_run frame around hipStreamBeginCapture ... EndCapture, a
-- forward frame with one cpu_op "op_J" per dispatch J, each launching
-- dispatch J with correlation 1000 + J). The classification writes
-- execution_details.json (no capture annotation: FULL, batch = the common
-- first dim 4 of the ops' Input Dims). Each alignment mode of §1.5 is
-- checked by which dispatch each kernel gets (its launcher "op_J" and its
-- new correlation 1000 + J), worked out by hand below.
-- Part 2, bad inputs: one-line errors. Part 3, the shipped cases (skipped
-- when ../shared/data is absent): every replay kernel of the graph launch
-- gets a capture dispatch, the ops match the reference's ops_summary, and
-- the classification of a copy of each capture folder without its
-- execution_details.json gives the shipped file byte for byte.
local root, shared = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

-- ------------------------------------------------------------ helpers

local function enc(v)
  local ty = type(v)
  if ty == "string" then return '"' .. v .. '"' end
  if ty == "number" then return (math.type(v) == "integer") and tostring(v) or string.format("%.3f", v) end
  if ty == "boolean" then return tostring(v) end
  if v[1] ~= nil or next(v) == nil then
    local out = {}
    for i, x in ipairs(v) do out[i] = enc(x) end
    return "[" .. table.concat(out, ",") .. "]"
  end
  local keys = {}
  for k in pairs(v) do keys[#keys + 1] = k end
  table.sort(keys)
  local out = {}
  for i, k in ipairs(keys) do out[i] = '"' .. k .. '":' .. enc(v[k]) end
  return "{" .. table.concat(out, ",") .. "}"
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local tmp = os.tmpname()
os.remove(tmp)
tl.fs.mkdir(tmp)
local made = {}
local function dir(name)
  local d = tmp .. "/" .. name
  tl.fs.mkdir(d)
  made[#made + 1] = d
  return d
end

local ANN = "execute_4_context_0(sq0sk0sqsq0sqsk0)_generation_4(sq4sk8sqsq4sqsk8)"

-- kernels: list of {name, stream}; uids: 0 annotation, 1 frame, 2 launch, 3.. kernels
local function replay(path, kernels, no_launch)
  local ev = {
    {ph = "X", cat = "user_annotation", name = ANN, pid = 1, tid = 1, ts = 0, dur = 1000},
    {ph = "X", cat = "python_function", name = "torch/cuda/graphs.py(139): replay", pid = 1, tid = 1, ts = 10, dur = 100},
    {ph = "X", cat = "cuda_runtime", name = no_launch and "hipDeviceSynchronize" or "hipGraphLaunch", pid = 1, tid = 1,
     ts = 20, dur = 10, args = {correlation = 100}},
  }
  for i, k in ipairs(kernels) do
    ev[#ev + 1] = {ph = "X", cat = "kernel", name = k[1], pid = 0, tid = k[2], ts = 190 + 10 * i, dur = 5,
                   args = {correlation = 100, stream = k[2], device = 0}}
  end
  write(path, enc({traceEvents = ev}))
end

-- dispatches: list of {name, kernel (nil: no args.kernel)}; dispatch J is
-- launched by cpu_op "op_J" with correlation 1000 + J (J from 0)
local function capture(path, dispatches)
  local ev = {
    {ph = "X", cat = "python_function", name = "vllm/v1/worker/gpu_model_runner.py(1): _dummy_run", pid = 1, tid = 1,
     ts = 0, dur = 2000},
    {ph = "X", cat = "cuda_runtime", name = "hipStreamBeginCapture", pid = 1, tid = 1, ts = 1, dur = 1, args = {correlation = 1}},
    {ph = "X", cat = "python_function", name = "model.py(7): forward", pid = 1, tid = 1, ts = 10, dur = 1800},
  }
  for j, d in ipairs(dispatches) do
    local t0 = 20 * j
    ev[#ev + 1] = {ph = "X", cat = "cpu_op", name = "op_" .. (j - 1), pid = 1, tid = 1, ts = t0, dur = 10,
                   args = {["Input Dims"] = {{4, 8}, {8, 8}}, ["Input type"] = {"float", "float"}}}
    ev[#ev + 1] = {ph = "X", cat = "cuda_runtime", name = d[1], pid = 1, tid = 1, ts = t0 + 2, dur = 2,
                   args = {correlation = 1000 + j - 1, kernel = d[2]}}
  end
  ev[#ev + 1] = {ph = "X", cat = "cuda_runtime", name = "hipStreamEndCapture", pid = 1, tid = 1, ts = 1900, dur = 1,
                 args = {correlation = 2}}
  write(path, enc({traceEvents = ev}))
end

local DETAILS = '[\n  {\n    "file": "cap.json",\n    "batch_size": 4,\n    "mode": "FULL"\n  }\n]'

-- Runs one hand-made case; expect = for each kernel (in replay order) the
-- dispatch index J it must get.
local function case(name, kernels, dispatches, expect)
  local d = dir(name)
  local rp = d .. "/replay.json"
  replay(rp, kernels)
  local cd = dir(name .. "_cap")
  capture(cd .. "/cap.json", dispatches)
  local ok, t = pcall(tl.load, rp, {capture_folder = cd})
  if not T.check(ok, name .. ": merge: " .. tostring(t)) then return end
  T.eq(read(cd .. "/execution_details.json"), DETAILS, name .. ": execution_details.json written")
  local s = t:capture_summary()
  T.eq(s.graph_launches, 1, name .. ": graph launches")
  T.eq(s.exec_roots, 1, name .. ": execution roots")
  T.eq(s.merged, 1, name .. ": merged")
  T.eq(s.kernels_linked, #kernels, name .. ": kernels linked")
  T.eq(#t, 3 + #kernels + s.events_added, name .. ": events added after the replay's")
  local launch = t:node(2)
  local ch = launch:children()
  T.eq(#ch, 1, name .. ": the launch has one child")
  T.eq(ch[1] and ch[1].name, "CaptureRoot", name .. ": ... the CaptureRoot")
  T.eq(ch[1] and ch[1].uid, 3 + #kernels, name .. ": the CaptureRoot is the first copy")
  T.eq(ch[1] and ch[1].ts, 20.0, name .. ": copies take the launch's ts")
  T.eq(ch[1] and ch[1].dur, 10.0, name .. ": ... and dur")
  T.eq(ch[1] and ch[1]:parent().uid, 2, name .. ": CaptureRoot's parent is the launch")
  for i, j in ipairs(expect) do
    local k = t:node(2 + i)
    local p = k:parent()
    T.eq(p and p.cat, "cuda_runtime", name .. ": kernel " .. i .. " under a capture dispatch")
    T.eq(p and #p:children(), 1, name .. ": the dispatch's only child is the kernel")
    T.eq(k:launcher() and k:launcher().name, "op_" .. j, name .. ": kernel " .. i .. " launcher")
    T.eq(k.args.correlation, 1000 + j, name .. ": kernel " .. i .. " takes the dispatch's correlation")
    T.eq(k.ts, 190 + 10 * i, name .. ": kernel timing stays the replay's")
  end
  -- gpu_events: the launch lists its kernels twice (replay + merged), the copies once
  T.eq(#launch:kernels(), 2 * #kernels, name .. ": launch gpu_events")
  T.eq(#ch[1]:kernels(), #kernels, name .. ": CaptureRoot gpu_events")
  T.eq(#t:node(1):kernels(), 2 * #kernels, name .. ": replay frame gpu_events")
  return t
end

-- ------------------------------------------------- alignment modes

-- positional (code 1), with a Memcpy dispatch that has no kernel name
case("positional", {{"Memcpy DtoD (Device -> Device)", 7}, {"kA", 7}, {"kB", 7}},
     {{"hipMemcpyAsync"}, {"hipLaunchKernel", "kA"}, {"hipModuleLaunchKernel", "kB"}}, {0, 1, 2})
-- greedy forward scan (code 2): counts differ; X and the tail Z are dropped;
-- a hipMemsetAsync dispatch matches a fillBuffer kernel
case("greedy", {{"kA", 7}, {"__amd_rocclr_fillBufferAligned", 7}, {"kB", 7}},
     {{"hipLaunchKernel", "kA"}, {"hipLaunchKernel", "kX"}, {"hipMemsetAsync"}, {"hipLaunchKernel", "kB"},
      {"hipLaunchKernel", "kZ"}}, {0, 2, 3})
-- group alignment (code 3): same counts, another order: the k-th dispatch
-- of a name with the k-th kernel of that name
case("group", {{"kB", 7}, {"kA", 7}, {"kA", 7}, {"kC", 7}},
     {{"hipLaunchKernel", "kA"}, {"hipLaunchKernel", "kB"}, {"hipLaunchKernel", "kC"}, {"hipLaunchKernel", "kA"}},
     {1, 0, 3, 2})
-- multistream (stream queues s1: kA kB, s2: kA kC): dispatch 0 (kA) matches
-- both heads; s2's run (kA kC) is longer, so it takes the s2 kernel
case("streams", {{"kA", 1}, {"kA", 2}, {"kB", 1}, {"kC", 2}},
     {{"hipLaunchKernel", "kA"}, {"hipLaunchKernel", "kC"}, {"hipLaunchKernel", "kA"}, {"hipLaunchKernel", "kB"}},
     {2, 0, 3, 1})

-- Several launches: iters = list of {ts, launches = {kernel-name lists}};
-- returns the launch uids and, per launch, its kernel uids.
local function replay_multi(path, iters)
  local ev, launches, kernels, corr = {}, {}, {}, 100
  for _, it in ipairs(iters) do
    ev[#ev + 1] = {ph = "X", cat = "user_annotation", name = ANN, pid = 1, tid = 1, ts = it.ts, dur = 1000}
    ev[#ev + 1] = {ph = "X", cat = "python_function", name = "torch/cuda/graphs.py(139): replay", pid = 1, tid = 1,
                   ts = it.ts + 10, dur = 100}
    for li, names in ipairs(it.launches) do
      launches[#launches + 1] = #ev
      ev[#ev + 1] = {ph = "X", cat = "cuda_runtime", name = "hipGraphLaunch", pid = 1, tid = 1, ts = it.ts + 10 + 10 * li,
                     dur = 5, args = {correlation = corr}}
      local ks = {}
      for i, k in ipairs(names) do
        ks[#ks + 1] = #ev
        ev[#ev + 1] = {ph = "X", cat = "kernel", name = k, pid = 0, tid = 7, ts = it.ts + 200 + 100 * li + 10 * i, dur = 5,
                       args = {correlation = corr, stream = 7}}
      end
      kernels[#kernels + 1] = ks
      corr = corr + 100
    end
  end
  write(path, enc({traceEvents = ev}))
  return launches, kernels
end

-- windows: list of dispatch lists; window W's dispatch J is launched by
-- "w<W>_op_<J>" with correlation 1000 * W + J
local function capture_multi(path, windows)
  local ev = {{ph = "X", cat = "python_function", name = "vllm/v1/worker/gpu_model_runner.py(1): _dummy_run", pid = 1,
               tid = 1, ts = 0, dur = 100000}}
  for w, ds in ipairs(windows) do
    local b = 10000 * w
    ev[#ev + 1] = {ph = "X", cat = "cuda_runtime", name = "hipStreamBeginCapture", pid = 1, tid = 1, ts = b, dur = 1}
    ev[#ev + 1] = {ph = "X", cat = "python_function", name = "model.py(7): forward", pid = 1, tid = 1, ts = b + 10, dur = 5000}
    for j, k in ipairs(ds) do
      ev[#ev + 1] = {ph = "X", cat = "cpu_op", name = "w" .. w .. "_op_" .. (j - 1), pid = 1, tid = 1, ts = b + 20 * j,
                     dur = 10, args = {["Input Dims"] = {{4, 8}}, ["Sequence number"] = 50 + j}}
      ev[#ev + 1] = {ph = "X", cat = "cuda_runtime", name = "hipLaunchKernel", pid = 1, tid = 1, ts = b + 20 * j + 2, dur = 2,
                     args = {correlation = 1000 * w + j - 1, kernel = k}}
    end
    ev[#ev + 1] = {ph = "X", cat = "cuda_runtime", name = "hipStreamEndCapture", pid = 1, tid = 1, ts = b + 9000, dur = 1}
  end
  write(path, enc({traceEvents = ev}))
end

local function check_launch(t, name, launch, ks, prefix, corr0)
  local l = t:node(launch)
  local root = l:children()[1]
  T.eq(root and root.name, "CaptureRoot", name .. ": launch " .. launch .. " has its CaptureRoot")
  T.eq(root and root.ts, l.ts, name .. ": ... at the launch's ts")
  for j, k in ipairs(ks) do
    local e = t:node(k)
    T.eq(e:launcher() and e:launcher().name, prefix .. (j - 1), name .. ": kernel " .. k .. " launcher")
    T.eq(e.args.correlation, corr0 + j - 1, name .. ": kernel " .. k .. " correlation")
    local p = e:parent()
    T.check(p and root and p.uid > root.uid, name .. ": kernel " .. k .. " under this launch's copy")
  end
  return root
end

-- two iterations on one capture root: the second copy is a block copy of the first
do
  local d = dir("twice")
  local launches, kernels = replay_multi(d .. "/replay.json", {{ts = 0, launches = {{"kA", "kB"}}},
                                                                {ts = 5000, launches = {{"kA", "kB"}}}})
  local cd = dir("twice_cap")
  capture_multi(cd .. "/cap.json", {{"kA", "kB"}})
  local t = tl.load(d .. "/replay.json", {capture_folder = cd})
  local s = t:capture_summary()
  T.eq(s.exec_roots, 2, "twice: execution roots")
  T.eq(s.merged, 2, "twice: merged")
  T.eq(s.kernels_linked, 4, "twice: kernels")
  local r1 = check_launch(t, "twice", launches[1], kernels[1], "w1_op_", 1000)
  local r2 = check_launch(t, "twice", launches[2], kernels[2], "w1_op_", 1000)
  T.eq(r2.uid - r1.uid, s.events_added // 2, "twice: the second copy follows the first")
  T.eq(t:node(r2.uid + 1).name, t:node(r1.uid + 1).name, "twice: the copies are alike")
  T.eq(t:node(r2.uid + 2).args["Sequence number"], t:node(r1.uid + 2).args["Sequence number"], "twice: args copied")
end

-- PIECEWISE: two capture roots zipped with the two launches of one iteration
do
  local d = dir("piecewise")
  local launches, kernels = replay_multi(d .. "/replay.json", {{ts = 0, launches = {{"kA", "kB"}, {"kC"}}}})
  local cd = dir("piecewise_cap")
  capture_multi(cd .. "/cap.json", {{"kA", "kB"}, {"kC"}})
  local t = tl.load(d .. "/replay.json", {capture_folder = cd})
  T.eq(read(cd .. "/execution_details.json"), (DETAILS:gsub("FULL", "PIECEWISE")), "piecewise: classified")
  local s = t:capture_summary()
  T.eq(s.merged, 2, "piecewise: merged")
  check_launch(t, "piecewise", launches[1], kernels[1], "w1_op_", 1000)
  check_launch(t, "piecewise", launches[2], kernels[2], "w2_op_", 2000)
end

-- both FULL and PIECEWISE captured for the batch size: PIECEWISE for an
-- iteration of several launches, FULL for one. Copies: FULL root = 8 events
-- (CaptureRoot, forward, 3 ops, 3 dispatches), PIECEWISE roots 6 and 4.
do
  local cd = dir("modes_cap")
  capture_multi(cd .. "/full.json", {{"kA", "kB", "kX"}})
  capture_multi(cd .. "/pw.json", {{"kA", "kB"}, {"kC"}})
  write(cd .. "/execution_details.json", '[{"file": "full.json", "batch_size": 4, "mode": "FULL"}, ' ..
        '{"file": "pw.json", "batch_size": 8, "mode": "FULL"}, {"file": "pw.json", "batch_size": 4, "mode": "PIECEWISE"}]')
  local d = dir("modes")
  replay_multi(d .. "/one.json", {{ts = 0, launches = {{"kA", "kB"}}}})
  local s = tl.load(d .. "/one.json", {capture_folder = cd}):capture_summary()
  T.eq(s.merged, 1, "modes: one launch merged")
  T.eq(s.events_added, 8, "modes: one launch takes the FULL capture")
  replay_multi(d .. "/two.json", {{ts = 0, launches = {{"kA", "kB"}, {"kC"}}}})
  s = tl.load(d .. "/two.json", {capture_folder = cd}):capture_summary()
  T.eq(s.merged, 2, "modes: two launches merged")
  T.eq(s.events_added, 10, "modes: two launches take the PIECEWISE capture")
  -- three launches against two capture roots: skipped, so nothing merges
  replay_multi(d .. "/three.json", {{ts = 0, launches = {{"kA", "kB"}, {"kC"}, {"kC"}}}})
  local ok, err = pcall(tl.load, d .. "/three.json", {capture_folder = cd})
  T.check(not ok and tostring(err):find("2 capture roots in pw.json for 3 graph launches", 1, true),
          "modes: capture roots and launches that do not pair: " .. tostring(err))
  os.remove(cd .. "/full.json")
  os.remove(cd .. "/pw.json")
  os.remove(d .. "/one.json")
  os.remove(d .. "/two.json")
  os.remove(d .. "/three.json")
end

-- pseudo ops run after the merge; a replay without graph launches is a copy with a note
do
  local d = dir("nolaunch")
  replay(d .. "/replay.json", {{"kA", 7}}, true)
  local cd = dir("nolaunch_cap")
  capture(cd .. "/cap.json", {{"hipLaunchKernel", "kA"}})
  local t = tl.load(d .. "/replay.json", {capture_folder = cd, enable_pseudo_ops = true})
  local s = t:capture_summary()
  T.eq(s.graph_launches, 0, "no launch: graph launches")
  T.eq(s.merged, 0, "no launch: nothing merged")
  T.check(s.notes[1] and s.notes[1]:find("no graph launches", 1, true), "no launch: a note says so")
  T.eq(#t, 4, "no launch: the replay's events only")
  T.check(t:info().pseudo_ops ~= nil, "no launch: the pseudo-op pass ran")
  T.eq(tl.load(d .. "/replay.json"):capture_summary(), nil, "no summary without capture_folder")
end

-- write_execution_details = false classifies in memory only
do
  local d = dir("nowrite")
  replay(d .. "/replay.json", {{"kA", 7}})
  local cd = dir("nowrite_cap")
  capture(cd .. "/cap.json", {{"hipLaunchKernel", "kA"}})
  local t = tl.load(d .. "/replay.json", {capture_folder = cd, write_execution_details = false})
  T.eq(t:capture_summary().merged, 1, "no write: merged")
  T.eq(read(cd .. "/execution_details.json"), nil, "no write: the folder is untouched")
end

-- ------------------------------------------------------- bad inputs

local function fails(name, rp, cd, pattern)
  local ok, err = pcall(tl.load, rp, {capture_folder = cd})
  T.check(not ok, name .. ": an error")
  T.check(not ok and tostring(err):find(pattern, 1, true) and not tostring(err):find("\n", 1, true),
          name .. ": one line naming the problem, got: " .. tostring(err))
end

do
  local d = dir("bad")
  local rp = d .. "/replay.json"
  replay(rp, {{"kA", 7}, {"kB", 7}})
  fails("empty folder", rp, dir("bad_empty"), "holds no capture traces")
  T.eq(read(tmp .. "/bad_empty/execution_details.json"), nil, "empty folder: nothing written")
  fails("missing folder", rp, tmp .. "/does_not_exist", "does_not_exist")
  local c1 = dir("bad_corrupt")
  capture(c1 .. "/cap.json", {{"hipLaunchKernel", "kA"}, {"hipLaunchKernel", "kB"}})
  write(c1 .. "/execution_details.json", '[{"file": "cap.json", "batch_size": 4')
  fails("corrupt execution_details.json", rp, c1, "corrupt execution_details.json")
  write(c1 .. "/execution_details.json", '{"file": "cap.json"}')
  fails("execution_details.json not a list", rp, c1, "corrupt execution_details.json")
  write(c1 .. "/execution_details.json", '[{"batch_size": 4, "mode": "FULL"}]')
  fails("an entry without a file", rp, c1, "corrupt execution_details.json")
  write(c1 .. "/execution_details.json", '[{"file": "gone.json", "batch_size": 4, "mode": "FULL"}]')
  fails("a listed file that is missing", rp, c1, "no capture trace matched a graph launch")
  write(c1 .. "/execution_details.json", '[{"file": "cap.json", "batch_size": 2, "mode": "FULL"}]')
  fails("capture batch sizes too small", rp, c1, "no capture batch size >= 4")
  -- a capture trace whose dispatches match none of the launch's kernels
  local c2 = dir("bad_nomatch")
  capture(c2 .. "/cap.json", {{"hipLaunchKernel", "kX"}, {"hipLaunchKernel", "kY"}})
  fails("a capture trace that matches no graph launch", rp, c2, "no capture trace matched a graph launch")
  -- group alignment that fails (kA kB kB against kA kA kB)
  local d3 = dir("bad_group")
  replay(d3 .. "/replay.json", {{"kA", 7}, {"kA", 7}, {"kB", 7}})
  local c3 = dir("bad_group_cap")
  capture(c3 .. "/cap.json", {{"hipLaunchKernel", "kA"}, {"hipLaunchKernel", "kB"}, {"hipLaunchKernel", "kB"}})
  fails("group counts differ", d3 .. "/replay.json", c3, "do not align")
  -- --capture_folder pointing elsewhere: a folder of ordinary traces
  local c4 = dir("bad_elsewhere")
  replay(c4 .. "/other.json", {{"kA", 7}})
  fails("a folder of other traces", rp, c4, "no capture trace matched a graph launch")
  -- multistream graph, capture dispatches without kernel names: the merge fails
  local d5 = dir("bad_streams")
  replay(d5 .. "/replay.json", {{"kA", 1}, {"kB", 2}})
  local c5 = dir("bad_streams_cap")
  capture(c5 .. "/cap.json", {{"hipLaunchKernel"}, {"hipLaunchKernel", "kB"}})
  fails("multistream without kernel names", d5 .. "/replay.json", c5, "capture merge failed")
  -- a replay whose launches no iteration annotation encloses
  local d7 = dir("bad_noann")
  write(d7 .. "/replay.json", (read(rp):gsub("execute_4_context_0", "something_else")))
  local c7 = dir("bad_noann_cap")
  capture(c7 .. "/cap.json", {{"hipLaunchKernel", "kA"}, {"hipLaunchKernel", "kB"}})
  fails("no iteration annotation", d7 .. "/replay.json", c7, "no iteration annotation")
  T.eq(tl.load(rp, {capture_folder = c7}):capture_summary().kernels_linked, 2, "the same folder merges the annotated replay")
  -- an unreadable capture trace
  local c6 = dir("bad_json")
  write(c6 .. "/cap.json", '{"traceEvents": [{"name": ')
  fails("a corrupt capture trace", rp, c6, "cap.json")
  T.eq(read(c6 .. "/execution_details.json"), nil, "corrupt capture trace: nothing written")
end

-- ------------------------------------------------- the shipped cases

local function copy_file(from, to)
  local s = assert(read(from))
  write(to, s)
end

local function ref_counts(path)
  local counts = {}
  for _, row in ipairs(T.csv_records(path)) do
    counts[row.name] = (counts[row.name] or 0) + tonumber(row.Count)
  end
  return counts
end

local cases = {
  {"sglang_decode", "sglang_Qwen3-8B_decode.json.gz", "bs_32_rank0.json.gz", 544},
  {"vllm_decode_full", "graph_execution.json.gz", "graph_capture_rank_0.1773709742341309550.pt.trace.json.gz", 421},
}
local base = shared and (shared .. "/inference")
if base and read(base .. "/" .. cases[1][1] .. "/" .. cases[1][2]) then
  for _, c in ipairs(cases) do
    local name, cdir = c[1], base .. "/" .. c[1] .. "/capture_traces"
    local t0 = tl.now()
    local t = tl.load(base .. "/" .. name .. "/" .. c[2], {capture_folder = cdir, enable_pseudo_ops = true})
    local secs = tl.now() - t0
    local s = t:capture_summary()
    print(string.format("%s: loaded and merged in %.3f s, the merge (capture load included) %.3f s: %d events added",
                        name, secs, s.seconds, s.events_added))
    T.eq(s.graph_launches, 1, name .. ": graph launches")
    T.eq(s.merged, 1, name .. ": merged")
    T.eq(s.kernels_linked, c[4], name .. ": every kernel of the launch gets a dispatch")
    T.eq(#s.notes, 0, name .. ": no notes")
    -- every kernel of the graph launch: under a capture dispatch, launched by a capture op
    local launch
    for e in t:events{cat = "cuda_runtime", name = "hipGraphLaunch"} do launch = e end
    local under, with_op = 0, 0
    for _, k in ipairs(t:node(launch:children()[1].uid):kernels()) do
      local p = k:parent()
      if p and p.cat == "cuda_runtime" and p.uid > launch.uid then under = under + 1 end
      local l = k:launcher()
      if l and l.cat == "cpu_op" then with_op = with_op + 1 end
    end
    T.eq(under, c[4], name .. ": kernels under capture dispatches")
    -- the copies of the captured calls carry the graph launch's ts and dur: they are no launch calls of the
    -- replay (the health check and the steps do not count them) and no host time (trace:host_calls)
    local plain, merged = tl.load(base .. "/" .. name .. "/" .. c[2]):check(), t:check()
    T.eq(merged.launches, plain.launches, name .. ": the launch calls of the replay only")
    T.eq(merged.launches_without_gpu, 0, name .. ": the grafted graph launch has its GPU work")
    local h = t:host_calls()
    for _, k in ipairs({ "launch", "setup" }) do -- (sglang: its one 463 ms synchronizing copy is real)
      T.check(h[k].us < launch.dur, string.format("%s: host_calls %s %.1f us, under the graph launch's %.1f us",
        name, k, h[k].us, launch.dur))
    end
    T.check(with_op >= c[4] * 0.95, name .. ": kernels launched by capture cpu_ops: " .. with_op)
    -- the ops (names and counts) of the reference's ops_summary
    local ref = ref_counts(base .. "/" .. name .. "/perf_csvs/ops_summary.csv")
    local got = {}
    for _, row in t:table("ops_summary"):rows() do got[row.name] = row.Count end
    for op, n in pairs(ref) do T.eq(got[op], n, name .. ": ops_summary count of " .. op) end
    for op in pairs(got) do T.check(ref[op] ~= nil, name .. ": op not in the reference: " .. op) end
    -- classification of a copy without execution_details.json
    local cd = dir(name .. "_copy")
    copy_file(cdir .. "/" .. c[3], cd .. "/" .. c[3])
    local t2 = tl.load(base .. "/" .. name .. "/" .. c[2], {capture_folder = cd})
    T.eq(read(cd .. "/execution_details.json"), read(cdir .. "/execution_details.json"),
         name .. ": classification equals the shipped execution_details.json")
    T.eq(t2:capture_summary().kernels_linked, c[4], name .. ": merged from the classified copy")
    os.remove(cd .. "/" .. c[3])
  end
else
  print("shipped inference cases absent (../shared/data/inference): part 3 skipped")
end

-- clean up
for i = #made, 1, -1 do
  for _, f in ipairs{"replay.json", "cap.json", "other.json", "execution_details.json"} do os.remove(made[i] .. "/" .. f) end
  os.remove(made[i])
end
os.remove(tmp)
T.finish()

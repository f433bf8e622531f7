-- gen_ranks.lua — synthetic N-rank Kineto traces for `tracelens ranks` tests
-- and benchmarks (spec multi-rank.md §0.2), deterministic from a seed.
--
--   tracelens run bench/gen_ranks.lua -o DIR [--ranks 8] [--seed 1] [--tp 8]
--       [--gpus-per-node 8] [--steps 2] [--straggler R] [--all2allv]
--       [--kernel-style nccl|rccl] [--no-pg] [--mismatch R] [--compute K] [--gzip]
--
-- Writes DIR/rank{i}_trace.json (or .json.gz with --gzip, through `gzip`),
-- each with distributedInfo {rank, world_size} and gpus-per-node entries in
-- deviceProperties. Process groups: "0" the world; TP groups of --tp
-- consecutive ranks; DP groups (rank i, i + tp, ...); with --all2allv EP
-- groups with the TP membership carrying all_to_allv. Per step: a world
-- broadcast, per TP group _allgather_base / allreduce / _reduce_scatter_base
-- (BFloat16), [all_to_allv per EP group], per DP group allreduce (Float),
-- a world allreduce of one element. Timing: each rank arrives at the
-- logical time + a constant rank bias + jitter (+ 400 us on the straggler);
-- the members of a collective end together at the last arrival + a transfer
-- time; each node's clock has its own offset. --no-pg drops the process-
-- group metadata and keeps one stream per rank (simplified mode); --mismatch R
-- gives rank R a Half dtype on the first TP allreduce (a metadata mismatch);
-- each step is a ProfilerStep#N CPU annotation (N = 1, 2, ...) on every rank;
-- --compute K adds K compute kernels per step per rank (bulk for benchmarks);
-- with --launches each also gets the CPU op (aten::mm) and the
-- cudaLaunchKernel runtime call that launched it, as Kineto writes them
-- (realistic per-rank traces for bench/run_ranks_bench.sh).
local o = {ranks = 8, seed = 1, tp = 8, gpn = 8, steps = 2, style = "nccl", compute = 0}
local i = 1
local args = {...}
while i <= #args do
  local a = args[i]
  local function val()
    i = i + 1
    if args[i] == nil then error("gen_ranks: " .. a .. " needs a value") end
    return args[i]
  end
  if a == "-o" then o.out = val()
  elseif a == "--ranks" then o.ranks = math.tointeger(tonumber(val()))
  elseif a == "--seed" then o.seed = math.tointeger(tonumber(val()))
  elseif a == "--tp" then o.tp = math.tointeger(tonumber(val()))
  elseif a == "--gpus-per-node" then o.gpn = math.tointeger(tonumber(val()))
  elseif a == "--steps" then o.steps = math.tointeger(tonumber(val()))
  elseif a == "--straggler" then o.straggler = math.tointeger(tonumber(val()))
  elseif a == "--all2allv" then o.a2a = true
  elseif a == "--kernel-style" then o.style = val()
  elseif a == "--no-pg" then o.nopg = true
  elseif a == "--mismatch" then o.mismatch = math.tointeger(tonumber(val()))
  elseif a == "--compute" then o.compute = math.tointeger(tonumber(val()))
  elseif a == "--gzip" then o.gzip = true
  elseif a == "--launches" then o.launches = true
  else error("gen_ranks: unknown option " .. a) end
  i = i + 1
end
assert(o.out, "gen_ranks: -o DIR is required")
assert(o.ranks and o.ranks > 0 and o.tp and o.tp > 0 and o.ranks % o.tp == 0, "gen_ranks: --ranks must be a multiple of --tp")
local W, TP = o.ranks, o.tp
local DP = W // TP

-- a 64-bit LCG (Knuth's MMIX constants): the same numbers on every build
local state = o.seed * 2654435761 + 1
local function rnd() -- [0, 1)
  state = state * 6364136223846793005 + 1442695040888963407
  return ((state >> 11) & ((1 << 53) - 1)) / 2.0 ^ 53
end
local function irand(lo, hi) return lo + math.floor(rnd() * (hi - lo + 1)) end

-- process groups
local groups = {} -- {name, ranks}
local function list_text(rs) return "[" .. table.concat(rs, ", ") .. "]" end
local world = {}
for r = 0, W - 1 do world[#world + 1] = r end
groups.world = {name = "0", ranks = world}
local gid = 1
groups.tp, groups.dp, groups.ep = {}, {}, {}
for t = 0, DP - 1 do
  local rs = {}
  for k = 0, TP - 1 do rs[#rs + 1] = t * TP + k end
  groups.tp[#groups.tp + 1] = {name = tostring(gid), ranks = rs}
  gid = gid + 1
end
for d = 0, TP - 1 do
  local rs = {}
  for k = 0, DP - 1 do rs[#rs + 1] = d + k * TP end
  groups.dp[#groups.dp + 1] = {name = tostring(gid), ranks = rs}
  gid = gid + 1
end
if o.a2a then
  for t = 0, DP - 1 do
    groups.ep[#groups.ep + 1] = {name = tostring(gid), ranks = groups.tp[t + 1].ranks}
    gid = gid + 1
  end
end

-- per-rank constants
local bias, node_off = {}, {}
for r = 0, W - 1 do bias[r] = irand(0, 8000) end           -- ns
for n = 0, (W - 1) // o.gpn do node_off[n] = irand(0, 3000) end

local kname = {
  broadcast = "ncclDevKernel_Broadcast_RING_LL", allreduce = "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
  _allgather_base = "ncclDevKernel_AllGather_RING_LL", _reduce_scatter_base = "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL",
  all_to_allv = "ncclDevKernel_SendRecv",
}
local bpe = {Float = 4, BFloat16 = 2, Long = 8, Half = 2}

local ev = {} -- per rank: list of event strings
for r = 0, W - 1 do ev[r] = {} end
local corr = {}
for r = 0, W - 1 do corr[r] = 0 end

local function us(ns) return string.format("%d.%03d", ns // 1000, ns % 1000) end

-- one collective: every member's kernel, returns the common end (ns)
local function collective(t0, g, cname, dtype, in_n, out_n, transfer_ns, stream, splits)
  local arrive, last = {}, 0
  for _, r in ipairs(g.ranks) do
    local a = t0 + bias[r] + irand(0, 20000)
    if r == o.straggler then a = a + 400000 end
    arrive[r] = a
    if a > last then last = a end
  end
  local fin = last + transfer_ns
  for _, r in ipairs(g.ranks) do
    local dt = dtype
    if o.mismatch == r and cname == "allreduce" and g.name == groups.tp[1].name and not g.mismatched_done then dt = "Half" end
    local extra = irand(0, 2000)
    local ts = arrive[r] + node_off[r // o.gpn]
    local dur = fin - arrive[r] + extra
    corr[r] = corr[r] + 1
    local a = {string.format('"correlation":%d', corr[r]), string.format('"External id":%d', corr[r])}
    if not o.nopg then
      a[#a + 1] = string.format('"Process Group Name":"%s"', g.name)
      a[#a + 1] = string.format('"Process Group Ranks":"%s"', list_text(g.ranks))
      a[#a + 1] = '"Process Group Description":"undefined"'
    end
    a[#a + 1] = string.format('"Collective name":"%s"', cname)
    a[#a + 1] = string.format('"Group size":%d', #g.ranks)
    a[#a + 1] = string.format('"dtype":"%s"', dt)
    local inr, outr = in_n, out_n
    local ins, outs = "[]", "[]"
    if splits then
      ins, outs = list_text(splits.send[r]), list_text(splits.recv[r])
      inr, outr = splits.sin[r], splits.sout[r]
    end
    a[#a + 1] = string.format('"In msg nelems":%d', inr)
    a[#a + 1] = string.format('"Out msg nelems":%d', outr)
    a[#a + 1] = string.format('"In split size":"%s"', ins)
    a[#a + 1] = string.format('"Out split size":"%s"', outs)
    a[#a + 1] = string.format('"stream":%d', o.nopg and 7 or stream)
    local name = o.style == "rccl" and "rcclGenericKernel" or kname[cname]
    local list = ev[r]
    list[#list + 1] = string.format('{"ph":"X","cat":"kernel","name":"%s","pid":%d,"tid":%d,"ts":%s,"dur":%s,"args":{%s}}',
      name, r % o.gpn, o.nopg and 7 or stream, us(ts), us(dur), table.concat(a, ","))
  end
  if o.mismatch and g.name == groups.tp[1].name and cname == "allreduce" then g.mismatched_done = true end
  return fin
end

local function a2a_splits(g)
  local s = {send = {}, recv = {}, sin = {}, sout = {}}
  for _, r in ipairs(g.ranks) do s.send[r] = {} end
  for _, r in ipairs(g.ranks) do
    for _, d in ipairs(g.ranks) do s.send[r][#s.send[r] + 1] = irand(14000, 19000) * (d == g.ranks[2] and 3 or 1) end
  end
  for j, d in ipairs(g.ranks) do
    s.recv[d] = {}
    for _, r in ipairs(g.ranks) do s.recv[d][#s.recv[d] + 1] = s.send[r][j] end
  end
  for _, r in ipairs(g.ranks) do
    local a, b = 0, 0
    for _, x in ipairs(s.send[r]) do a = a + x end
    for _, x in ipairs(s.recv[r]) do b = b + x end
    s.sin[r], s.sout[r] = a, b
  end
  return s
end

-- the K compute kernels of one step of rank r (from time t, correlation ids
-- after c0), as one string; kept as {t, c0} until the file is written, so
-- that the generator's memory does not grow with K x ranks
local function compute_block(r, t0, c0)
  local out = {}
  for k = 1, o.compute do
    local c = c0 + k
    local ts = t0 + k * 1000 + bias[r] + node_off[r // o.gpn]
    out[#out + 1] = string.format(
      '{"ph":"X","cat":"kernel","name":"void gemm_kernel<%d>(float*, float const*, int)","pid":%d,"tid":7,"ts":%s,"dur":0.800,"args":{"correlation":%d,"External id":%d,"grid":[1,1,1],"block":[256,1,1],"stream":7}}',
      k % 17, r % o.gpn, us(ts), c, c)
    if o.launches then
      -- the CPU side, 20 us earlier on the rank's host thread
      out[#out + 1] = string.format(
        '{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":%d,"tid":1,"ts":%s,"dur":0.600,"args":{"External id":%d,"Sequence number":%d,"Fwd thread id":0,"Input Dims":[[1024,1024],[1024,1024]],"Input type":["float","float"]}}',
        100000 + r, us(ts - 20000), c, c)
      out[#out + 1] = string.format(
        '{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":%d,"tid":1,"ts":%s,"dur":0.300,"args":{"External id":%d,"cbid":211,"correlation":%d}}',
        100000 + r, us(ts - 19800), c, c)
    end
  end
  return table.concat(out, ",\n")
end

local t = 1700000000000000000 // 1000 -- ns: 1.7e12 us
for step = 1, o.steps do
  local step_t0 = t
  if o.compute > 0 then
    for r = 0, W - 1 do
      ev[r][#ev[r] + 1] = {t = t, c0 = corr[r]}
      corr[r] = corr[r] + o.compute
    end
  end
  t = t + o.compute * 1000 + 10000
  t = collective(t, groups.world, "broadcast", "Long", 8, 8, 300000, 20) + 50000
  for _, g in ipairs(groups.tp) do collective(t, g, "_allgather_base", "BFloat16", 4194304, 33554432, 400000, 24) end
  t = t + 1000000
  for _, g in ipairs(groups.tp) do collective(t, g, "allreduce", "BFloat16", 8388608, 8388608, 200000, 24) end
  t = t + 1000000
  if o.a2a then
    for _, g in ipairs(groups.ep) do
      collective(t, g, "all_to_allv", "BFloat16", 0, 0, irand(10000, 300000), 32, a2a_splits(g))
    end
    t = t + 1000000
  end
  for _, g in ipairs(groups.tp) do collective(t, g, "_reduce_scatter_base", "BFloat16", 33554432, 4194304, 400000, 24) end
  t = t + 1000000
  if DP > 1 then
    for _, g in ipairs(groups.dp) do collective(t, g, "allreduce", "Float", 16777216, 16777216, 2700000, 28) end
    t = t + 4000000
  end
  t = collective(t, groups.world, "allreduce", "Float", 1, 1, 20000, 20) + 100000
  -- the step's CPU annotation on each rank (its own clock)
  for r = 0, W - 1 do
    ev[r][#ev[r] + 1] = string.format('{"ph":"X","cat":"user_annotation","name":"ProfilerStep#%d","pid":%d,"tid":1,"ts":%s,"dur":%s}',
      step, 100000 + r, us(step_t0 + node_off[r // o.gpn]), us(t - step_t0))
  end
end

os.execute("mkdir -p '" .. o.out:gsub("'", "'\\''") .. "'")
for r = 0, W - 1 do
  local path = string.format("%s/rank%d_trace.json", o.out, r)
  local f = assert(io.open(path, "w"))
  local dev = {}
  for _ = 1, o.gpn do dev[#dev + 1] = '{"name":"Synthetic GPU","totalGlobalMem":85899345920}' end
  f:write(string.format('{"schemaVersion":1,"distributedInfo":{"backend":"nccl","rank":%d,"world_size":%d},', r, W))
  f:write('"deviceProperties":[', table.concat(dev, ","), '],\n"traceEvents":[\n')
  for j, e in ipairs(ev[r]) do
    if j > 1 then f:write(",\n") end
    f:write(type(e) == "table" and compute_block(r, e.t, e.c0) or e)
  end
  ev[r] = nil
  f:write("\n]}\n")
  f:close()
  if o.gzip then assert(os.execute("gzip -f '" .. path:gsub("'", "'\\''") .. "'")) end
end
io.stderr:write(string.format("gen_ranks: %d ranks in %s\n", W, o.out))

-- tracelens.fusion.overlap — which GPU events each fusion candidate claims,
-- and the resolution of candidates that claim the same ones (issue 11 item
-- 5; a FIX over the reference, docs/compat.md "Kernel fusion: overlapping
-- candidates").
--
-- A module candidate and the sibling sequence of one of its python frames
-- (or a nested module) hold the same kernels: fusing the outer one fuses
-- the inner one too, so reporting both counts that time twice. Here a
-- candidate's GPU events are the kernels of every instance (the extraction
-- registers how to find them, tracelens.fusion.candidates), and resolve()
-- keeps, among estimates whose events meet, the one that covers more kernel
-- time; the other is dropped, with the reason.
--
-- Owns the claims of the candidate objects of the extraction: a weak-keyed
-- table (as tracelens.json's key lists), so a candidate read back from a
-- JSON file has none and falls back on its first instance's gpu_op_uid.
local json = require "tracelens.json"

local M = {}

local claims = setmetatable({}, { __mode = "k" })

-- durations read from the trace when asked for: durs table -> its trace
local lazy_durs = setmetatable({}, { __mode = "k" })

-- C helpers over the uid lists (src/lua/lanalysis.c); absent outside tracelens
local uid_repeats = tl and tl.uid_repeats
local uid_claims = tl and tl.uid_claims

--- register(candidate, claim): how to list the candidate's GPU events.
--- claim = {trace =, first = {uid, ...} (the first instance's kernels, all of
--- them), lo =, hi = (the slice the candidate keeps, positions in every
--- instance), nodes = {uid, ...} (module: every instance's node) or
--- inst_len = {n, ...}, inst_kernels = {uid, ...} (sibling: every instance's
--- kernels, instance after instance)}, or {parts = {claim, ...}} (records of
--- one base merged into one candidate: the union of their claims).
function M.register(candidate, claim) claims[candidate] = claim end

local function slice_into(out, list, first, lo, hi)
  for i = lo, hi do
    local u = list[first + i - 1]
    if u == nil then return end
    out[#out + 1] = u
  end
end

--- gpu_events(candidate) -> array of the GPU event uids the candidate claims,
--- and their durations (µs) by uid; without a registered claim, the
--- gpu_op_uid of its listed kernels (module and sibling candidates:
--- kernels, comparative: kernels_trace1) with their dur_us.
local events_memo = setmetatable({}, { __mode = "k" })

function M.gpu_events(c)
  local memo = events_memo[c]
  if memo then return memo[1], memo[2] end
  local cl = claims[c]
  local uids, durs = {}, {}
  if cl == nil then
    for _, k in ipairs(c.kernels_trace1 or c.kernels or {}) do
      local u = tonumber(k.gpu_op_uid)
      if u then
        uids[#uids + 1] = u
        durs[u] = tonumber(k.dur_us) or 0
      end
    end
    events_memo[c] = { uids, durs }
    return uids, durs
  end
  local function claimed(part)
    if part.nodes then
      -- the first instance's kernels as listed, then the slice of every other
      -- instance node's kernel-category GPU events (as the C module walk lists them)
      if part.nodes[1] ~= nil then
        slice_into(uids, part.first, 1, part.lo, part.hi)
        local rest = part.trace:kernel_slices(part.nodes, 2, part.lo, part.hi)
        table.move(rest, 1, #rest, #uids + 1, uids)
      end
    elseif part.inst_len then
      local at = 1
      for _, n in ipairs(part.inst_len) do
        slice_into(uids, part.inst_kernels, at, part.lo, math.min(part.hi, n))
        at = at + n
      end
    elseif part.instances then -- comparative: every instance's mapped kernels
      for _, list in ipairs(part.instances) do slice_into(uids, list, 1, 1, #list) end
    else
      slice_into(uids, part.first, 1, part.lo, part.hi)
    end
  end
  for _, part in ipairs(cl.parts or { cl }) do claimed(part) end
  -- durations looked up when asked for (union_time_us needs only those of
  -- events claimed twice): one event view per kernel costs on large traces
  local trace = cl.trace or cl.parts[1].trace
  setmetatable(durs, { __index = function(t, u)
    local d = trace:dur_us(u) -- trace:node(u).dur or 0
    rawset(t, u, d)
    return d
  end })
  lazy_durs[durs] = trace
  events_memo[c] = { uids, durs }
  return uids, durs
end

--- claim_time_us(claim) -> Σ dur (µs) of the GPU events a claim (as
--- register's) lists, each instance's in order, instance after instance.
function M.claim_time_us(claim)
  local probe = {}
  claims[probe] = claim
  local uids, durs = M.gpu_events(probe)
  claims[probe], events_memo[probe] = nil, nil
  local total = 0
  for _, u in ipairs(uids) do total = total + durs[u] end
  return total
end

--- union_time_us(candidates, time_of) -> Σ time_of(c), less the time of each
--- GPU event claimed by more than one of them (counted once): the kernel time
--- the candidates cover. Without a shared event it is exactly Σ time_of(c).
function M.union_time_us(cands, time_of)
  local total, seen, extra = 0, {}, 0
  -- the events met again, found in C (tl.uid_repeats) when the lists hold integers
  local lists, durss = {}, {}
  for i, c in ipairs(cands) do
    total = total + (time_of(c) or 0)
    lists[i], durss[i] = M.gpu_events(c)
  end
  local list_of, rep
  if uid_repeats then list_of, rep = uid_repeats(lists) end
  if list_of then
    -- every duration from one trace: read at once (trace:durs_us), added in order
    local trace = lazy_durs[durss[1]]
    for _, d in ipairs(durss) do
      if lazy_durs[d] ~= trace then trace = nil break end
    end
    if trace then
      local d = trace:durs_us(rep)
      for k = 1, #rep do extra = extra + d[k] end
    else
      for k, u in ipairs(rep) do extra = extra + durss[list_of[k]][u] end
    end
  else
    for i, uids in ipairs(lists) do
      local durs = durss[i]
      for _, u in ipairs(uids) do
        if seen[u] then extra = extra + durs[u] else seen[u] = true end
      end
    end
  end
  if extra == 0 then return total end
  return total - extra
end

local function describe(kept, shared, n)
  local e = kept.estimate
  local name = string.format("%s (%s kernels per instance, %s instances)", tostring(e.operation),
    tostring(e.kernel_count), tostring(e.instance_count))
  if shared == n then
    return "nested", string.format("nested inside %s: all %d of its GPU kernel launches are part of that "
      .. "candidate, which is reported", name, n)
  end
  return "overlap", string.format("overlaps %s: %d of its %d GPU kernel launches are part of that candidate, "
    .. "which covers more kernel time and is reported", name, shared, n)
end

--- resolve(items) -> kept, dropped. items: {estimate =, candidate =, time_us =,
--- set_aside = bool (the fusion rules set it aside: it never keeps a GPU
--- event from another)}, in estimate order. Candidates are taken in order of
--- (not set aside, kernel time desc, impact_score desc, estimate order); one
--- that shares a GPU event with a candidate already kept is dropped. kept is
--- in estimate order; dropped entries are the JSON objects of
--- kernel_fusion_metrics.json's `dropped_overlapping` list.
function M.resolve(items)
  local order = {}
  for i, it in ipairs(items) do
    it.pos = i
    order[i] = it
  end
  table.sort(order, function(a, b)
    if a.set_aside ~= b.set_aside then return not a.set_aside end
    if a.time_us ~= b.time_us then return a.time_us > b.time_us end
    local x, y = a.estimate.impact_score or 0, b.estimate.impact_score or 0
    if x ~= y then return x > y end
    return a.pos < b.pos
  end)
  local owner = {} -- GPU event uid -> the kept item claiming it
  local keep, dropped = {}, {}
  -- the claims worked out in C (tl.uid_claims) when the lists hold integers
  local lists = {}
  for k, it in ipairs(order) do lists[k] = M.gpu_events(it.candidate) end
  local by_k, hits_k
  if uid_claims then by_k, hits_k = uid_claims(lists) end
  for k, it in ipairs(order) do
    local uids = lists[k]
    local hits, by = {}, nil
    if by_k then
      if by_k[k] > 0 then
        by = order[by_k[k]]
        hits[by] = hits_k[k]
      end
    else
      for _, u in ipairs(uids) do
        local o = owner[u]
        if o then
          hits[o] = (hits[o] or 0) + 1
          if by == nil or (hits[o] > hits[by]) then by = o end
        end
      end
    end
    if by then
      local e = it.estimate
      local relation, reason = describe(by, hits[by], #uids)
      dropped[#dropped + 1] = json.obj("operation", e.operation, "kernel_count", e.kernel_count,
        "instance_count", e.instance_count, "time_ms", e.time_ms, "impact_score", e.impact_score,
        "source", it.candidate.source,
        "kept_operation", by.estimate.operation, "kept_kernel_count", by.estimate.kernel_count, "relation", relation,
        "shared_gpu_events", hits[by], "gpu_events", #uids, "reason", reason)
    else
      keep[it] = true
      if not by_k then
        for _, u in ipairs(uids) do owner[u] = it end
      end
    end
  end
  local kept = {}
  for _, it in ipairs(items) do
    if keep[it] then kept[#kept + 1] = it end
  end
  return kept, dropped
end

return M

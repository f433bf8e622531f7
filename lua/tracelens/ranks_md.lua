-- tracelens.ranks_md — the "## Multi-rank" section of analysis.md
-- (`tracelens run orchestrator.lua --ranks DIR`, docs/analysis.md
-- "Multi-rank analysis"): who the straggler is and by how much, the slowest
-- collectives and their bus bandwidth against the GPU-to-GPU link, and the
-- imbalance between ranks. Every figure is read from the ranks report's
-- sheets (tl.ranks, the CSVs written next to analysis.md) or from tl.ranks'
-- per-rank figures; nothing is estimated here.
--
--   representative(ranks [, rank]) -> info, how   the rank analysed in full
--   section(d) -> lines                           d = {dir, sheets, ranks,
--                                                  rep, how, arch, platform}
local md = require "tracelens.md"

local M = {}

local function ms(us) return string.format("%.3f ms", us / 1000) end
local function mb(x)
  if not x then return "–" end
  return string.format(x ~= 0 and math.abs(x) < 0.001 and "%.3g" or "%.3f", x)
end
local function us1(x) return string.format("%.1f µs", x) end
local function plural(n, one, many) return n == 1 and one or (many or one .. "s") end

-- The lower median of the ranks ordered by key(r) (ties: by rank).
local function median_by(ranks, key)
  local order = {}
  for i, r in ipairs(ranks) do order[i] = r end
  table.sort(order, function(a, b)
    local ka, kb = key(a), key(b)
    if ka ~= kb then return ka < kb end
    return a.rank < b.rank
  end)
  return order[(#order + 1) // 2]
end

--- The representative rank: `rank` when given (an error naming the ranks
--- when it is not one of them), else the median rank by mean step wall time
--- when every rank has steps, else by GPU busy time. Returns the rank's
--- figures and a phrase saying how it was chosen.
function M.representative(ranks, rank)
  if rank then
    for _, r in ipairs(ranks) do
      if r.rank == rank then return r, "chosen with --rank" end
    end
    return nil, string.format("--rank %d: the traces are ranks 0 to %d", rank, #ranks - 1)
  end
  local with_steps, with_busy = true, true
  for _, r in ipairs(ranks) do
    if not r.step_time_us then with_steps = false end
    if not r.busy_us then with_busy = false end
  end
  if with_steps then
    return median_by(ranks, function(r) return r.step_time_us end),
      "the median rank by mean step wall time (ties by rank)"
  end
  if with_busy then
    return median_by(ranks, function(r) return r.busy_us end),
      "the median rank by GPU busy time (not every rank has ProfilerStep annotations; ties by rank)"
  end
  return ranks[1], "the first rank (not every rank has steps or GPU work to rank them by)"
end

-- min, argmin rank, max, argmax rank, mean of field over the ranks (nil when a rank lacks it)
local function spread(ranks, field)
  local lo, hi, sum
  for _, r in ipairs(ranks) do
    local v = r[field]
    if v == nil then return nil end
    if not lo or v < lo[1] then lo = { v, r.rank } end
    if not hi or v > hi[1] then hi = { v, r.rank } end
    sum = (sum or 0) + v
  end
  if not lo then return nil end
  return { min = lo[1], min_rank = lo[2], max = hi[1], max_rank = hi[2], mean = sum / #ranks }
end

-- Why no collective was matched: no collective kernel at all, or kernels
-- without the metadata that says which collective each is (nil: neither).
local function unmatched_reason(sheets)
  local long = sheets.nccl_long
  local n, named = long and long:nrows() or 0, 0
  if long then
    for _, row in long:rows() do
      local c = row["Collective name"]
      if c ~= nil and c ~= "" then named = named + 1 end
    end
  end
  if n == 0 then return "the traces hold no collective kernel (NCCL or RCCL)" end
  if named == 0 then
    return string.format("none of the %d collective %s records its collective name or process group (newer "
      .. "PyTorch versions write them in the kernels' args): which of them wait for each other across ranks is "
      .. "unknown", n, plural(n, "kernel"))
  end
  return nil
end

-- The straggler_summary row of the rank that arrived last most often, and
-- whether it is the straggler: alone at that count, last at over half of
-- its collectives. nil without rows.
local function last_arrival(sheets)
  local st = sheets.straggler_summary
  if not st or st:nrows() == 0 then return nil end
  local best, ties = nil, 0
  for _, row in st:rows() do
    local k = row.times_arrived_last or 0
    if not best or k > best.times_arrived_last then best, ties = row, 1
    elseif k == best.times_arrived_last then ties = ties + 1 end
  end
  local k, n = best.times_arrived_last or 0, best.num_collectives or 0
  return best, ties == 1 and k > 0 and k * 2 > n
end

-- The rank's collective calls that are not among the matched ones (the
-- straggler figures count the implicit-sync types only, spec §3.4:
-- broadcast, point-to-point, all_to_allv and the like are not matched):
-- "; its 2 other collective calls (`broadcast`) are not among them: ..." or
-- "". world8: 18 calls, 16 matched.
local function unmatched_calls_text(sheets, rank, matched)
  local t = sheets.nccl_long
  if not t or t:nrows() == 0 then return "" end
  local n, names, seen = 0, {}, {}
  local synced = {}
  local sync = sheets.nccl_implicit_sync
  if sync then
    for _, row in sync:rows() do synced[row["Collective name"]] = true end
  end
  for _, row in t:rows() do
    if row.rank == rank then
      n = n + 1
      local name = row["Collective name"]
      if not synced[name] and not seen[name] then
        seen[name] = true
        names[#names + 1] = md.code(tostring(name))
      end
    end
  end
  if n <= matched or #names == 0 then return "" end
  return string.format("; its %d other collective %s (%s) %s not among them: the report matches all-reduce, "
    .. "all-gather, reduce-scatter and all-to-all calls across ranks only", n - matched, plural(n - matched, "call"),
    table.concat(names, ", "), n - matched == 1 and "is" or "are")
end

local function straggler_lines(sheets)
  local st = sheets.straggler_summary
  local best, single = last_arrival(sheets)
  if not best then
    local why = unmatched_reason(sheets)
    return { "No collective was matched across the ranks (the ranks report has no straggler_summary rows)"
      .. (why and (": " .. why) or "") .. ", so there is no straggler to name." }
  end
  local out = {}
  local k, n = best.times_arrived_last or 0, best.num_collectives or 0
  if k == 0 then
    out[1] = "No rank arrived last at any matched collective (straggler_summary), so there is no straggler to name."
    return out
  end
  local others = {}
  for _, row in st:rows() do
    if row.rank ~= best.rank then others[#others + 1] = row end
  end
  local lead
  if single then
    lead = string.format("**Straggler: rank %d.** It arrived last at %d of its %d %s (%.1f%%, straggler_summary)",
      best.rank, k, n, plural(n, "collective"), best.pct_arrived_last) .. unmatched_calls_text(sheets, best.rank, n)
  else
    lead = string.format("**No single straggler.** The rank that arrived last most often is rank %d, "
      .. "at %d of its %d %s "
      .. "(%.1f%%, straggler_summary)", best.rank, k, n, plural(n, "collective"), best.pct_arrived_last)
  end
  local s = spread(others, "total_wait_time_us")
  local m = spread(others, "mean_wait_time_us")
  if s and m then
    lead = lead .. string.format("; it waited %s in total for the others, and the other ranks waited %s to %s in total "
      .. "for the last arrival of their collectives (%s to %s per collective on average).",
      us1(best.total_wait_time_us), us1(s.min), us1(s.max),
      us1(m.min), us1(m.max))
  else
    lead = lead .. "."
  end
  out[1] = lead
  return out
end

-- A rank's waits in the matched collectives of the process group it shares
-- with another rank where it waits longest (nccl_implicit_sync): {group (its
-- ranks as written), n, wait_us, other_wait_us}; nil when they share none.
local function waits_with(sheets, rank, other)
  local t = sheets.nccl_implicit_sync
  if not t or t:nrows() == 0 then return nil end
  local by_group, best = {}, nil
  local mine, theirs = string.format("rank_%d_wait_time", rank), string.format("rank_%d_wait_time", other)
  for _, row in t:rows() do
    local w, o = tonumber(row[mine]), tonumber(row[theirs])
    local g = row["Process Group Ranks"]
    if w and o and g then
      local r = by_group[g]
      if not r then
        r = { group = g, n = 0, wait_us = 0, other_wait_us = 0 }
        by_group[g] = r
      end
      r.n, r.wait_us, r.other_wait_us = r.n + 1, r.wait_us + w, r.other_wait_us + o
      if not best or r.wait_us > best.wait_us or (r.wait_us == best.wait_us and r.group < best.group) then best = r end
    end
  end
  return best
end

-- A rank the late-start rule flags beside the straggler, which waits for the
-- straggler in the groups they share while the straggler does not wait for
-- it: its late starts follow from the straggler's (tp_dp_16: rank 3, rank
-- 11's DP partner), a sentence; nil otherwise.
local function held_up_line(sheets, row, straggler)
  local w = waits_with(sheets, row.rank, straggler.rank)
  if not w or w.wait_us <= 0 or w.other_wait_us > 0 then return nil end
  local st = sheets.straggler_summary
  local mine
  for _, r in st:rows() do
    if r.rank == row.rank then mine = r end
  end
  if not mine or (mine.pct_arrived_last or 0) >= (straggler.pct_arrived_last or 0) then return nil end
  return string.format("Rank %d shares process group %s with rank %d and waits for it there (%s over %d matched %s, "
    .. "rank %d waits %s); it arrived last at only %.1f%% of its collectives: its late starts follow from waiting for "
    .. "the straggler, which the rule, reading starts alone, does not tell apart.", row.rank, md.text(tostring(w.group)),
    straggler.rank, us1(w.wait_us), w.n, plural(w.n, "collective"), straggler.rank, us1(w.other_wait_us),
    mine.pct_arrived_last or 0)
end

-- HTA's late-start straggler rule (rank_stragglers, docs/ranks.md).
local function late_start_lines(sheets)
  local t = sheets.rank_stragglers
  if not t or t:nrows() == 0 then
    return { "HTA's late-start rule names no straggler here: no communication kernel on a stream > 0 in a "
      .. "ProfilerStep after the first lasts at least 1% of the mean iteration (rank_stragglers is not written)." }
  end
  local flagged, flagged_ranks, iters, first = {}, {}, 0, nil
  for _, row in t:rows() do
    first = first or row
    if (row.iterations or 0) > iters then iters = row.iterations end
    if row.potential_straggler == "Yes" then
      flagged_ranks[row.rank] = true
      flagged[#flagged + 1] = string.format("rank %d (among the two latest in %d of %d %s)", row.rank, row.times_flagged,
        row.iterations, plural(row.iterations, "iteration"))
    end
  end
  local what = string.format("the start of the last `%s` on stream %s in each iteration, the two latest ranks flagged",
    md.text(first.kernel or "?"), tostring(first.stream))
  -- the rule flags the two latest ranks of every iteration: with two ranks
  -- (or fewer) that run the kernel it flags them all, whatever their starts
  local nrows = t:nrows()
  if nrows <= 2 then
    return { string.format("HTA's late-start rule (rank_stragglers: %s) names no straggler here: only %d %s the "
      .. "kernel, so the rule flags %s in every iteration, whatever %s.", what, nrows,
      nrows == 1 and "rank runs" or "ranks run", nrows == 1 and "it" or "both", nrows == 1 and "its start" or "their starts") }
  end
  if #flagged == 0 then
    return { string.format("HTA's late-start rule (rank_stragglers: %s) flags no rank.", what) }
  end
  local out = { string.format("HTA's late-start rule (rank_stragglers: %s) names %s.", what,
    table.concat(flagged, " and ")) }
  local straggler, single = last_arrival(sheets)
  if single and flagged_ranks[straggler.rank] then
    for _, row in t:rows() do
      if row.potential_straggler == "Yes" and row.rank ~= straggler.rank then
        out[#out + 1] = held_up_line(sheets, row, straggler)
      end
    end
  end
  return out
end

-- Exposed communication per rank (rank_comm_overlap): communication not overlapped by computation.
local function exposed_lines(ranks)
  local e = spread(ranks, "exposed_comm_us")
  local c = spread(ranks, "total_comm_us")
  if not e or not c or c.max <= 0 then return {} end
  local lo, hi
  for _, r in ipairs(ranks) do
    if r.total_comm_us > 0 then
      local p = 100 * (r.total_comm_us - r.exposed_comm_us) / r.total_comm_us
      lo, hi = math.min(lo or p, p), math.max(hi or p, p)
    end
  end
  lo, hi = lo or 0, hi or 0
  local overlap = string.format("%.1f%%", lo) == string.format("%.1f%%", hi)
    and string.format("on every rank %.1f%% of the communication time overlaps computation", lo)
    or string.format("%.1f%% to %.1f%% of each rank's communication time overlaps computation", lo, hi)
  return { string.format("Exposed communication (GPU communication time not overlapped by computation, "
    .. "rank_comm_overlap) ranges from %s (rank %d) to %s (rank %d) per rank; %s.", ms(e.min), e.min_rank, ms(e.max),
    e.max_rank, overlap) }
end

-- The start skew over the matched collectives (nccl_implicit_sync).
local function skew_lines(sheets)
  local t = sheets.nccl_implicit_sync
  if not t or t:nrows() == 0 then return {} end
  local col = t:column("skew in start time")
  local sum, mx, n = 0, nil, 0
  for i = 1, t:nrows() do
    local v = col[i]
    if v then
      sum, n = sum + v, n + 1
      if not mx or v > mx then mx = v end
    end
  end
  if n == 0 then return {} end
  return { string.format("Over the %d %s matched across ranks (nccl_implicit_sync), the skew in start time (last "
    .. "arrival minus first) is %s on average and %s at most.", n, plural(n, "collective"), us1(sum / n), us1(mx)) }
end

-- The GPU-to-GPU link of the arch file, or nil.
local function link_of(arch)
  if type(arch) ~= "table" then return nil end
  local gbps = tonumber(arch.gpu_link_gbps)
  if not gbps or gbps <= 0 then return nil end
  return { gbps = gbps, name = type(arch.gpu_link) == "string" and arch.gpu_link or "GPU-to-GPU link" }
end

local TOP = 3
local GB_PER_GIB = 1073741824 / 1e9 -- GiB/s -> GB/s

-- A summary row's key among the per-instance rows (nccl_implicit_sync).
local function instance_key(r)
  return table.concat({ tostring(r["Collective name"]), tostring(r.dtype), tostring(r["In msg nelems"]),
    tostring(r["Group size"]) }, "\0")
end

-- Per summary key: the process groups and node spans of its instances
-- ({groups = {name = true}, n_groups, spans = {span = true}}).
local function instance_groups(t)
  local by = {}
  if not t then return by end
  for _, r in t:rows() do
    local k = instance_key(r)
    local g = by[k] or { groups = {}, n_groups = 0, spans = {} }
    by[k] = g
    local pg = tostring(r["Process Group Name"])
    if not g.groups[pg] then g.groups[pg], g.n_groups = true, g.n_groups + 1 end
    if r.node_span then g.spans[tostring(r.node_span)] = true end
  end
  return by
end

local function collective_lines(d)
  local t = d.sheets.nccl_summary_implicit_sync
  if not t or t:nrows() == 0 then return {} end
  local rows = {}
  for i, row in t:rows() do rows[#rows + 1] = { i = i, row = row } end
  table.sort(rows, function(a, b)
    local x, y = a.row["Total comm latency (ms)"] or 0, b.row["Total comm latency (ms)"] or 0
    if x ~= y then return x > y end
    return a.i < b.i
  end)
  local link = link_of(d.arch)
  local groups = instance_groups(d.sheets.nccl_implicit_sync)
  local n = math.min(TOP, #rows)
  local crossing = 0 -- rows whose collectives cross nodes: not the GPU-to-GPU link's traffic
  local several -- the first row of several groups: its total adds up the calls of every group
  local out = { string.format("The %s by total communication latency (nccl_summary_implicit_sync; "
    .. "latency is the shortest of the ranks' kernels, about the last arrival's; the sheet's `bus bw (GB/s)` "
    .. "is in GiB/s, 2^30 bytes "
    .. "per second):", n == 1 and "slowest collective" or n .. " slowest collectives"), "" }
  out[#out + 1] = "| Collective | dtype | Message (MB) | Process group | Calls | Total latency (ms) | Mean latency (µs) "
    .. "| Mean bus bw (GiB/s) |" .. (link and " Of the link |" or "")
  out[#out + 1] = "|---|---|---:|---|---:|---:|---:|---:|" .. (link and "---:|" or "")
  for k = 1, n do
    local r = rows[k].row
    local bw = r["bus bw (GB/s)_mean"]
    local g = groups[instance_key(r)]
    -- the summary row names its first group; its calls may be of several
    local group = r["Process Group Name"] and ((g and g.n_groups > 1)
      and string.format("%d groups of %s ranks", g.n_groups, tostring(r["Group size"] or "?"))
      or string.format("%s (%s ranks)", tostring(r["Process Group Name"]), tostring(r["Group size"] or "?")))
    local inter = g and g.spans.inter_node
    if inter then crossing = crossing + 1 end
    if g and g.n_groups > 1 and not several then several = { row = r, n = g.n_groups } end
    local cells = { md.cell(r["Collective name"]), md.cell(r.dtype), mb(r["Full msg size (MB)"]),
      group and (md.cell(group) .. (inter and " (across nodes)" or "")) or "–",
      tostring(math.tointeger(r.count) or r.count), string.format("%.3f", r["Total comm latency (ms)"] or 0),
      string.format("%.3f", r.comm_latency_mean or 0), bw and string.format("%.2f", bw) or "–" }
    if link then
      cells[#cells + 1] = (bw and not inter) and string.format("%.1f%%", 100 * bw * GB_PER_GIB / link.gbps) or "–"
    end
    out[#out + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  out[#out + 1] = ""
  if several then
    local total = several.row["Total comm latency (ms)"] or 0
    out[#out + 1] = string.format("A row of several process groups adds up the calls of all of them, while a rank "
      .. "takes part in its own group's only, so its total latency is more than any rank spends in it: %s's %.3f ms "
      .. "over %d groups is %.3f ms per group.", md.text(tostring(several.row["Collective name"])), total, several.n,
      total / several.n)
    out[#out + 1] = ""
  end
  if link then
    out[#out + 1] = string.format("The bus bandwidth is compared with the %s of %s: %.1f GB/s per GPU and direction "
      .. "(the arch file's gpu_link_gbps; the share is of the bus bandwidth converted from GiB/s to GB/s).",
      md.text(link.name), md.text(d.platform or "this GPU"), link.gbps)
    if crossing > 0 then
      out[#out] = out[#out] .. " A collective across nodes (node_span inter_node) moves its data over the network "
        .. "between the nodes, whose bandwidth the traces do not give: it has no share of the link."
    end
  elseif d.arch then
    out[#out + 1] = string.format("The arch file of %s gives no GPU-to-GPU link bandwidth (gpu_link_gbps), so the "
      .. "bus bandwidth is not compared with a link: the link is unknown.", md.text(d.platform or "this GPU"))
  else
    out[#out + 1] = "There is no arch file for this GPU, so the bus bandwidth is not compared with a link: the link "
      .. "is unknown."
  end
  return out
end

-- HTA's kinds count memsets as memory work; the Executive Summary's computation (the perf report's
-- gpu_timeline) counts them as computation (world8: 76.936 against 77.19 ms on one rank).
local HTA_KINDS = " HTA's kinds, in which memsets are memory work, unlike the Executive Summary's computation"

local function imbalance_lines(d)
  local out = {}
  local c = spread(d.ranks, "compute_us")
  if c and c.mean > 0 and c.max == c.min then
    out[#out + 1] = string.format("GPU computation time (rank_temporal_breakdown;%s) is %s on every rank.", HTA_KINDS,
      ms(c.min))
    out[#out + 1] = ""
  elseif c and c.mean > 0 then
    out[#out + 1] = string.format("GPU computation time per rank (rank_temporal_breakdown;%s) ranges from %s "
      .. "(rank %d) to %s (rank %d): the slowest rank computes %.1f%% more than the mean %s.", HTA_KINDS, ms(c.min),
      c.min_rank, ms(c.max), c.max_rank, 100 * (c.max - c.mean) / c.mean, ms(c.mean))
    out[#out + 1] = ""
  end
  local b = spread(d.ranks, "busy_us")
  if b then
    out[#out + 1] = string.format("GPU busy time per rank (every GPU event) ranges from %s (rank %d) to %s "
      .. "(rank %d): a spread of %s, "
      .. "%.1f%% of the mean %s.", ms(b.min), b.min_rank, ms(b.max), b.max_rank, ms(b.max - b.min),
      b.mean > 0 and 100 * (b.max - b.min) / b.mean or 0, ms(b.mean))
  else
    out[#out + 1] = "Not every rank has GPU events, so GPU busy time is not compared across ranks."
  end
  out[#out + 1] = ""
  local s = spread(d.ranks, "step_time_us")
  if s then
    if s.max == s.min then
      out[#out + 1] = string.format("The mean step wall time is %s on every rank.", ms(s.min))
    else
      out[#out + 1] = string.format("The mean step wall time per rank ranges from %s (rank %d) to %s (rank %d): a "
        .. "spread of %s, %.1f%% of the mean %s.", ms(s.min), s.min_rank, ms(s.max), s.max_rank, ms(s.max - s.min),
        s.mean > 0 and 100 * (s.max - s.min) / s.mean or 0, ms(s.mean))
    end
  else
    out[#out + 1] = "Not every rank has ProfilerStep annotations, so step times are not compared across ranks."
  end
  return out
end

local MAX_TABLE_RANKS = 64

local function rank_table(d)
  if #d.ranks > MAX_TABLE_RANKS then
    return { string.format("(%d ranks: the per-rank figures are in collective_report_csvs/straggler_summary.csv.)",
      #d.ranks) }
  end
  local by_rank = {}
  local st = d.sheets.straggler_summary
  if st then for _, row in st:rows() do by_rank[row.rank] = row end end
  local out = { "| Rank | Steps | Mean step (ms) | GPU busy (ms) | Exposed comm (ms) | Arrived last | Total wait (µs) |",
    "|---:|---:|---:|---:|---:|---:|---:|" }
  local function f(v, scale) return v and string.format("%.3f", v / (scale or 1)) or "–" end
  for _, r in ipairs(d.ranks) do
    local s = by_rank[r.rank]
    out[#out + 1] = string.format("| %d%s | %d | %s | %s | %s | %s | %s |", r.rank, r.rank == d.rep.rank and " *" or "",
      r.steps, f(r.step_time_us, 1000), f(r.busy_us, 1000), f(r.exposed_comm_us, 1000),
      s and string.format("%d of %d", s.times_arrived_last, s.num_collectives) or "–",
      s and string.format("%.1f", s.total_wait_time_us) or "–")
  end
  out[#out + 1] = ""
  out[#out + 1] = "\\* the representative rank."
  return out
end

--- The "## Multi-rank" section.
function M.section(d)
  local n = #d.ranks
  local out = { "## Multi-rank", "" }
  out[#out + 1] = string.format("%d rank %s in %s. The rest of this report analyses rank %d, %s; the collective "
    .. "report of all ranks is in collective_report_csvs/ (the sheets of `tracelens ranks`, docs/ranks.md).", n,
    plural(n, "trace"), md.code(d.dir), d.rep.rank, d.how)
  -- a sample of a larger job (HTA's trace_filter keeps 2 of 128 ranks): the figures below are among these only
  local world = 0
  for _, r in ipairs(d.ranks) do
    if (r.world_size or 0) > world then world = r.world_size end
  end
  if world > n then
    out[#out] = out[#out] .. string.format(" The traces say the job had %d ranks (distributedInfo.world_size): "
      .. "these are %d of them, so the straggler, the waits and the imbalance below are among these %d only, "
      .. "and a collective's other members are missing.", world, n, n)
  end
  out[#out + 1] = ""
  for _, part in ipairs({ straggler_lines(d.sheets), late_start_lines(d.sheets), skew_lines(d.sheets),
    collective_lines(d), exposed_lines(d.ranks), imbalance_lines(d), rank_table(d) }) do
    if #part > 0 then
      for _, l in ipairs(part) do out[#out + 1] = l end
      out[#out + 1] = ""
    end
  end
  return out
end

return M

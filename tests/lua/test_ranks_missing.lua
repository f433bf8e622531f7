-- `tracelens ranks --allow-missing-ranks` (spec multi-rank.md §11.4,
-- docs/ranks.md "Options"): a collective with fewer members than its
-- Process Group Ranks gets its metrics over the present members and a
-- `missing_ranks` count as the last column of nccl_implicit_sync and
-- nccl_all2allv (wide and long layouts, and through summarize + reduce);
-- the counts are recomputed here from the generated JSON. Without the
-- option there is no such column; ranks left out are not reported as a
-- membership mismatch; simplified mode counts against the world size.
local root, _, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
bin = bin or T.tracelens_bin()
local gen = T.q(bin) .. " run " .. T.q(root .. "/bench/gen_ranks.lua")
local tmp = T.tmpdir()

local function sh(cmd, what)
  local ok, code, out, err = T.run(cmd)
  T.check(ok, what .. " (" .. tostring(code) .. "): " .. err)
  return ok, out, err
end

local function col_index(h)
  local ix = {}
  for i, c in ipairs(h) do ix[c] = i end
  return ix
end

-- 8 ranks, TP 4, DP groups of 2, EP groups with all_to_allv, 2 steps; ranks 2 and 5 left out
local W, gone = 8, {[2] = true, [5] = true}
local g = tmp .. "/g8"
sh(gen .. " -o " .. T.q(g) .. " --ranks 8 --tp 4 --gpus-per-node 4 --all2allv --steps 2 --seed 3", "generate")

-- From the JSON of every rank: per process group its rank list, and per
-- rank how many collectives it ran in each group (collective_id is
-- "<group>_<index in group>").
local pg_ranks, count = {}, {}
for r = 0, W - 1 do
  local text = assert(T.read_file(g .. "/rank" .. r .. "_trace.json"), "rank trace")
  count[r] = {}
  for pg, list in text:gmatch('"Process Group Name":"([^"]*)","Process Group Ranks":"%[([^%]]*)%]"') do
    local ranks = {}
    for x in list:gmatch("%d+") do ranks[#ranks + 1] = math.tointeger(tonumber(x)) end
    pg_ranks[pg] = ranks
    count[r][pg] = (count[r][pg] or 0) + 1
  end
end
-- expected members and missing ranks of collective "<pg>_<i>" once the gone ranks are left out
local function expected(cid)
  local pg, i = cid:match("^(.+)_(%d+)$")
  i = math.tointeger(tonumber(i))
  local members, listed = 0, 0
  for _, r in ipairs(pg_ranks[pg] or {}) do
    listed = listed + 1
    if not gone[r] and (count[r][pg] or 0) > i then members = members + 1 end
  end
  return members, listed - members
end

local gap = tmp .. "/gap"
sh("mkdir " .. T.q(gap), "mkdir")
for r = 0, W - 1 do
  if not gone[r] then sh("cp " .. T.q(g .. "/rank" .. r .. "_trace.json") .. " " .. T.q(gap), "copy") end
end

local function run(dir, out, opts)
  local _, _, err = sh(T.q(bin) .. " ranks -q --no-xlsx " .. opts .. " " .. T.q(dir) .. " -o " .. T.q(out),
    "ranks " .. opts)
  return out .. "/collective_report_csvs", err
end

-- the wide layout
local wide, err = run(gap, tmp .. "/wide", "--allow-missing-ranks --world_size 8")
T.check(not err:find("not their Process Group Ranks", 1, true),
  "ranks left out are not a membership mismatch: " .. err)
local checked = 0
for _, sheet in ipairs({"nccl_implicit_sync", "nccl_all2allv"}) do
  local h, rows = T.read_csv(wide .. "/" .. sheet .. ".csv")
  T.eq(h[#h], "missing_ranks", sheet .. ": missing_ranks is the last column")
  local ix = col_index(h)
  T.check(not ix.rank_2_ts and not ix.rank_5_ts, sheet .. ": no columns for the ranks left out")
  local some = false
  for _, row in ipairs(rows) do
    local cid = row[ix.collective_id]
    local members, miss = expected(cid)
    T.eq(row[#h], tostring(miss), sheet .. " " .. cid .. " missing_ranks")
    if miss > 0 then some = true end
    checked = checked + 1
    -- metrics over the present members: the shortest present duration is
    -- comm_latency (nccl_implicit_sync) or min_rank_dur (nccl_all2allv)
    local best, n = nil, 0
    for r = 0, W - 1 do
      local c = ix["rank_" .. r .. "_dur"]
      local v = c and tonumber(row[c])
      if v then
        n = n + 1
        if not best or v < best then best = v end
      end
    end
    T.eq(n, members, sheet .. " " .. cid .. " members")
    local lat = sheet == "nccl_implicit_sync" and "comm_latency" or "min_rank_dur (us)"
    T.eq(tonumber(row[ix[lat]]), best, sheet .. " " .. cid .. " " .. lat .. " over the present members")
  end
  T.check(some, sheet .. ": some collective lacks a member")
end
T.eq(checked, 2 * (6 + 4 + 1) + 2 * 2, "rows checked (2 steps: 6 TP, 4 DP, 1 world; 2 all_to_allv)")

-- the long layout: num_ranks + missing_ranks = the length of Process Group Ranks
local long = run(gap, tmp .. "/long", "--allow-missing-ranks --world_size 8 --per-rank-columns long")
for _, sheet in ipairs({"nccl_implicit_sync", "nccl_all2allv"}) do
  local h, rows = T.read_csv(long .. "/" .. sheet .. ".csv")
  T.eq(h[#h], "missing_ranks", sheet .. " (long): missing_ranks is the last column")
  local ix = col_index(h)
  for _, row in ipairs(rows) do
    local cid = row[ix.collective_id]
    local members, miss = expected(cid)
    T.eq(row[ix.num_ranks], tostring(members), sheet .. " (long) " .. cid .. " num_ranks")
    T.eq(row[#h], tostring(miss), sheet .. " (long) " .. cid .. " missing_ranks")
  end
end

-- summarize + reduce: the same bytes
local tls = tmp .. "/tls"
sh("mkdir " .. T.q(tls), "mkdir")
local list = {}
for r = 0, W - 1 do
  if not gone[r] then
    local f = tls .. "/r" .. r .. ".tls"
    sh(T.q(bin) .. " ranks summarize -q " .. T.q(gap .. "/rank" .. r .. "_trace.json") .. " -o " .. T.q(f), "summarize")
    list[#list + 1] = T.q(f)
  end
end
sh(T.q(bin) .. " ranks reduce -q --no-xlsx --allow-missing-ranks --world_size 8 " .. table.concat(list, " ") ..
  " -o " .. T.q(tmp .. "/red"), "reduce")
T.check(T.run("diff -r " .. T.q(wide) .. " " .. T.q(tmp .. "/red/collective_report_csvs")),
  "reduce --allow-missing-ranks differs from the direct run")

-- every rank present: the column is there with zeros; without the option it is not
local full = run(g, tmp .. "/full", "--allow-missing-ranks --world_size 8")
local h, rows = T.read_csv(full .. "/nccl_implicit_sync.csv")
T.eq(h[#h], "missing_ranks", "complete set: missing_ranks column")
local zeros = true
for _, row in ipairs(rows) do zeros = zeros and row[#h] == "0" end
T.check(zeros, "complete set: missing_ranks all 0")
local plain = run(g, tmp .. "/plain", "")
for _, sheet in ipairs({"nccl_implicit_sync", "nccl_all2allv"}) do
  local ph = T.read_csv(plain .. "/" .. sheet .. ".csv")
  T.check(not col_index(ph).missing_ranks, sheet .. ": no missing_ranks without --allow-missing-ranks")
end

-- simplified mode (no process-group metadata): the collective spans the world
local sp = tmp .. "/sp"
sh(gen .. " -o " .. T.q(sp) .. " --ranks 4 --tp 2 --gpus-per-node 4 --no-pg --steps 1", "generate simple")
sh("rm " .. T.q(sp .. "/rank1_trace.json"), "rm")
local spo = run(sp, tmp .. "/spo", "--allow-missing-ranks --world_size 4")
local sh_, srows = T.read_csv(spo .. "/nccl_implicit_sync.csv")
T.check(#srows > 0, "simplified: rows")
for _, row in ipairs(srows) do T.eq(row[#sh_], "1", "simplified " .. row[1] .. " missing_ranks") end

T.rmrf(tmp)
T.finish()

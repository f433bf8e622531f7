-- `tracelens ranks` on traces made by bench/gen_ranks.lua (deterministic
-- synthetic rank traces): the straggler is found, the row and column counts
-- follow the process-group layout, the output does not depend on the order
-- in which rank files are found (--rank-from distinfo on shuffled names) or
-- on compression, simplified mode (no process-group metadata) matches by
-- position, and a metadata mismatch is a one-line error naming the field,
-- the collective and the ranks.
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

local function same_csvs(a, b, what)
  local ok = T.run("diff -r " .. T.q(a) .. " " .. T.q(b))
  T.check(ok, what .. ": CSVs differ between " .. a .. " and " .. b)
end

-- 8 ranks, TP 4 (2 TP groups, 4 DP groups of 2), EP groups with all_to_allv, 2 steps, straggler 5
local g = tmp .. "/g8"
sh(gen .. " -o " .. T.q(g) .. " --ranks 8 --tp 4 --gpus-per-node 4 --all2allv --straggler 5 --steps 2 --seed 3", "generate")
sh(T.q(bin) .. " ranks -q --no-xlsx --all2allv_heatmap " .. T.q(g) .. " -o " .. T.q(tmp .. "/o8"), "ranks g8")
local C8 = tmp .. "/o8/collective_report_csvs"
local h, rows = T.read_csv(C8 .. "/straggler_summary.csv")
T.eq(#rows, 8, "straggler_summary: one row per rank")
T.eq(rows[1][1], "5", "the straggler first")
T.eq(rows[1][2], "0.0", "the straggler never waits")
T.eq(rows[1][4], rows[1][7], "the straggler arrives last in every one of its collectives")
T.eq(h[9], "node_id", "straggler_summary node_id")
T.eq(rows[1][9], "1", "rank 5 is on node 1 (4 GPUs per node)")
-- per step and rank: broadcast, 3 TP collectives, all_to_allv, DP allreduce, world allreduce
local _, long = T.read_csv(C8 .. "/nccl_long.csv")
T.eq(#long, 2 * 8 * 7, "nccl_long rows")
-- per step: 2 TP groups x 3, 4 DP groups, 1 world allreduce
local ih, irows = T.read_csv(C8 .. "/nccl_implicit_sync.csv")
T.eq(#irows, 2 * (6 + 4 + 1), "nccl_implicit_sync rows")
T.eq(#ih, 18 + 3 * 8 + 1, "nccl_implicit_sync columns: 18 + 3 per rank + node_span")
local _, arows = T.read_csv(C8 .. "/nccl_all2allv.csv")
T.eq(#arows, 2 * 2, "nccl_all2allv rows")
local _, hm = T.read_csv(C8 .. "/nccl_all2allv_heatmap.csv")
T.eq(#hm, 2 * 4 * 4, "heatmap: 4 x 4 pairs in each EP group")
T.eq(hm[#hm][1] .. "->" .. hm[#hm][2], "7->7", "heatmap dst is a global rank")

-- the narrow layout (--per-rank-columns long): the same general columns plus
-- `last arrival rank` and `num_ranks`, the per-rank values one row per
-- (collective, rank) in nccl_implicit_sync_ranks / nccl_all2allv_ranks
sh(T.q(bin) .. " ranks -q --no-xlsx --all2allv_heatmap --per-rank-columns long " .. T.q(g) .. " -o " .. T.q(tmp .. "/o8l"), "ranks long")
local L8 = tmp .. "/o8l/collective_report_csvs"
local nh, nrows = T.read_csv(L8 .. "/nccl_implicit_sync.csv")
T.eq(table.concat(nh, "|", 19, 21), "last arrival rank|num_ranks|node_span", "narrow nccl_implicit_sync columns")
T.eq(#nrows, #irows, "narrow nccl_implicit_sync rows")
local col = {}
for i, c in ipairs(ih) do col[c] = i end
local wide_wait, nsum = {}, 0
for r, row in ipairs(irows) do
  T.eq(table.concat(nrows[r], "|", 1, 18), table.concat(row, "|", 1, 18), "narrow general columns, row " .. r)
  nsum = nsum + tonumber(nrows[r][20])
  for rank = 0, 7 do
    local w = row[col["rank_" .. rank .. "_wait_time"]]
    if w ~= "" then
      wide_wait[row[1] .. "/" .. rank] = w
      if tonumber(w) == 0 and not wide_wait[row[1]] then wide_wait[row[1]] = tostring(rank) end
    end
  end
  T.eq(nrows[r][19], wide_wait[row[1]], "last arrival rank of " .. row[1])
end
local _, rrows = T.read_csv(L8 .. "/nccl_implicit_sync_ranks.csv")
T.eq(#rrows, nsum, "nccl_implicit_sync_ranks: one row per member")
local bad = 0
for _, row in ipairs(rrows) do
  if wide_wait[row[1] .. "/" .. row[2]] ~= row[5] then bad = bad + 1 end
end
T.eq(bad, 0, "nccl_implicit_sync_ranks wait_time equals the wide rank_<r>_wait_time")
local _, a2l = T.read_csv(L8 .. "/nccl_all2allv_ranks.csv")
T.eq(#a2l, #arows * 4, "nccl_all2allv_ranks: 4 members per all_to_allv")
T.eq(a2l[1][1], arows[1][1], "nccl_all2allv_ranks follows the sheet's order")
same_csvs(C8 .. "/straggler_summary.csv", L8 .. "/straggler_summary.csv", "straggler_summary in either layout")
-- auto: narrow beyond 64 ranks
local g72 = tmp .. "/g72"
sh(gen .. " -o " .. T.q(g72) .. " --ranks 72 --tp 8 --steps 1", "generate 72")
sh(T.q(bin) .. " ranks -q --no-xlsx " .. T.q(g72) .. " -o " .. T.q(tmp .. "/o72"), "ranks 72")
local h72 = T.read_csv(tmp .. "/o72/collective_report_csvs/nccl_implicit_sync.csv")
T.eq(#h72, 21, "72 ranks: the narrow layout by default")
T.check(T.file_exists(tmp .. "/o72/collective_report_csvs/nccl_implicit_sync_ranks.csv"), "72 ranks: nccl_implicit_sync_ranks")

-- the same traces found in another order, ranks from distributedInfo
local s = tmp .. "/shuffled"
os.execute("mkdir -p " .. T.q(s))
local perm = {3, 7, 0, 5, 1, 6, 2, 4}
for r = 0, 7 do
  os.execute(string.format("cp %s %s", T.q(g .. "/rank" .. r .. "_trace.json"), T.q(s .. "/t" .. perm[r + 1] .. ".json")))
end
sh(T.q(bin) .. " ranks -q --no-xlsx --all2allv_heatmap --rank-from distinfo --trace_glob " .. T.q(s .. "/*.json")
  .. " -o " .. T.q(tmp .. "/o8s"), "ranks shuffled")
same_csvs(C8, tmp .. "/o8s/collective_report_csvs", "shuffled names")

-- gzip: the same report
local gz = tmp .. "/gz"
sh(gen .. " -o " .. T.q(gz) .. " --ranks 8 --tp 4 --gpus-per-node 4 --all2allv --straggler 5 --steps 2 --seed 3 --gzip", "generate gz")
sh(T.q(bin) .. " ranks -q --no-xlsx --all2allv_heatmap " .. T.q(gz) .. " -o " .. T.q(tmp .. "/o8z"), "ranks gz")
same_csvs(C8, tmp .. "/o8z/collective_report_csvs", "gzip")

-- simplified mode
local sp = tmp .. "/simple"
sh(gen .. " -o " .. T.q(sp) .. " --ranks 4 --tp 2 --gpus-per-node 4 --no-pg --steps 1", "generate simple")
sh(T.q(bin) .. " ranks -q --no-xlsx " .. T.q(sp) .. " -o " .. T.q(tmp .. "/os"), "ranks simple")
local lh, lrows = T.read_csv(tmp .. "/os/collective_report_csvs/nccl_long.csv")
T.eq(lh[1] .. "," .. lh[4], "collective_id,Process Group Name", "nccl_long header")
T.eq(lrows[1][1] .. "," .. lrows[1][4], "0,all", "simplified: ids by position, group all")
-- per step and rank: broadcast, 3 TP, DP allreduce, world allreduce = 6 collectives, matched by position
T.eq(#lrows, 4 * 6, "simplified nccl_long rows")
local _, srows = T.read_csv(tmp .. "/os/collective_report_csvs/nccl_implicit_sync.csv")
T.eq(#srows, 6, "simplified: every position is one collective (names of implicit-sync type or none)")

-- a metadata mismatch: rank 2 says Half on the first TP allreduce
local mm = tmp .. "/mm"
sh(gen .. " -o " .. T.q(mm) .. " --ranks 8 --tp 4 --mismatch 2 --steps 1", "generate mismatch")
local ok, code, _, err = T.run(T.q(bin) .. " ranks -q " .. T.q(mm) .. " -o " .. T.q(tmp .. "/om"))
T.check(not ok and code == 1, "mismatch: exit 1, got " .. tostring(code))
T.eq(err, "tracelens: metadata mismatch in 'dtype' for collective 1_1: BFloat16 (ranks 0,1,3), Half (rank 2)\n",
  "mismatch message")
T.check(not T.dir_exists(tmp .. "/om"), "mismatch: nothing written")
sh(T.q(bin) .. " ranks -q --no-xlsx --no-strict-metadata " .. T.q(mm) .. " -o " .. T.q(tmp .. "/om2"), "no-strict-metadata")

T.rmrf(tmp)
T.finish()

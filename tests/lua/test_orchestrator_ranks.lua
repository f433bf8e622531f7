-- `tracelens run orchestrator.lua --ranks DIR` (issue 15, docs/analysis.md
-- "Multi-rank analysis"): the Multi-rank section of analysis.md names the
-- straggler of the ranks report and quotes its figures, the slowest
-- collectives and the per-rank imbalance exactly as the CSVs and the traces
-- give them; the representative rank is the median by step time (or
-- --rank); OUT passes `tracelens validate`; usage errors are one line; and
-- tl.ranks is refused in a sandboxed task.
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local tmp = T.tmpdir()
local orch_path = root .. "/lua/orchestrator.lua"
local function orch(args)
  return T.run(string.format("cd %s && %s run %s %s", T.q(tmp), T.q(bin), T.q(orch_path), args))
end
local function section(path)
  local md = assert(T.read_file(path), path)
  return md:match("\n## Multi%-rank\n(.-)\n## ") or ""
end
local function has(s, needle, what) T.check(s:find(needle, 1, true), what .. ": no '" .. needle .. "' in:\n" .. s) end
local function f1(x) return string.format("%.1f", x) end
local function f3(x) return string.format("%.3f", x) end

-- usage errors -------------------------------------------------------------
local empty = tmp .. "/empty"
os.execute("mkdir -p " .. T.q(empty))
local ok, code, out, err = orch("--ranks " .. T.q(empty) .. " " .. T.q(root .. "/examples/demo_trace.json"))
T.eq(code, 2, "--ranks with a TRACE: exit 2")
has(err, "--ranks takes the rank traces from DIR: give no TRACE", "--ranks with a TRACE")
T.eq(select(2, err:gsub("\n", "")), 1, "--ranks with a TRACE: one line")
ok, code, out, err = orch("--ranks " .. T.q(empty) .. " -o out_empty -q")
T.eq(code, 1, "empty dir: exit 1")
has(err, "tracelens: no rank traces found: " .. empty .. "/rank0_trace.json.gz does not exist", "empty dir")
T.eq(select(2, err:gsub("\n", "")), 1, "empty dir: one line")
T.check(not T.dir_exists(tmp .. "/out_empty"), "empty dir: no OUT")
ok, code, out, err = orch(T.q(root .. "/examples/demo_trace.json") .. " --rank 1")
T.eq(code, 2, "--rank without --ranks: exit 2")
has(err, "--rank needs --ranks", "--rank without --ranks")
ok, code, out, err = orch("--ranks " .. T.q(empty) .. " --rank -1")
T.eq(code, 2, "--rank -1: exit 2")
ok, code, out, err = orch("--ranks " .. T.q(empty) .. " --compare x")
T.eq(code, 2, "--ranks --compare: exit 2")
has(err, "--ranks cannot be combined with --compare or --inference", "--ranks --compare")
ok, code, out = orch("--help")
has(out, "--ranks DIR", "--help names --ranks")

-- tl.ranks: refused in a sandboxed task ----------------------------------
local r = tl.parallel({ { code = "local d = ...; return tl.ranks(d)", args = { empty } } })
T.check(not r[1].ok and tostring(r[1].error):find("tl.ranks is not allowed in a sandboxed state", 1, true),
  "tl.ranks refused in a task: " .. tostring(r[1].error))

-- the facts the section must state, from a ranks report's CSVs ----------------
local function facts(csvs)
  local st = T.csv_records(csvs .. "/straggler_summary.csv")
  local best
  for _, row in ipairs(st) do
    if not best or tonumber(row.times_arrived_last) > tonumber(best.times_arrived_last) then best = row end
  end
  local lo, hi
  for _, row in ipairs(st) do
    if row ~= best then
      local w = tonumber(row.total_wait_time_us)
      lo, hi = math.min(lo or w, w), math.max(hi or w, w)
    end
  end
  local summ = T.csv_records(csvs .. "/nccl_summary_implicit_sync.csv")
  table.sort(summ, function(a, b) return tonumber(a["Total comm latency (ms)"]) > tonumber(b["Total comm latency (ms)"]) end)
  return { straggler = tonumber(best.rank), last = tonumber(best.times_arrived_last),
    n = tonumber(best.num_collectives), wait_lo = lo, wait_hi = hi, top = summ[1] }
end

local function check_section(sec, fx, what)
  has(sec, string.format("**Straggler: rank %d.** It arrived last at %d of its %d collectives", fx.straggler, fx.last,
    fx.n), what .. ": the straggler")
  has(sec, string.format("the other ranks waited %s µs to %s µs in total", f1(fx.wait_lo), f1(fx.wait_hi)),
    what .. ": the waits")
  local top = fx.top
  has(sec, string.format("| %s | %s | %s |", top["Collective name"], top.dtype, f3(tonumber(top["Full msg size (MB)"]))),
    what .. ": the slowest collective")
  has(sec, string.format("| %s | %s | %.2f |", f3(tonumber(top["Total comm latency (ms)"])),
    f3(tonumber(top.comm_latency_mean)), tonumber(top["bus bw (GB/s)_mean"])), what .. ": its latency and bus bandwidth")
end

-- per-rank figures from the traces themselves
local function per_rank(dir, n)
  local out = {}
  for i = 0, n - 1 do
    local p = dir .. "/rank" .. i .. "_trace.json"
    if not T.file_exists(p) then p = p .. ".gz" end
    local t = tl.load(p)
    local steps = t:steps()
    local sum = 0
    for _, s in ipairs(steps) do sum = sum + s.wall_us end
    out[i] = { busy = t:timeline({ include_unlinked = true }).busy_time, step = #steps > 0 and sum / #steps or nil }
    t = nil
    collectgarbage()
  end
  return out
end

local function check_busy(sec, pr, n, what)
  local lo, hi
  for i = 0, n - 1 do
    if not lo or pr[i].busy < pr[lo].busy then lo = i end
    if not hi or pr[i].busy > pr[hi].busy then hi = i end
  end
  has(sec, string.format("ranges from %s ms (rank %d) to %s ms (rank %d)", f3(pr[lo].busy / 1000), lo,
    f3(pr[hi].busy / 1000), hi), what .. ": GPU busy spread")
end

-- the median rank by key (ties by rank), as the orchestrator picks it
local function median(pr, n, key)
  local order = {}
  for i = 0, n - 1 do order[#order + 1] = i end
  table.sort(order, function(a, b)
    if pr[a][key] ~= pr[b][key] then return pr[a][key] < pr[b][key] end
    return a < b
  end)
  return order[(n + 1) // 2]
end

local function validate(dir, what)
  local vok, vcode, vout = T.run(T.q(bin) .. " validate " .. T.q(dir))
  T.eq(vcode, 0, what .. ": tracelens validate passes")
  has(vout, "RESULT: PASS", what .. ": validate")
end

-- world8: the reference's CSVs --------------------------------------------
local w8 = shared .. "/multirank/world8"
if not T.file_exists(w8 .. "/ranks/rank0_trace.json.gz") then
  io.stderr:write("skip: " .. w8 .. " absent (the world8 checks)\n")
else
  ok, code, out, err = orch("--ranks " .. T.q(w8 .. "/ranks") .. " -o out_w8 -q")
  T.eq(code, 0, "world8: exit 0 " .. err)
  local o = tmp .. "/out_w8"
  local sec = section(o .. "/analysis.md")
  check_section(sec, facts(w8 .. "/ref_csvs"), "world8 (ref_csvs)")
  check_section(sec, facts(o .. "/collective_report_csvs"), "world8 (OUT)")
  has(sec, "**Straggler: rank 5.**", "world8: rank 5 (the generator's straggler)")
  -- rank 5 makes 18 collective calls (nccl_long of the reference: 144 rows, 8 ranks), 16 of them matched: the two
  -- broadcasts are not an implicit-sync type
  local calls5 = 0
  for _, r in ipairs(T.csv_records(w8 .. "/ref_csvs/nccl_long.csv")) do
    if tonumber(r.rank) == 5 then calls5 = calls5 + 1 end
  end
  T.eq(calls5, 18, "world8: rank 5's collective calls in the reference's nccl_long")
  has(sec, "It arrived last at 16 of its 16 collectives (100.0%, straggler_summary); its 2 other collective calls "
    .. "(`broadcast`) are not among them: the report matches all-reduce, all-gather, reduce-scatter and all-to-all "
    .. "calls across ranks only;", "world8: the unmatched broadcasts said")
  for _, f in ipairs({ "straggler_summary", "nccl_summary_implicit_sync", "nccl_implicit_sync", "nccl_long",
    "nccl_summary_long" }) do
    T.check(T.file_exists(o .. "/collective_report_csvs/" .. f .. ".csv"), "world8: " .. f .. ".csv written")
  end
  -- tl.ranks' own errors: one line each
  local rok, rerr = pcall(tl.ranks, w8 .. "/ranks", { world_size = 9 })
  T.check(not rok and tostring(rerr):find("expected trace file not found: " .. w8 .. "/ranks/rank8_trace.json.gz", 1,
    true), "tl.ranks world_size 9 of 8 (the error of tracelens ranks): " .. tostring(rerr))
  rok, rerr = pcall(tl.ranks, w8 .. "/ranks/rank0_trace.json.gz")
  T.check(not rok and tostring(rerr):find("rank0_trace.json.gz: not a directory", 1, true), "tl.ranks FILE: " .. tostring(rerr))
  local rs, rl = tl.ranks(w8 .. "/ranks", { world_size = 4, gpus_per_node = 4 })
  T.eq(#rl, 4, "tl.ranks world_size 4: four ranks")
  T.check(rs.__order and rs.straggler_summary and rs.straggler_summary:nrows() == 4, "tl.ranks world_size 4: 4 rows")
  -- the same CSVs as `tracelens ranks DIR`
  ok, code = T.run(string.format("%s ranks %s -o %s -q", T.q(bin), T.q(w8 .. "/ranks"), T.q(tmp .. "/ranks_cli")))
  T.eq(code, 0, "tracelens ranks: exit 0")
  for _, f in ipairs({ "straggler_summary", "nccl_summary_implicit_sync", "nccl_implicit_sync" }) do
    T.eq(T.read_file(o .. "/collective_report_csvs/" .. f .. ".csv"),
      T.read_file(tmp .. "/ranks_cli/collective_report_csvs/" .. f .. ".csv"), "world8: " .. f .. " as tracelens ranks")
  end
  local pr = per_rank(w8 .. "/ranks", 8)
  check_busy(sec, pr, 8, "world8")
  local rep = median(pr, 8, "step")
  has(sec, string.format("analyses rank %d, the median rank by mean step wall time", rep), "world8: representative")
  has(sec, string.format("| %d * |", rep), "world8: the representative marked")
  local run = assert(T.read_file(o .. "/metadata/tracelens_run.json"))
  has(run, "rank" .. rep .. "_trace.json.gz", "world8: the representative is the trace analysed")
  -- the shipped A100 file has its NVLink figure (300 GB/s per direction)
  has(sec, "compared with the NVLink 3 (12 links) of A100: 300.0 GB/s per GPU and direction", "world8: the shipped link")
  -- HTA's computation counts memsets as memory work (76.936 ms), the Executive Summary's as computation: said
  has(sec, "(rank_temporal_breakdown; HTA's kinds, in which memsets are memory work, unlike the Executive Summary's "
    .. "computation)", "world8: the two computation figures told apart")
  validate(o, "world8")
  -- --rank R
  ok, code, out, err = orch("--ranks " .. T.q(w8 .. "/ranks") .. " --rank 6 -o out_w8_r6 -q")
  T.eq(code, 0, "world8 --rank 6: exit 0 " .. err)
  has(section(tmp .. "/out_w8_r6/analysis.md"), "analyses rank 6, chosen with --rank", "--rank 6")
  has(assert(T.read_file(tmp .. "/out_w8_r6/metadata/tracelens_run.json")), "rank6_trace.json.gz", "--rank 6: analysed")
  ok, code, out, err = orch("--ranks " .. T.q(w8 .. "/ranks") .. " --rank 8 -o out_w8_r8 -q")
  T.eq(code, 2, "--rank 8 of 8: exit 2")
  has(err, "--rank 8: the traces are ranks 0 to 7", "--rank 8 of 8")
  -- a GPU-to-GPU link of an arch file of one's own: the bandwidth as a share of it
  local a = assert(T.read_file(root .. "/arch/A100.json"))
  local arch = a:gsub('"gpu_link": "[^"]*"', '"gpu_link": "NVLink 3"'):gsub('"gpu_link_gbps": %d+', '"gpu_link_gbps": 300')
  local ap = tmp .. "/a100_link.json"
  local fh = assert(io.open(ap, "w"))
  fh:write(arch)
  fh:close()
  ok, code, out, err = orch("--ranks " .. T.q(w8 .. "/ranks") .. " --arch " .. T.q(ap) .. " -o out_w8_link -q")
  T.eq(code, 0, "world8 --arch with a link: exit 0 " .. err)
  local lsec = section(tmp .. "/out_w8_link/analysis.md")
  local top = facts(w8 .. "/ref_csvs").top
  has(lsec, string.format("| %.1f%% |", 100 * tonumber(top["bus bw (GB/s)_mean"]) * 1073741824 / 1e9 / 300),
    "link: share of the link")
  has(lsec, "compared with the NVLink 3 of", "link: named")
end

-- tp_dp_16: 16 ranks in TP and DP groups, the same checks against its ref_csvs
local tp = shared .. "/multirank/tp_dp_16"
if not T.file_exists(tp .. "/ranks/rank0_trace.json.gz") then
  io.stderr:write("skip: " .. tp .. " absent (the tp_dp_16 checks)\n")
else
  ok, code, out, err = orch("--ranks " .. T.q(tp .. "/ranks") .. " -o out_tp -q")
  T.eq(code, 0, "tp_dp_16: exit 0 " .. err)
  local sec = section(tmp .. "/out_tp/analysis.md")
  -- num_collectives / pct_arrived_last count each rank's own collectives
  -- (FIX D4, spec multi-rank.md §9.3): the rest as the reference
  local mine, ref = facts(tmp .. "/out_tp/collective_report_csvs"), facts(tp .. "/ref_csvs")
  check_section(sec, mine, "tp_dp_16 (OUT)")
  for _, k in ipairs({ "straggler", "last", "wait_lo", "wait_hi" }) do T.eq(mine[k], ref[k], "tp_dp_16: " .. k .. " as ref_csvs") end
  T.eq(mine.top["Collective name"], ref.top["Collective name"], "tp_dp_16: slowest collective as ref_csvs")
  check_busy(sec, per_rank(tp .. "/ranks", 16), 16, "tp_dp_16")
  -- the slowest collective, allreduce of 64 MB, runs in the DP groups across
  -- the two nodes: its row counts those groups (from nccl_implicit_sync, read
  -- here) and gives no share of the intra-node link
  local groups, spans = {}, {}
  for _, r in ipairs(T.csv_records(tmp .. "/out_tp/collective_report_csvs/nccl_implicit_sync.csv")) do
    if r["Collective name"] == ref.top["Collective name"] and r["In msg nelems"] == ref.top["In msg nelems"] then
      groups[r["Process Group Name"]] = true
      spans[r.node_span] = true
    end
  end
  local ng = 0
  for _ in pairs(groups) do ng = ng + 1 end
  T.check(spans.inter_node and not spans.intra_node, "tp_dp_16: the slowest collective crosses nodes")
  has(sec, string.format("| %d groups of 2 ranks (across nodes) |", ng), "tp_dp_16: its groups, across nodes")
  T.check(sec:find("| " .. ref.top["Collective name"] .. " |[^\n]*| – |\n"), "tp_dp_16: no share of the link for it")
  has(sec, "A collective across nodes (node_span inter_node) moves its data over the network", "tp_dp_16: why")
  -- HTA's late-start rule flags rank 3 beside the straggler 11: rank 3 waits
  -- for 11 in their DP group (the reference's nccl_implicit_sync, read here),
  -- 11 never for 3, and 3 arrives last at 3 of its 32 collectives
  local w3, w11, n311 = 0, 0, 0
  for _, r in ipairs(T.csv_records(tp .. "/ref_csvs/nccl_implicit_sync.csv")) do
    if r["Process Group Ranks"] == "[3, 11]" then
      w3, w11, n311 = w3 + tonumber(r.rank_3_wait_time), w11 + tonumber(r.rank_11_wait_time), n311 + 1
    end
  end
  has(sec, string.format("Rank 3 shares process group [3, 11] with rank 11 and waits for it there (%.1f µs over %d "
    .. "matched collectives, rank 11 waits %.1f µs); it arrived last at only 9.4%% of its collectives: its late starts "
    .. "follow from waiting for the straggler", w3, n311, w11), "tp_dp_16: rank 3's late starts told from the straggler's")
  -- its total latency adds up the calls of its groups: per group it is the total over their number
  local total = tonumber(ref.top["Total comm latency (ms)"])
  T.check(total, "tp_dp_16: the slowest collective's total latency in ref_csvs")
  if total then
    has(sec, string.format("so its total latency is more than any rank spends in it: %s's %.3f ms over %d groups is "
      .. "%.3f ms per group.", ref.top["Collective name"], total, ng, total / ng), "tp_dp_16: per group")
  end
  validate(tmp .. "/out_tp", "tp_dp_16")
end

-- generated ranks with an injected straggler -------------------------------
local g = tmp .. "/gen"
ok, code, out, err = T.run(string.format("%s run %s -o %s --ranks 8 --seed 11 --straggler 3 --compute 10 --steps 2",
  T.q(bin), T.q(root .. "/bench/gen_ranks.lua"), T.q(g)))
T.eq(code, 0, "gen_ranks: exit 0 " .. err)
ok, code, out, err = orch("--ranks " .. T.q(g) .. " -o out_gen -q")
T.eq(code, 0, "generated: exit 0 " .. err)
local gsec = section(tmp .. "/out_gen/analysis.md")
check_section(gsec, facts(tmp .. "/out_gen/collective_report_csvs"), "generated")
has(gsec, "**Straggler: rank 3.**", "generated: the injected straggler named")
has(gsec, "There is no arch file for this GPU", "generated: link unknown")
-- HTA's late-start rule (rank_stragglers) and the exposed communication per rank (rank_comm_overlap)
do
  local h, rows = T.read_csv(tmp .. "/out_gen/collective_report_csvs/rank_stragglers.csv")
  local c = {}
  for i, n in ipairs(h) do c[n] = i end
  local named = {}
  for _, r in ipairs(rows) do
    if r[c.potential_straggler] == "Yes" then
      named[#named + 1] = string.format("rank %s (among the two latest in %s of %s iterations)", r[c.rank],
        r[c.times_flagged], r[c.iterations])
    end
  end
  T.eq(rows[1] and rows[1][c.rank], "3", "generated: the injected straggler first in rank_stragglers")
  has(gsec, "names " .. table.concat(named, " and ") .. ".", "generated: late-start stragglers")
  local eh, erows = T.read_csv(tmp .. "/out_gen/collective_report_csvs/rank_comm_overlap.csv")
  local ec, lo, hi = 0, nil, nil
  for i, n in ipairs(eh) do if n == "exposed_comm_time(ns)" then ec = i end end
  for _, r in ipairs(erows) do
    local v = tonumber(r[ec])
    if not lo or v < lo[1] then lo = {v, r[1]} end
    if not hi or v > hi[1] then hi = {v, r[1]} end
  end
  has(gsec, string.format("ranges from %.3f ms (rank %s) to %.3f ms (rank %s) per rank", lo[1] / 1e6, lo[2],
    hi[1] / 1e6, hi[2]), "generated: exposed communication per rank")
end
local gpr = per_rank(g, 8)
check_busy(gsec, gpr, 8, "generated")
if gpr[0].step == nil then
  has(gsec, string.format("analyses rank %d, the median rank by GPU busy time", median(gpr, 8, "busy")),
    "generated: representative by busy time")
end
validate(tmp .. "/out_gen", "generated")
T.check(not gsec:find("The traces say the job had", 1, true), "generated: every rank present, no sample sentence")

-- a metadata mismatch between ranks: the ranks report's one-line error, exit 1
local mm = tmp .. "/mismatch"
ok, code, out, err = T.run(string.format("%s run %s -o %s --ranks 8 --mismatch 2", T.q(bin),
  T.q(root .. "/bench/gen_ranks.lua"), T.q(mm)))
T.eq(code, 0, "gen_ranks --mismatch: exit 0 " .. err)
ok, code, out, err = orch("--ranks " .. T.q(mm) .. " -o out_mm -q")
T.eq(code, 1, "mismatch: exit 1")
has(err, "tracelens: metadata mismatch in 'dtype'", "mismatch")
T.eq(select(2, err:gsub("\n", "")), 1, "mismatch: one line")

-- --trace_glob (files named otherwise, as HTA's sampled ranks): usage, and the analysis of the glob's ranks
ok, code, out, err = orch("--rank_regex 'r(\\d+)' --ranks " .. T.q(empty))
T.eq(code, 2, "--rank_regex without --trace_glob: exit 2")
has(err, "--rank_regex needs --trace_glob", "--rank_regex without --trace_glob")
ok, code, out, err = orch("--trace_glob " .. T.q(empty .. "/*.json"))
T.eq(code, 2, "--trace_glob without -o: exit 2")
has(err, "--trace_glob needs -o OUT", "--trace_glob without -o")
ok, code, out, err = orch("--trace_glob " .. T.q(empty .. "/*.json") .. " --ranks " .. T.q(empty) .. " -o x")
T.eq(code, 2, "--trace_glob with --ranks: exit 2")
has(err, "--ranks and --trace_glob are mutually exclusive", "--trace_glob with --ranks")
-- the generated ranks renamed: a gap in the ranks is the error of `tracelens ranks`
local renamed = tmp .. "/renamed"
os.execute(string.format("mkdir -p %s && cp %s/rank0_trace.json %s/job_rank-0.json && cp %s/rank2_trace.json "
  .. "%s/job_rank-2.json", T.q(renamed), T.q(g), T.q(renamed), T.q(g), T.q(renamed)))
ok, code, out, err = orch("--trace_glob " .. T.q(renamed .. "/*.json") .. " -o out_gap -q")
T.eq(code, 1, "glob with a gap: exit 1")
has(err, "tracelens: missing ranks after resolution: [1] (a complete rank set 0..2 is required)", "glob with a gap")
-- the options of `tracelens ranks` that the orchestrator passes on: --world_size, --gpus_per_node, --rank-from
ok, code, out, err = orch(T.q(root .. "/examples/demo_trace.json") .. " --world_size 8")
T.eq(code, 2, "--world_size without --ranks: exit 2")
has(err, "--world_size needs --ranks or --trace_glob", "--world_size without --ranks")
ok, code, out, err = orch("--ranks " .. T.q(g) .. " --rank-from neither")
T.eq(code, 2, "--rank-from neither: exit 2")
has(err, "--rank-from takes name or distinfo, got neither", "--rank-from neither")
ok, code, out, err = orch("--ranks " .. T.q(g) .. " --world_size 9 -o out_w9 -q")
T.eq(code, 1, "--world_size above the files: exit 1")
has(err, "rank8_trace.json", "--world_size 9: the missing rank's file named")
T.check(not T.dir_exists(tmp .. "/out_w9"), "--world_size 9: no OUT")
-- the renamed ranks without a rank in their names: from distributedInfo.rank, the CSVs of `tracelens ranks`
local anon = tmp .. "/anon"
os.execute(string.format("mkdir -p %s && cp %s/rank0_trace.json %s/alpha.json && cp %s/rank1_trace.json %s/beta.json",
  T.q(anon), T.q(g), T.q(anon), T.q(g), T.q(anon)))
ok, code, out, err = orch("--trace_glob " .. T.q(anon .. "/*.json") .. " --rank-from distinfo --world_size 2 "
  .. "--gpus_per_node 1 -o out_anon -q")
T.eq(code, 0, "--rank-from distinfo: exit 0 (" .. tostring(err) .. ")")
has(err, "says world_size 8, --world_size is 2", "--world_size 2: the traces' own world size warned about")
ok, code, out, err = T.run(string.format("%s ranks -q --no-xlsx --trace_glob %s --rank-from distinfo --world_size 2 "
  .. "--gpus_per_node 1 -o %s", T.q(bin), T.q(anon .. "/*.json"), T.q(tmp .. "/anon_cli")))
T.eq(code, 0, "tracelens ranks --rank-from distinfo: exit 0")
for _, sheet in ipairs({ "nccl_long", "nccl_implicit_sync", "straggler_summary", "node_bandwidth" }) do
  local a = T.read_file(tmp .. "/out_anon/collective_report_csvs/" .. sheet .. ".csv")
  T.check(a and #a > 0, "--rank-from distinfo: " .. sheet .. " written")
  T.eq(a, T.read_file(tmp .. "/anon_cli/collective_report_csvs/" .. sheet .. ".csv"),
    "--rank-from distinfo: " .. sheet .. " as the CLI")
end
-- one GPU per node: every collective between the two ranks crosses nodes (with the traces' 8 GPUs per
-- node, the default, none does)
local nb = T.csv_records(tmp .. "/out_anon/collective_report_csvs/nccl_implicit_sync.csv")
T.check(#nb > 0, "--gpus_per_node 1: implicit-sync rows")
for _, row in ipairs(nb) do T.eq(row.node_span, "inter_node", "--gpus_per_node 1: node_span of " .. row.collective_id) end
ok, code = orch("--trace_glob " .. T.q(anon .. "/*.json") .. " --rank-from distinfo --world_size 2 -o out_anon8 -q")
T.eq(code, 0, "--rank-from distinfo, default GPUs per node: exit 0")
nb = T.csv_records(tmp .. "/out_anon8/collective_report_csvs/nccl_implicit_sync.csv")
for _, row in ipairs(nb) do T.eq(row.node_span, "intra_node", "8 GPUs per node: node_span of " .. row.collective_id) end
validate(tmp .. "/out_anon", "--rank-from distinfo")

local trf = shared .. "/hta/trace_filter"
if T.dir_exists(trf) then
  ok, code, out, err = orch("--ranks " .. T.q(trf) .. " -o out_trf_dir -q")
  T.eq(code, 1, "HTA sampled ranks by DIR: exit 1")
  has(err, "holds 2 trace files named otherwise, e.g. sampled_rank-0.json.gz: give them with --trace_glob '" .. trf
    .. "/*.json.gz', the rank from --rank_regex)", "HTA sampled ranks by DIR: the glob to use")
  ok, code, out, err = orch("--trace_glob " .. T.q(trf .. "/*.json.gz") .. " -o out_trf -q")
  T.eq(code, 0, "HTA sampled ranks by glob: exit 0 (" .. tostring(err) .. ")")
  has(err, "sampled_rank-0.json.gz says world_size 128, the rank traces found make 2",
    "HTA glob: the traces' world size against the ranks found (no --world_size given)")
  local tsec = section(tmp .. "/out_trf/analysis.md")
  has(tsec, "2 rank traces in `" .. trf .. "/*.json.gz`", "HTA glob: the ranks named")
  -- a sample of a larger job: the section says how partial (the traces' distributedInfo.world_size)
  local world = tl.load(trf .. "/sampled_rank-0.json.gz"):info().metadata.distributedInfo.world_size
  T.check(world and world > 2, "HTA glob: the traces name a larger world: " .. tostring(world))
  has(tsec, string.format("The traces say the job had %d ranks (distributedInfo.world_size): these are 2 of them, so "
    .. "the straggler, the waits and the imbalance below are among these 2 only", world), "HTA glob: a sample")
  -- their kernels carry no collective metadata (the CSV's Collective name column is empty)
  local n = #T.csv_records(tmp .. "/out_trf/collective_report_csvs/nccl_long.csv")
  has(tsec, string.format("No collective was matched across the ranks (the ranks report has no straggler_summary rows): "
    .. "none of the %d collective kernels records its collective name or process group", n), "HTA glob: why unmatched")
  -- HTA's late-start rule flags the two latest ranks of each iteration: with two ranks it flags both, always,
  -- so it names no straggler (the sheet still says Yes for both)
  local late = T.csv_records(tmp .. "/out_trf/collective_report_csvs/rank_stragglers.csv")
  T.eq(#late, 2, "HTA glob: rank_stragglers has both ranks")
  for _, r in ipairs(late) do T.eq(r.potential_straggler, "Yes", "HTA glob: the rule flags rank " .. r.rank) end
  has(tsec, "names no straggler here: only 2 ranks run the kernel, so the rule flags both in every iteration, "
    .. "whatever their starts.", "HTA glob: two ranks, no late-start straggler")
  T.check(not tsec:find("names rank", 1, true), "HTA glob: no rank named by the late-start rule")
  -- the same CSVs as `tracelens ranks --trace_glob`
  ok, code = T.run(string.format("%s ranks -q --no-xlsx --trace_glob %s -o %s", T.q(bin), T.q(trf .. "/*.json.gz"),
    T.q(tmp .. "/trf_cli")))
  T.eq(code, 0, "tracelens ranks --trace_glob: exit 0")
  for _, sheet in ipairs({ "nccl_long", "rank_temporal_breakdown", "rank_comm_overlap", "rank_step_times" }) do
    T.eq(T.read_file(tmp .. "/out_trf/collective_report_csvs/" .. sheet .. ".csv"),
      T.read_file(tmp .. "/trf_cli/collective_report_csvs/" .. sheet .. ".csv"), "HTA glob: " .. sheet .. " as the CLI")
  end
  validate(tmp .. "/out_trf", "HTA glob")
end

T.rmrf(tmp)
T.finish()

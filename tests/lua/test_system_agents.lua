-- The system analyzers (agents/cpu_idle.lua, multi_kernel.lua,
-- kernel_fusion.lua), model identification (agents/model_id.lua) and the
-- fusion decisions (tracelens.fusion_rules): card triggers, order, titles,
-- markers and the Level-1 validator, on the bert goldens and on hand-made
-- metrics (none of the shipped cases has a system card).
local root, shared = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local json = require "tracelens.json"
local rules = require "tracelens.fusion_rules"
local has_validate, validate = pcall(require, "tracelens.validate")

local function read(path) return assert(tl.fs.read_file(path)) end

-- Runs an agent the way the orchestrator does: its own sandboxed state.
local function run_agent(name, ctx)
  local r = tl.parallel({ { script = root .. "/agents/" .. name .. ".lua", args = { ctx } } })[1]
  if not r.ok then
    T.check(false, name .. " raised: " .. tostring(r.error))
    return {}
  end
  return r.value
end

local function count(s, pattern)
  local n = 0
  for _ in s:gmatch(pattern) do n = n + 1 end
  return n
end

local function card_titles(s)
  local out = {}
  for t in s:gmatch("\n### P%d+: ([^\n]+)") do out[#out + 1] = t end
  return out
end

local function level1(text, tier, what)
  if not has_validate then return end
  local ok, errors = validate.validate_findings_text(text, { tier = tier, scope = "standalone", rel = what })
  T.check(ok, what .. " passes Level 1: " .. table.concat(errors or {}, "; "))
end

local function no_placeholders(s, what)
  for _, p in ipairs({ "<Brief Title>", "<Library>", "<title>", "<model>", "X.X", "nil", "%%s", "%%d", "{{" }) do
    T.check(not s:find(p, 1, true), what .. " has no placeholder " .. p)
  end
end

-- Hand-made inputs ---------------------------------------------------------------

local function manifest(u, categories)
  return json.encode(json.obj("platform", "MI300X", "comparison_scope", "standalone", "gpu_utilization", u,
    "categories", categories or {}))
end

local function utilization(total, compute, idle, comm, memcpy)
  return json.obj("total_time_ms", total, "computation_time_percent", compute, "exposed_comm_time_percent", comm,
    "exposed_memcpy_time_percent", memcpy, "idle_time_percent", idle)
end

local function cpu_metrics(total, compute, idle, comm, memcpy)
  return json.encode(json.obj("status", "OK", "idle_flagged", idle > 15, "gpu_utilization",
    json.obj("total_time_ms", total, "idle_time_ms", total * idle / 100, "idle_time_percent", idle,
      "computation_percent", compute, "communication_percent", comm, "memcpy_percent", memcpy),
    "kernel_analysis", json.obj("short_kernel_count", 900, "total_kernel_count", 1000, "avg_kernel_time_us", 6.5,
      "kernel_count_by_category", json.obj()), "impact_estimates", json.arr()))
end

local function category(name, display, sync_ms, ops, bottleneck)
  return json.obj("name", name, "display_name", display, "tier", "compute_kernel", "gpu_kernel_time_ms", 10.0,
    "sync_time_ms", sync_ms, "sync_ops_count", ops, "has_sync_bottleneck", bottleneck)
end

-- cpu_idle ------------------------------------------------------------------------------

-- Idle 40% with nothing exposed: the launch-overhead card only (no category syncs).
do
  local u = utilization(100.0, 60.0, 40.0, 0.0, 0.0)
  local out = run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u, { category("gemm", "GEMM", 0, 0,
    false) }), metrics = cpu_metrics(100.0, 60.0, 40.0, 0.0, 0.0) })
  local s = out.findings or ""
  local titles = card_titles(s)
  T.eq(#titles, 1, "idle 40%, no sync: one card")
  T.eq(titles[1], "GPU idle between kernel launches", "idle 40%, nothing exposed: launch-overhead card")
  T.check(s:find("**Idle Time**: 40.0% (40.0 ms out of 100.0 ms total)", 1, true), "idle line")
  T.check(s:find("| Idle time | 40.0 ms (40.0%) | true |", 1, true), "idle row flagged")
  T.check(s:find("| Calls of operations averaging under 10 µs of kernel time | 900 | true |", 1, true),
    "short-kernel row")
  T.check(s:find("GPU graph", 1, true), "launch-overhead action names a GPU graph")
  T.eq(count(s, "<!%-%- impact%-begin kind=p_item low=null mid=null high=null %-%->"), 1, "null p_item marker")
  T.eq(count(s, "<!%-%- reasoning%-candidate tier=system rank=%d+ %-%->"), 1, "one system candidate")
  T.check(s:find("Impact estimate is not quantifiable from trace data.", 1, true), "not-quantifiable sentinel")
  level1(s, "system", "cpu_idle (idle 40%)")
  no_placeholders(s, "cpu_idle")
end

-- Idle 40% with 8% exposed communication: the host-pipeline card, not launch overhead.
do
  local u = utilization(100.0, 52.0, 40.0, 8.0, 0.0)
  local s = run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u),
    metrics = cpu_metrics(100.0, 52.0, 40.0, 8.0, 0.0) }).findings or ""
  local titles = card_titles(s)
  T.eq(#titles, 1, "idle with exposed comm: one card")
  T.eq(titles[1], "GPU idle gaps in the host pipeline", "idle with exposed comm: host-pipeline card")
  T.check(s:find("| Exposed communication | 8.0% | true |", 1, true), "exposed comm row flagged")
  -- no exposed copies: no advice about copying inputs from pinned memory (HTA's nccl_data has none)
  T.check(s:find("keep the host launching ahead of the GPU", 1, true) and not s:find("pinned memory", 1, true),
    "no copies: no copy advice")
  local u2 = utilization(100.0, 52.0, 40.0, 0.0, 8.0)
  local s2 = run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u2),
    metrics = cpu_metrics(100.0, 52.0, 40.0, 0.0, 8.0) }).findings or ""
  T.check(s2:find("copy them asynchronously from pinned memory", 1, true), "exposed copies: the copy advice")
end

-- Sync evidence: a sync card; first when a category has has_sync_bottleneck.
do
  local u = utilization(100.0, 60.0, 40.0, 0.0, 0.0)
  local cats = { category("gemm", "GEMM", 2.5, 3, false), category("norm_fwd", "NORM_fwd", 0.5, 1, false) }
  local s = run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u, cats),
    metrics = cpu_metrics(100.0, 60.0, 40.0, 0.0, 0.0) }).findings or ""
  local titles = card_titles(s)
  T.eq(#titles, 2, "sync_time_ms > 0: two cards")
  T.eq(titles[1], "GPU idle between kernel launches", "no bottleneck flag: idle card first")
  T.eq(titles[2], "Host-side synchronization stalls the GPU pipeline", "sync card second")
  -- 2.5 + 0.5 = 3.0 ms of 100 ms
  T.check(s:find("| Host time beyond kernel time | 3.0 ms (3.0%) | true |", 1, true), "sync total row")
  T.check(s:find("Operations in GEMM and NORM_fwd spend 3.0 ms", 1, true), "sync insight lists the categories")
  level1(s, "system", "cpu_idle (sync)")

  cats[2] = category("norm_fwd", "NORM_fwd", 12.0, 4, true)
  s = run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u, cats),
    metrics = cpu_metrics(100.0, 60.0, 40.0, 0.0, 0.0) }).findings or ""
  titles = card_titles(s)
  T.eq(titles[1], "Host-side synchronization stalls the GPU pipeline", "has_sync_bottleneck: sync card first")
  T.check(s:find("| NORM_fwd host time beyond kernel time | 12.0 ms | true |", 1, true), "bottleneck category row")
  T.check(s:find("NORM_fwd", 1, true) < s:find("| GEMM host time", 1, true), "categories by sync time")
end

-- Idle with launched work waiting (ctx.waits, the idle_breakdown sheet's all row): at least half of the
-- idle time queued gives the queued-wait card instead of launch overhead or the host pipeline; under half,
-- the card the reference rules give.
do
  local u = utilization(100.0, 60.0, 40.0, 0.0, 0.0)
  local function waits(idle, queued, name, longest)
    return json.encode(json.obj("idle_ms", idle, "queued_idle_ms", queued, "longest_queued", name,
      "longest_queued_idle_ms", longest))
  end
  local s = run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u),
    metrics = cpu_metrics(100.0, 60.0, 40.0, 0.0, 0.0),
    waits = waits(40.0, 30.0, "void resolve_kernel<int>(int*)", 25.0) }).findings or ""
  local titles = card_titles(s)
  T.eq(#titles, 1, "queued idle: one card")
  T.eq(titles[1], "GPU idle while launched work waits to start", "75% of the idle queued: queued-wait card")
  T.check(s:find("for 75.0% of its idle time (30.0 ms) kernels or copies had been launched and had not started",
    1, true), "queued share and time in the insight: " .. s)
  T.check(s:find("The longest wait: `resolve_kernel<…>`, 25.0 ms of idle GPU time", 1, true), "longest wait named")
  T.check(s:find("For the other 10.0 ms nothing launched was waiting.", 1, true), "the rest of the idle time")
  T.check(not s:find("GPU graph", 1, true) and s:find("would not close these gaps", 1, true),
    "no GPU-graph advice for queued idle")
  T.check(s:find("| Idle with launched work waiting to start | 30.0 ms (75.0%) | true |", 1, true), "queued row")
  level1(s, "system", "cpu_idle (queued)")
  no_placeholders(s, "cpu_idle (queued)")
  local cats = { category("gemm", "GEMM", 12.0, 4, true) }
  s = run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u, cats),
    metrics = cpu_metrics(100.0, 60.0, 40.0, 0.0, 0.0), waits = waits(40.0, 30.0, "k", 25.0) }).findings or ""
  titles = card_titles(s)
  -- beside a sync card: the queued-wait card first; the sync card says the
  -- host's wait is for that work and advises finding what it waits for first
  T.eq(titles[1], "GPU idle while launched work waits to start", "queued idle and a sync bottleneck: queued first")
  T.eq(titles[2], "The host synchronizes on launched work that waits to start", "then the sync card, retitled")
  T.check(s:find("The GPU, though, idled with launched work waiting for 75.0% of its idle time", 1, true),
    "the sync card qualified: " .. s)
  T.check(s:find("**Action**: First find what the waiting work waits for (\"GPU idle while launched work waits to "
    .. "start\"): the synchronization only waits for it.", 1, true), "the sync card's action: the waiting work first")
  s = run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u, cats),
    metrics = cpu_metrics(100.0, 60.0, 40.0, 0.0, 0.0) }).findings or ""
  T.check(not s:find("idled with launched work waiting", 1, true), "no queued idle: the sync card as before")
  -- with exposed communication too: still the queued-wait card
  local u8 = utilization(100.0, 52.0, 40.0, 8.0, 0.0)
  s = run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u8),
    metrics = cpu_metrics(100.0, 52.0, 40.0, 8.0, 0.0), waits = waits(40.0, 20.0, "k", 5.0) }).findings or ""
  T.eq(card_titles(s)[1], "GPU idle while launched work waits to start", "exactly half queued, exposed comm")
  -- under half: the reference's cards
  s = run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u),
    metrics = cpu_metrics(100.0, 60.0, 40.0, 0.0, 0.0), waits = waits(40.0, 19.9, "k", 5.0) }).findings or ""
  T.eq(card_titles(s)[1], "GPU idle between kernel launches", "under half queued: launch-overhead card")
  s = run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u8),
    metrics = cpu_metrics(100.0, 52.0, 40.0, 8.0, 0.0), waits = waits(40.0, 1.0, "k", 1.0) }).findings or ""
  T.eq(card_titles(s)[1], "GPU idle gaps in the host pipeline", "under half queued, exposed comm: host pipeline")
end

-- The busiest stream's idle time opening during blocking calls (at least half of it): the sync-drain card,
-- which advises against the wait, not a GPU graph; under half, the launch-overhead card, whose action drops the
-- graph capture when graph replays run most of the GPU time already.
do
  local u = utilization(100.0, 60.0, 40.0, 0.0, 0.0)
  local function waits(sync, extra)
    local w = json.obj("idle_ms", 40.0, "queued_idle_ms", 0.0, "stream", 7, "stream_idle_ms", 40.0, "host_wait_ms",
      38.0, "host_sync_wait_ms", sync, "host_wait_gaps", 32, "host_sync_wait_gaps", 31)
    for k, v in pairs(extra or {}) do w[k] = v end
    return json.encode(w)
  end
  local function run(w)
    return run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u),
      metrics = cpu_metrics(100.0, 60.0, 40.0, 0.0, 0.0), waits = w }).findings or ""
  end
  local s = run(waits(20.0))
  T.eq(card_titles(s)[1], "GPU idle after host synchronizations", "20 of 40 ms after a sync: the sync-drain card")
  T.check(s:find("on stream 7 (the busiest) 20.0 ms of idle time (31 gaps) opens while the host is blocked in a call "
    .. "that waits for the GPU", 1, true) and s:find("the GPU waits until the host's next launch, 0.645 ms a gap on "
    .. "average.", 1, true) and not s:find("Capture the steady-state step", 1, true),
    "sync drain: figures said, no graph capture advised: " .. s)
  level1(s, "system", "cpu_idle (sync drain)")
  no_placeholders(s, "cpu_idle (sync drain)")
  s = run(waits(19.9))
  T.eq(card_titles(s)[1], "GPU idle between kernel launches", "under half after a sync: launch overhead")
  T.check(s:find("Capture the steady-state step as a GPU graph", 1, true), "no graphs in use: capture advised")
  s = run(waits(0.0, { graph_share = 0.9 }))
  T.check(s:find("The work already runs as GPU graph replays", 1, true)
    and not s:find("Capture the steady-state step", 1, true), "graph replays in use: no capture advised: " .. s)
  s = run(waits(0.0, { with_stack = true }))
  T.check(s:find("The trace was recorded with `with_stack=True`", 1, true), "stacks: the profiler's host time said")
end

-- The host-time card (the host's time beyond kernel time not mostly in waits for the GPU) leads the idle card only
-- when that time is at least half of the GPU's idle time (a sync bottleneck in a category): 12 of 40 ms idle, the
-- idle card first; 20 of 40, the host-time card first. Its insight gives the waits' share.
do
  local u = utilization(100.0, 60.0, 40.0, 0.0, 0.0)
  local function run(sync_ms)
    local cats = { category("elementwise", "elementwise", sync_ms, 4, true) }
    local calls = json.encode(json.obj("sync", json.obj("us", 2000.0, "calls", 2), "copy", json.obj("us", 0.0,
      "calls", 0), "launch", json.obj("us", sync_ms * 1000 - 5000.0, "calls", 100, "longest", "cudaLaunchKernel",
      "longest_op", "aten::add", "longest_us", 50.0), "setup", json.obj("us", 0.0, "calls", 0)))
    return run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u, cats),
      metrics = cpu_metrics(100.0, 60.0, 40.0, 0.0, 0.0), host_calls = calls }).findings or ""
  end
  local s = run(12.0)
  local titles = card_titles(s)
  T.eq(titles[1], "GPU idle between kernel launches", "host time 12 of 40 ms idle: the idle card first")
  T.eq(titles[2], "Host time inside operations far exceeds their kernel time", "then the host-time card")
  T.check(s:find("mostly not waiting for the GPU: the runtime calls inside them that synchronize or copy (waits for the "
    .. "GPU) take 2.0 ms, 16.67% of it.", 1, true), "host time: the waits' share said: " .. s)
  titles = card_titles(run(20.0))
  T.eq(titles[1], "Host time inside operations far exceeds their kernel time", "20 of 40 ms: the host-time card first")
end

-- Idle within range: no card.
do
  local u = utilization(100.0, 90.0, 10.0, 0.0, 0.0)
  local s = run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u, { category("gemm", "GEMM", 2.5, 3,
    true) }), metrics = cpu_metrics(100.0, 90.0, 10.0, 0.0, 0.0) }).findings or ""
  T.eq(#card_titles(s), 0, "idle 10%: no card")
  T.check(s:find("GPU idle time is 10.0%, within the 15% threshold. No action is needed.", 1, true), "within range")
  T.check(s:find("## Recommendations", 1, true) and s:find("## Detailed Analysis", 1, true), "sections kept")
end

-- Failed metrics: `Status: ERROR`, still the idle-based card from the manifest.
do
  local u = utilization(100.0, 60.0, 40.0, 0.0, 0.0)
  local s = run_agent("cpu_idle", { scope = "standalone", manifest = manifest(u),
    metrics = json.encode(json.obj("status", "ERROR", "error", "gpu_timeline.csv missing")) }).findings or ""
  T.check(s:find("Status: ERROR", 1, true), "failed metrics: literal Status: ERROR")
  T.check(s:find("gpu_timeline.csv missing", 1, true), "error text kept")
  T.eq(card_titles(s)[1], "GPU idle between kernel launches", "failed metrics: idle card from the manifest")
end

-- multi_kernel --------------------------------------------------------------------------

local function mk_metrics(o)
  local by_direction = json.obj()
  local issues = json.arr()
  for _, d in ipairs(o.copies or {}) do
    by_direction[d.dir] = json.obj("count", d.count, "total_time_us", d.us, "avg_time_us", d.us / d.count,
      "max_time_us", d.us, "total_bytes", d.count * 4096, "avg_bytes", 4096.0)
    if d.flagged then
      issues[#issues + 1] = json.obj("direction", d.dir, "count", d.count, "time_ms", d.us / 1000, "percent_of_total",
        d.us / 1000 / o.total * 100, "avg_bytes", 4096.0, "description", d.dir .. " memcpy: many transfers")
    end
  end
  local comm_pct = o.exposed_comm_us / 1000 / o.total * 100
  local ratio = o.comm_us > 0 and 1 - o.exposed_comm_us / o.comm_us or json.null
  local blocking = o.comm_us > 0 and json.obj("flagged", comm_pct > 5, "exposed_comm_time_ms", o.exposed_comm_us / 1000,
    "total_comm_time_ms", o.comm_us / 1000, "exposed_percent_of_total", comm_pct, "description", "exposed")
    or json.obj("flagged", false, "details", "No communication events detected")
  local overlap = o.comm_us >= 100 and json.obj("flagged", ratio < 0.7, "overlap_ratio", ratio, "overlap_percent",
    ratio * 100, "target_percent", 70, "description", "overlap")
    or json.obj("flagged", false, "details", "Insufficient communication data for overlap analysis")
  local patterns = json.arr()
  for _, i in ipairs(issues) do
    patterns[#patterns + 1] = json.obj("pattern", "high_" .. i.direction:lower() .. "_memcpy", "description",
      i.description)
  end
  if blocking.flagged then patterns[#patterns + 1] = json.obj("pattern", "nccl_blocking_compute", "description", "x") end
  if overlap.flagged then patterns[#patterns + 1] = json.obj("pattern", "poor_comm_compute_overlap", "description", "y") end
  return json.encode(json.obj("status", "SUCCESS", "total_time_ms", o.total,
    "memcpy_summary", json.obj("total_count", 0, "total_time_ms", 0.0, "by_direction", by_direction),
    "nccl_summary", json.obj("total_count", 12, "total_time_ms", o.comm_us / 1000, "top_ops",
      { json.obj("name", "allreduce_kernel", "duration_us", 900.0, "stream", 7) }),
    "overlap_analysis", json.obj("total_time_us", o.total * 1000,
      "computation_time_us", o.compute_us or (o.total * 1000 - o.exposed_comm_us), "total_comm_time_us", o.comm_us,
      "exposed_comm_time_us", o.exposed_comm_us, "comm_overlap_ratio", ratio, "comm_percent_of_total", comm_pct),
    "memcpy_assessment", json.obj("flagged", #issues > 0, "issues", issues),
    "nccl_blocking_assessment", blocking, "overlap_assessment", overlap, "patterns_detected", patterns,
    "impact_estimates", json.arr()))
end

-- Flagged D2H (20 transfers, 6 ms = 6%), unflagged H2D, exposed comm 8 of 100 ms, overlap 60%.
do
  local m = mk_metrics({ total = 100.0, comm_us = 20000, exposed_comm_us = 8000,
    copies = { { dir = "D2H", count = 20, us = 6000, flagged = true }, { dir = "H2D", count = 2, us = 100 } } })
  local s = run_agent("multi_kernel", { scope = "standalone", manifest = "{}", data = "{}", metrics = m }).findings or ""
  local titles = card_titles(s)
  T.eq(#titles, 2, "comm + D2H: two cards (blocking and overlap merged)")
  T.eq(titles[1], "Exposed communication blocks compute", "communication card first")
  T.eq(titles[2], "Frequent or long device-to-host copies", "D2H card second")
  T.check(s:find("| D2H Transfers | 20 (6.0 ms) | true |", 1, true), "summary D2H row flagged")
  T.check(s:find("| H2D Transfers | 2 (0.1 ms) | false |", 1, true), "summary H2D row not flagged")
  T.check(s:find("| Exposed Communication | 8.0% of total | true |", 1, true), "summary comm row")
  -- overlap = 1 - 8000/20000 = 60%
  T.check(s:find("| Compute/Comm Overlap | 60.0% (target > 70%) | true |", 1, true), "summary overlap row")
  T.check(s:find("| Exposed communication | 8.0 ms (8.0%) | true |", 1, true), "comm card data row")
  T.check(s:find("| D2H copy time | 6.0 ms (6.0%) | true |", 1, true), "D2H card data row")
  T.check(s:find("1. **high_d2h_memcpy**", 1, true), "pattern list")
  T.check(s:find("`allreduce_kernel`", 1, true), "longest collective quoted")
  T.check(not s:find("Frequent or long host-to-device copies", 1, true), "no H2D card without a flag")
  T.check(not s:find("The GPU is also idle", 1, true), "a busy GPU: no idle sentence")
  level1(s, "system", "multi_kernel (flagged)")
  no_placeholders(s, "multi_kernel")
  -- a GPU idle for 72% of the span (HTA's nccl_data: 76%): the communication card says overlap is bounded by it
  local idle = mk_metrics({ total = 100.0, comm_us = 20000, exposed_comm_us = 8000, compute_us = 20000, copies = {} })
  local si = run_agent("multi_kernel", { scope = "standalone", manifest = "{}", data = "{}", metrics = idle }).findings
  T.check((si or ""):find("The GPU is also idle for 72.0% of the span, running nothing: communication can only hide "
    .. "under compute that has been launched", 1, true), "an idle GPU: said on the communication card")
end

-- Only overlap flagged (exposed 3 of 100 ms, 40% overlap): the overlap title; copies by time.
do
  local m = mk_metrics({ total = 100.0, comm_us = 5000, exposed_comm_us = 3000,
    copies = { { dir = "D2H", count = 11, us = 1000, flagged = true }, { dir = "H2D", count = 30, us = 4000,
      flagged = true } } })
  local titles = card_titles(run_agent("multi_kernel", { scope = "standalone", metrics = m }).findings or "")
  T.eq(#titles, 3, "overlap + two copy directions: three cards")
  T.eq(titles[1], "Low compute/communication overlap", "overlap-only title")
  T.eq(titles[2], "Frequent or long host-to-device copies", "longer copy time first (H2D 4 ms)")
  T.eq(titles[3], "Frequent or long device-to-host copies", "then D2H (1 ms)")
end

-- Nothing flagged (the bert golden): no card, the "no issue" sentence.
do
  local G = shared .. "/agent_golden/standalone/"
  if T.dir_exists(G) then
    local s = run_agent("multi_kernel", { scope = "standalone", manifest = read(G .. "category_data/category_manifest.json"),
      data = read(G .. "category_data/multi_kernel_data.json"),
      metrics = read(G .. "category_data/multi_kernel_metrics.json") }).findings or ""
    T.eq(#card_titles(s), 0, "bert: no multi-kernel card")
    T.check(s:find("No multi-kernel issue is flagged", 1, true), "bert: no-issue sentence")
    T.check(s:find("| Total Memcpy Events | 1 | false |", 1, true), "bert: one memcpy event")
    T.check(s:find("Device-to-device copies: 1 (0.002 ms, 0.07% of total), not assessed.", 1, true), "bert: D2D line")
    T.check(s:find("**Analysis Tier**: System-Level", 1, true), "tier line")
  end
end

-- Failed metrics.
do
  local s = run_agent("multi_kernel", { scope = "standalone", metrics = json.encode(json.obj("status", "ERROR", "error",
    "multi_kernel_data.json not found - run orchestrator_prepare.py first")) }).findings or ""
  T.check(s:find("Status: ERROR", 1, true) and s:find("multi_kernel_data.json not found", 1, true), "multi_kernel error")
end

-- kernel_fusion -------------------------------------------------------------------------

local ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, "
  .. "3ul> >(int, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>) [clone .kd]"

local function add_kernels(n)
  local ks = {}
  for i = 1, n do ks[i] = { name = ADD, type = "Elementwise", dur_us = 420 + i, eligible = true, gpu_op_uid = i } end
  return ks
end

local function estimate(op, mid, low, high, conf, extra)
  local e = json.obj("operation", op, "category", "kernel_fusion", "type", "kernel_fusion", "impact_score", mid,
    "impact_score_low", low, "impact_score_high", high, "estimation", "full", "bound_type", "memory", "time_ms", 4.21,
    "instance_count", 1, "kernel_count", 10, "modeled_kernel_count", 10, "confidence", conf, "affected_gpu_kernels",
    { ADD }, "fusion_type", "memory_bound")
  for k, v in pairs(extra or {}) do e[k] = v end
  return e
end

local function fusion_metrics(estimates)
  return json.encode(json.obj("category", "kernel_fusion", "status", "OK", "impact_estimates", estimates))
end

local unified = { { name = "aten::add", ["Input Dims"] = "((8192, 8192), (8192, 8192), ())", ["Data Moved (MB)"] = "768.0",
  kernel_details_summary = "[{'name': '" .. ADD .. "', 'stream': 1, 'count': 10}]" } }
local fusion_manifest = json.encode(json.obj("gpu_utilization", json.obj("total_time_ms", 4.21)))
local NO_OPPORTUNITY = "# Kernel Fusion Analysis Summary (Experimental)\n\nNo kernel fusion opportunities detected.\n"

do
  local cands = { { module_name = "run_adds", base_name = "run_adds", parent_chain = {}, instance_count = 1,
    kernel_count = 10, kernels = add_kernels(10), has_fused_kernel = false, total_kernel_time_us = 4210.0 } }
  local s = run_agent("kernel_fusion", { scope = "standalone", manifest = fusion_manifest, candidates = json.encode(cands),
    metrics = fusion_metrics({ estimate("run_adds", 84.48, 72.41, 96.54, "medium") }), unified = unified }).findings or ""
  T.check(s:find("### 🔴 P1: Unfused Elementwise Add Sequence (4.21 ms, 1 instance)\n", 1, true), "fusion card heading")
  T.check(s:find("#### Unfused Elementwise Add Sequence (4.21 ms, 1 instance)\n", 1, true), "fusion block heading")
  T.check(s:find("\n**Impact**: impact_score: 84.48 (perf-model coverage 10/10 kernels)\n", 1, true), "standalone impact")
  T.check(s:find("<!-- impact-begin kind=p_item low=72.41 mid=84.48 high=96.54 -->", 1, true), "p_item verbatim")
  T.check(s:find("<!-- impact-begin kind=detail_estimate low=72.41 high=96.54 -->", 1, true), "detail verbatim")
  -- typed Add, as the Insight counts them ("10 Add"), not the classifier's Elementwise
  T.eq(count(s, "| Add | 4%d%d%.0 | Yes |"), 10, "ten kernel rows with a perf model")
  T.check(s:find("| `void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunc...` |", 1, true),
    "kernel names cut at 70 characters")
  T.check(s:find("**Confidence**: Medium — ", 1, true), "confidence word")
  T.check(s:find("- Coverage: 10 of 10 kernels modelled\n", 1, true), "coverage")
  T.check(s:find("- Fusion pattern: no matrix kernels (element-wise, normalization and reduction kernels); the "
    .. "estimate treats it as memory-bound\n", 1, true), "fusion pattern bullet in words, not the enum values")
  T.check(not s:find("memory_bound", 1, true), "no enum value in the text")
  T.check(s:find("Found 1 kernel fusion opportunity across 1 module type.", 1, true), "overview")
  -- savings = impact/100 * 4.21 ms: 72.41% -> 3.048 ms, 96.54% -> 4.064 ms
  T.check(s:find("| P1: Unfused Elementwise Add Sequence | no matrix kernels (element-wise, normalization and reduction kernels) | 3.048–4.064 | 72.41–96.54% | Medium |",
    1, true), "impact summary row")
  T.check(s:find("tier=fusion rank=1", 1, true), "fusion tier")
  level1(s, "fusion", "kernel_fusion")
  no_placeholders(s, "kernel_fusion")

  -- Partial coverage, a second (high) candidate, a container set aside; order by impact_score.
  cands[2] = { module_name = "nn.Module: LlamaRMSNorm_0", base_name = "LlamaRMSNorm", parent_chain = { "LlamaDecoderLayer_3" },
    instance_count = 32, kernel_count = 4, kernels = {
      { name = "void at::native::pow_tensor_scalar_kernel", type = "Elementwise", dur_us = 3 },
      { name = "void at::native::reduce_kernel<MeanOps<float>>", type = "Unknown", dur_us = 4 },
      { name = "void at::native::rsqrt_kernel_cuda", type = "Elementwise", dur_us = 2 },
      { name = "void at::native::elementwise_kernel<MulFunctor<float>>", type = "Elementwise", dur_us = 2 } } }
  cands[3] = { module_name = "nn.Module: LlamaDecoderLayer_0", base_name = "LlamaDecoderLayer", instance_count = 32,
    kernels = add_kernels(3) }
  local metrics = fusion_metrics({ estimate("run_adds", 84.48, 72.41, 96.54, "medium"),
    estimate("LlamaDecoderLayer", 50.0, 40.0, 60.0, "low"),
    estimate("LlamaRMSNorm", 90.0, 80.0, 99.0, "high", { estimation = "partial", kernel_count = 4,
      modeled_kernel_count = 3, instance_count = 32, time_ms = 0.352 }) })
  s = run_agent("kernel_fusion", { scope = "standalone", manifest = fusion_manifest, candidates = json.encode(cands),
    metrics = metrics, unified = unified }).findings or ""
  T.check(s:find("### 🔴 P1: Unfused RMSNorm (0.352 ms, 32 instances)", 1, true), "highest impact first, high = 🔴")
  T.check(s:find("### 🟡 P2: Unfused Elementwise Add Sequence", 1, true), "second card")
  T.check(not s:find("P3:", 1, true), "container not carded")
  T.check(s:find("1 candidate was set aside by the fusion rules: `LlamaDecoderLayer` (container module", 1, true),
    "container set aside")
  T.check(s:find("- Coverage: 3 of 4 kernels modelled (1 kernel uses measured trace time)", 1, true), "partial coverage")
  T.check(s:find("`LlamaRMSNorm` (inside `LlamaDecoderLayer`)", 1, true), "parent module context")
  T.check(s:find("| Mean | 4.0 |", 1, true) and not s:find("| Unknown | 4.0 |", 1, true),
    "a kernel the classifier calls Unknown is typed by what its name shows (reduce_kernel<MeanOps>: Mean)")
  T.check(s:find("**Confidence**: High — the module name points to a normalization and the kernel composition shows "
    .. "a normalization (rsqrt).", 1, true), "high confidence reason")
  level1(s, "fusion", "kernel_fusion (two cards)")

  -- Everything set aside -> the no-opportunity file.
  s = run_agent("kernel_fusion", { scope = "standalone", manifest = fusion_manifest, candidates = json.encode({ cands[3] }),
    metrics = fusion_metrics({ estimate("LlamaDecoderLayer", 50.0, 40.0, 60.0, "low") }) }).findings
  T.eq(s:sub(1, #NO_OPPORTUNITY), NO_OPPORTUNITY, "all candidates set aside: no-opportunity file")
  T.check(s:find("1 candidate was set aside by the fusion rules: `LlamaDecoderLayer` (container module", 1, true),
    "all candidates set aside: the reason is given")

  -- Comparative: measured gap, Impact ends after the number, two kernel tables.
  local ccands = { { module_name = "moe_layer", base_name = "moe_layer", parent_chain = {}, instance_count = 1,
    kernel_count_trace1 = 4, kernel_count_trace2 = 1, delta = 3,
    kernels_trace1 = { { name = "moe_sorting_kernel", type = "Unknown", dur_us = 120.0 },
      { name = "ck_moe_stage1_kernel", type = "Unknown", dur_us = 480.0 },
      { name = "ck_moe_stage2_kernel", type = "Unknown", dur_us = 480.0 },
      { name = "moe_sum_kernel", type = "Unknown", dur_us = 80.0 } },
    kernels_trace2 = { { name = "triton_moe_fused", type = "Unknown", dur_us = 800.0 } } } }
  s = run_agent("kernel_fusion", { scope = "comparative", manifest = fusion_manifest, candidates = json.encode(ccands),
    metrics = fusion_metrics({ estimate("moe_layer", 25.0, 21.43, 28.57, "medium", { estimation = "measured",
      time_ms = 1.16, kernel_count = 4, modeled_kernel_count = 4 }) }) }).findings or ""
  T.check(s:find("\n**Impact**: impact_score: 25.0\n", 1, true), "comparative impact ends after the number")
  T.check(s:find("**Trace1 kernels:**", 1, true) and s:find("**Trace2 kernels:**", 1, true), "two kernel tables")
  -- a CK MoE GEMM the classifier leaves untyped is typed by its name, as in the MoE agent case
  T.check(s:find("| `ck_moe_stage1_kernel` | MoE GEMM | 480.0 |", 1, true), "trace-1 kernel row")
  T.check(s:find("| `triton_moe_fused` | Unknown | 800.0 |", 1, true), "trace-2 kernel row: its name shows nothing")
  T.check(not s:find("Coverage:", 1, true), "no coverage bullet in comparative mode")
  T.check(s:find("`kernels_trace2[]`", 1, true), "comparative source list")
end

-- Two candidates share a base name (a module and a sibling sequence): the
-- estimate joins the one with its kernel and instance counts.
do
  local cands = {
    { module_name = "adds", base_name = "adds", instance_count = 24, kernels = add_kernels(10) },
    { module_name = "adds", base_name = "adds", instance_count = 24, kernels = add_kernels(6), source = "sibling_sequence" },
  }
  local s = run_agent("kernel_fusion", { scope = "standalone", manifest = fusion_manifest, candidates = json.encode(cands),
    metrics = fusion_metrics({ estimate("adds", 9.0, 8.0, 10.0, "low", { kernel_count = 6, modeled_kernel_count = 6,
      instance_count = 24 }), estimate("adds", 5.0, 4.0, 6.0, "low", { kernel_count = 10, instance_count = 24 }) }),
    unified = unified }).findings or ""
  T.check(s:find("### 🔴 P1: Unfused Elementwise Add Sequence (4.21 ms, 24 instances)\n\n**Insight**: `adds` launches 6 "
    .. "separate GPU kernels", 1, true), "estimate with 6 kernels joins the 6-kernel candidate")
  T.check(s:find("**Insight**: `adds` launches 10 separate GPU kernels", 1, true), "the other joins the 10-kernel one")
end
T.eq(rules.module_label({ base_name = "transformers/models/bert/modeling_bert.py(638): feed_forward_chunk" }),
  "modeling_bert.py(638): feed_forward_chunk", "python frame without directories")
T.eq(rules.module_label({ module_name = "nn.Module: BertOutput_0" }), "BertOutput", "module class without index")

-- The bert golden: no estimate -> the exact no-opportunity file.
do
  local G = shared .. "/agent_golden/standalone/"
  if T.dir_exists(G) then
    local s = run_agent("kernel_fusion", { scope = "standalone", manifest = read(G .. "category_data/category_manifest.json"),
      candidates = read(G .. "category_data/fusion_candidates.json"),
      metrics = read(G .. "category_data/kernel_fusion_metrics.json") }).findings
    T.eq(s, NO_OPPORTUNITY, "bert: no-opportunity file")
  end
end

-- Fusion decisions ------------------------------------------------------------------------

local function kernels(list)
  local out = {}
  for i, k in ipairs(list) do out[i] = { name = k[1], type = k[2], dur_us = 1 } end
  return out
end
local GEMM = { "Cijk_Alik_Bljk_MT64", "GEMM" }
local GELU = { "vectorized_elementwise_kernel<8, GeluCUDAKernelImpl>", "Elementwise" }
local ADDK = { "vectorized_elementwise_kernel<8, CUDAFunctor_add<c10::BFloat16>>", "Elementwise" }
local LN = { "vectorized_layer_norm_kernel<c10::BFloat16, float>", "LayerNorm" }
local SOFTMAX = { "cunn_SoftMaxForward<8, float>", "Unknown" }
local CONV = { "igemm_fwd_gtcx_nhwc", "Convolution" }

local function pattern_name(base, list) return rules.pattern({ base_name = base, kernels = kernels(list) }).name end

T.eq(pattern_name("BertIntermediate", { GEMM, GELU }), "GEMM Epilogue (GELU)", "GEMM + GELU")
T.eq(pattern_name("BertOutput", { GEMM, ADDK, LN }), "GEMM Epilogue (Add + LayerNorm)", "GEMM + add + LayerNorm")
T.eq(pattern_name("transformers/models/bert/modeling_bert.py(638): feed_forward_chunk", { GEMM, GELU, GEMM, ADDK, LN }),
  "Unfused MLP Epilogues (GELU + Add + LayerNorm)", "feed-forward with two GEMMs")
T.eq(pattern_name("SelfAttention", { GEMM, SOFTMAX, GEMM }), "Unfused Attention", "GEMM + softmax + GEMM")
T.eq(pattern_name("Conv2dAct", { CONV, ADDK }), "Convolution Epilogue (Add)", "convolution named as such")
T.eq(pattern_name("apply_rotary_pos_emb", { { "neg_kernel_cuda", "Elementwise" }, { "CatArrayBatchedCopy", "Unknown" },
  { "MulFunctor", "Elementwise" }, ADDK }), "Unfused RoPE", "neg + cat + mul + add")
T.eq(pattern_name("Mlp", { { "silu_kernel", "Elementwise" }, { "MulFunctor", "Elementwise" } }), "Unfused SwiGLU",
  "silu + mul")
T.eq(pattern_name("prep", { ADDK, LN }), "Unfused Residual Add + LayerNorm", "add + norm")
T.eq(pattern_name("run", { ADDK, GELU, { "MulFunctor", "Elementwise" } }), "Unfused Elementwise Chain (Add + GELU + Mul)",
  "mixed elementwise chain")
-- The MoE agent case (test01_moe_fused_vs_unfused, trace 1): AITER's four kernels under `moe_layer`, all
-- "Unknown" to the kernel classifier (no rule of analysis-layer.md §4 matches them), are no elementwise work:
-- a sorting kernel, two CK MoE GEMM stages, a sum. Before: "Unfused Elementwise Sequence" and
-- "Fuse the 4 elementwise kernels".
do
  local MOE = { { "moe_sorting_kernel<BF16>", "Unknown" }, { "ck_moe_stage1_kernel<BF16, 128, 128>", "Unknown" },
    { "ck_moe_stage2_kernel<BF16, 128, 128>", "Unknown" }, { "moe_sum_kernel<BF16>", "Unknown" } }
  local ks = kernels(MOE)
  T.eq(rules.op_label(ks[1]) .. "|" .. rules.op_label(ks[2]) .. "|" .. rules.op_label(ks[3]) .. "|"
    .. rules.op_label(ks[4]), "MoE Sorting|MoE GEMM|MoE GEMM|MoE Sum", "MoE kernels labelled by name")
  T.eq(pattern_name("moe_layer", MOE), "Unfused Mixture-of-Experts", "MoE stages: no elementwise pattern")
  local c = { base_name = "moe_layer", kernels = ks }
  T.eq(rules.untyped_matrix_count(c), 2, "two MoE GEMMs without a matrix type")
  T.eq(rules.reject(c), nil, "an unfused MoE stays a candidate")
  local action = rules.action(c, rules.pattern(c))
  T.check(action:find("Replace the 4 kernels of `moe_layer` with one fused MoE kernel", 1, true)
    and not action:lower():find("elementwise", 1, true), "MoE action: " .. action)
  local word, reason = rules.confidence(c, "medium")
  T.eq(word, "Medium", "confidence word")
  T.check(reason:find("gives its 2 MoE GEMM kernels no type", 1, true)
    and not reason:find("elementwise", 1, true), "MoE confidence reason: " .. reason)
  -- a MoE GEMM the classifier types (R029 "MoE GEMM (CK)") is one too, and counts as typed matrix work
  local typed = kernels({ { "kernel_moe_gemm_bf16", "MoE GEMM (CK)" }, { "moe_sum_kernel<BF16>", "Unknown" } })
  T.check(rules.is_moe_gemm(typed[1]), "typed MoE GEMM")
  T.eq(rules.untyped_matrix_count({ kernels = typed }), 0, "a typed MoE GEMM is not untyped")
  T.eq(pattern_name("moe", { { "kernel_moe_gemm_bf16", "MoE GEMM (CK)" }, { "moe_sum_kernel<BF16>", "Unknown" } }),
    "Unfused Mixture-of-Experts", "typed MoE GEMM + sum")
  -- the generic fallback is unchanged for kernels whose names show nothing
  T.eq(pattern_name("run", { { "kernel_a", "Unknown" }, { "kernel_b", "Unknown" } }), "Unfused Elementwise Sequence",
    "unnamed kernels stay an elementwise sequence")
end
T.eq(rules.reject({ module_name = "nn.Module: Sequential_0", base_name = "Sequential", kernels = kernels({ GEMM, GELU }) }),
  "container module", "Sequential is a container")
T.check(rules.reject({ module_name = "nn.Module: BertLayer_0", base_name = "BertLayer", kernels = kernels({ GEMM, GELU }) })
  ~= nil, "*Layer is a container")
T.eq(rules.reject({ base_name = "qkv_proj", kernels = kernels({ GEMM, GEMM, ADDK }) }),
  "independent GEMMs side by side (separate weights, no shared epilogue)", "independent GEMMs")
T.eq(rules.reject({ base_name = "LayerNormThing", kernels = kernels({ GEMM, LN }) }),
  "GEMM followed only by normalization", "GEMM + norm only")
T.eq(rules.reject({ module_name = "nn.Module: BertOutput_0", base_name = "BertOutput", kernels = kernels({ GEMM, ADDK, LN }) }),
  nil, "BertOutput stays")
T.eq(rules.icon_at(1) .. rules.icon_at(2) .. rules.icon_at(3) .. rules.icon_at(7), "🔴🟡🟢🟢", "icons by rank")

-- model identification ------------------------------------------------------------------------

local csv_rows = T.csv_records

local modules = T.lines

local function model_info(unified_rows, nn_modules)
  local out = run_agent("model_id", { scope = "standalone", unified = unified_rows, nn_modules = nn_modules })
  local ok, v = pcall(json.decode, out.model_info or "")
  T.check(ok, "model_info is JSON")
  if ok then T.eq(table.concat(json.keys(v), ","), "model,architecture,scale,precision", "model_info keys") end
  return ok and v or {}
end

local U = "Cannot be inferred from trace"
if T.dir_exists(shared .. "/agent_golden") then
  local G = shared .. "/agent_golden/standalone/"
  local m = model_info(csv_rows(G .. "perf_report_csvs/unified_perf_summary.csv"), modules(G .. "metadata/nn_modules.txt"))
  T.eq(m.model, "BERT", "bert: family from Bert* modules")
  T.eq(m.architecture, "Transformer", "bert: SDPA -> Transformer")
  -- weights (512,512) (512,2048) (2048,512) (512,30522): 512 is shared by four shapes
  T.eq(m.scale, "small (hidden size 512)", "bert: hidden size 512")
  T.eq(m.precision, "BF16", "bert: BF16 compute")

  -- Qwen1.5-0.5B-Chat: hidden size 1024, a decoder, so labelled by parameter count.
  local Q = shared .. "/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs/unified_perf_summary.csv"
  if T.file_exists(Q) then
    -- (this perf summary has no call stacks: the module names the trace's python stack holds)
    local rows = csv_rows(Q)
    local mods = { "Embedding", "Linear", "Qwen2Attention", "Qwen2DecoderLayer", "Qwen2MLP", "Qwen2Model",
      "Qwen2RMSNorm", "Qwen2RotaryEmbedding", "SiLU" }
    local q = model_info(rows, mods)
    T.eq(q.model, "Qwen", "qwen: family")
    T.eq(q.architecture, "Transformer", "qwen: architecture")
    T.eq(q.scale, "~0.5B (hidden size 1024)", "qwen: scale")
    T.eq(q.precision, "BF16", "qwen: precision")
  end

  local C = shared .. "/agent_cases/standalone/"
  local expect = {
    -- reference model_info values (agents-and-report.md §7.3) where they are evidence-based
    conv_01_large_spatial_small_ch = { "Vision", "CNN", U, "FP32" },
    moe_01_many_experts_few_tokens = { "LLM (Mixture-of-Experts)", "Transformer (MoE)",
      "64 experts, hidden=4096, intermediate=11008, top-2", "BF16" },
    gemm_01_compute_few_tiles = { U, U, U, "BF16" },
    elem_01_add_poor_bw = { U, U, U, "FP32" },
    sdpa_01_long_seq_low_eff = { U, "Transformer", U, "BF16" },
  }
  for case, e in pairs(expect) do
    local path = C .. case .. "/ref/perf_report_csvs/unified_perf_summary.csv"
    if T.file_exists(path) then
      local got = model_info(csv_rows(path), {})
      T.eq(got.model, e[1], case .. " model")
      T.eq(got.architecture, e[2], case .. " architecture")
      T.eq(got.scale, e[3], case .. " scale")
      T.eq(got.precision, e[4], case .. " precision")
    end
  end
end
do
  local m = model_info(nil, {})
  T.eq(m.model .. m.precision, U .. U, "no perf summary: all unknown")
  local rows = { { name = "aten::convolution", ["op category"] = "CONV_fwd", ["Input type"] = "('c10::Half', 'c10::Half')",
    ["Input Dims"] = "((8, 64, 56, 56), (64, 64, 3, 3))", ["Kernel Time (µs)_sum"] = "900" },
    { name = "aten::addmm", ["op category"] = "GEMM", ["Input type"] = "('c10::Half', 'c10::Half', 'c10::Half')",
      ["Input Dims"] = "((1000,), (8, 2048), (2048, 1000))", ["Kernel Time (µs)_sum"] = "100" } }
  m = model_info(rows, { "Bottleneck", "ResNet", "Conv2d" })
  T.eq(m.model, "ResNet", "ResNet family")
  T.eq(m.architecture, "CNN", "conv time dominates")
  T.eq(m.precision, "FP16", "c10::Half")
  T.eq(m.scale, U, "one GEMM weight shape is not evidence of a hidden size")
  -- a CNN's GEMMs are its classifier: no hidden size, however many weight shapes share a side
  rows[#rows + 1] = { name = "aten::addmm", ["op category"] = "GEMM", ["Input type"] = "('c10::Half', 'c10::Half', "
    .. "'c10::Half')", ["Input Dims"] = "((2048,), (8, 1000), (1000, 2048))", ["Kernel Time (µs)_sum"] = "100" }
  T.eq(model_info(rows, { "Bottleneck", "ResNet", "Conv2d" }).scale, U, "CNN: no hidden size")
  -- an unknown family: the hidden size alone, no size name (BERT's "large" is 1024)
  local tx = { { name = "aten::_scaled_dot_product_cudnn_attention", ["op category"] = "SDPA_fwd",
    ["Input type"] = "('c10::BFloat16',)", ["Input Dims"] = "((8, 16, 1023, 64),)", ["Kernel Time (µs)_sum"] = "100" },
    { name = "aten::addmm", ["op category"] = "GEMM", ["Input type"] = "('c10::BFloat16',)",
      ["Input Dims"] = "((4096,), (8184, 1024), (1024, 4096))", ["Kernel Time (µs)_sum"] = "300" },
    { name = "aten::addmm", ["op category"] = "GEMM", ["Input type"] = "('c10::BFloat16',)",
      ["Input Dims"] = "((1024,), (8184, 4096), (4096, 1024))", ["Kernel Time (µs)_sum"] = "300" } }
  T.eq(model_info(tx, { "GPT", "Block", "Linear" }).scale, "hidden size 1024", "no family: no size name")
  -- FBGEMM's table-batched embeddings (HTA's trace_filter ranks): a recommender, whatever bmm and softmax there are,
  -- and no transformer parameter count from its hidden size
  local rec = { { name = "fbgemm::split_embedding_codegen_lookup_rowwise_adagrad_function", ["op category"] = "other",
    ["Kernel Time (µs)_sum"] = "50" },
    { name = "aten::bmm", ["op category"] = "GEMM", ["Input type"] = "('float', 'float')",
      ["Input Dims"] = "((64, 128, 2048), (64, 2048, 128))", ["Kernel Time (µs)_sum"] = "400" },
    { name = "aten::_softmax", ["op category"] = "other", ["Kernel Time (µs)_sum"] = "100" },
    { name = "aten::mm", ["op category"] = "GEMM", ["Input type"] = "('float', 'float')",
      ["Input Dims"] = "((512, 2048), (2048, 2048))", ["Kernel Time (µs)_sum"] = "400" },
    { name = "aten::addmm", ["op category"] = "GEMM", ["Input type"] = "('float', 'float', 'float')",
      ["Input Dims"] = "((2048,), (512, 2048), (2048, 2048))", ["Kernel Time (µs)_sum"] = "400" } }
  m = model_info(rec, {})
  T.eq(m.architecture, "Recommendation", "TBE: a recommender (5% of kernel time)")
  T.check(not m.scale:find("B", 1, true) and not m.scale:find("M ", 1, true), "TBE: no parameter count: " .. m.scale)
end

T.finish()

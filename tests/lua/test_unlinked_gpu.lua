-- Issue 11 item 2: GPU work that no launch links to is analysed, not dropped.
-- Its kernels join the compute categories (rows "<kernel> (no launching op)",
-- categorised from the kernel name), the utilisation counts every GPU event,
-- and the share of GPU time without a launching op is said once in
-- analysis.md ("**Unlinked GPU work**") and as a
-- [DIAG:trace_quality:UNLINKED_GPU] line. A trace where no GPU event links
-- (sampled traces without ac2g flows) is analysed the same way instead of
-- stopping with "no GPU events found in the trace that a launch links to".
-- The expected share is computed here from the trace's JSON, independently
-- of the tree: a GPU event is linked when a runtime call has its correlation
-- and an ac2g flow start and finish carry it. An unlinked GPU event that
-- starts before the trace's first launch call (kernel, copy, memset or
-- graph launch), or whose correlation id is below every launch call's (all
-- of them with one, above 0, on one pid), was launched before the profiling
-- window opened: it is left
-- out of the analysis and said in the health warnings ("GPU work launched
-- before the trace"; Qwen H100: 509 events, 13.74 ms, the previous step's
-- tail), so the analysis' total time is the reference's gpu_timeline's.
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local json = require "tracelens.json"

local tmp = T.tmpdir()
local read = tl.fs.read_file
local GPU = { kernel = true, gpu_memcpy = true, gpu_memset = true }
local SUFFIX = " (no launching op)"

-- A runtime call that enqueues GPU work, by name (as tracelens.health documents it).
local function launch_kind(name)
  local l = tostring(name):lower()
  if l:find("graphlaunch", 1, true) then return "graph" end
  if l:find("launch", 1, true) or l:find("memcpy", 1, true) or l:find("memset", 1, true) then return "work" end
end

-- µs of all GPU events and of the unlinked ones, from the trace text, leaving
-- out the unlinked ones launched before the trace (counted in `before`): they
-- start before the first launch call, or carry a correlation id above 0 below
-- every launch call's (when every launch call has one above 0, all on one pid).
local function expected_share(text)
  local doc = json.decode(text)
  local events = doc.traceEvents or doc
  local runtime, flow_s, flow_f = {}, {}, {}
  local first_launch, min_id, pids = math.huge, math.huge, {}
  for _, e in ipairs(events) do
    local a = type(e.args) == "table" and e.args or {}
    if (e.cat == "cuda_runtime" or e.cat == "cuda_driver") and launch_kind(e.name) and tonumber(e.ts) then
      first_launch = math.min(first_launch, tonumber(e.ts))
      local id = tonumber(a.correlation)
      min_id = (id and id > 0) and math.min(min_id, id) or -math.huge
      pids[tostring(e.pid)] = true
    end
    if (e.cat == "cuda_runtime" or e.cat == "cuda_driver") and a.correlation ~= nil then
      runtime[tostring(a.correlation)] = true
    elseif e.cat == "ac2g" and e.id ~= nil then
      if e.ph == "s" then flow_s[tostring(e.id)] = true elseif e.ph == "f" then flow_f[tostring(e.id)] = true end
    end
  end
  if next(pids, next(pids)) then min_id = -math.huge end -- launch calls of two pids: ids do not compare
  local all, unlinked, n, compute = 0.0, 0.0, 0, 0.0
  local before = { us = 0.0, n = 0 }
  for _, e in ipairs(events) do
    if GPU[e.cat] then
      local d = math.max(0, tonumber(e.dur) or 0)
      local c = type(e.args) == "table" and e.args.correlation
      c = c ~= nil and tostring(c)
      local linked = c and runtime[c] and flow_s[c] and flow_f[c]
      local id = tonumber(c)
      if not linked and (tonumber(e.ts) < first_launch or (id and id > 0 and id < min_id)) then
        before.us, before.n = before.us + d, before.n + 1
        d = nil
      end
      if d then all = all + d end
      if d and not linked then
        unlinked, n = unlinked + d, n + 1
        local l = tostring(e.name):lower()
        if e.cat ~= "gpu_memcpy" and not (l:find("nccl", 1, true) or l:find("rccl", 1, true)) then
          compute = compute + d -- computation (not a copy, not communication)
        end
      end
    end
  end
  return all, unlinked, n, compute, before
end

local function gunzip(path)
  local ok, code, out = T.run("gzip -dc " .. T.q(path))
  T.check(ok, path .. ": gzip -dc exit " .. tostring(code))
  return out or ""
end

-- Runs the analysis (not quiet: the DIAG lines are progress lines on stderr).
local function analyse(trace, name)
  local out = tmp .. "/" .. name
  local ok, code, stdout, stderr = T.run(string.format("%s run orchestrator.lua %s -o %s --no-rules",
    T.q(bin), T.q(trace), T.q(out)))
  T.eq(code, 0, name .. ": exit 0 (" .. tostring(stderr):sub(-600) .. ")")
  local vok, vcode, vout = T.run(string.format("%s validate %s", T.q(bin), T.q(out)))
  T.check(vcode == 0 and (vout or ""):find("RESULT: PASS", 1, true), name .. ": tracelens validate passes: "
    .. tostring(vout):sub(-800))
  return out, (stdout or "") .. (stderr or ""), read(out .. "/analysis.md") or "",
    json.decode(read(out .. "/category_data/category_manifest.json") or "{}")
end

-- The share said in the DIAG line, the sentence and the manifest against the
-- one computed from the trace.
local function check_share(name, text, output, md, manifest)
  local all, unlinked, n, compute = expected_share(text)
  local pct = unlinked / all * 100
  T.check(unlinked > 0, name .. ": the trace has unlinked GPU work")
  local diag = output:match("%[DIAG:trace_quality:UNLINKED_GPU%][^\n]*")
  if T.check(diag, name .. ": the DIAG line") then
    local ms, p, whole, count = diag:match("(%d+%.%d+) ms of GPU time %((%d+%.%d)%% of (%d+%.%d+) ms%) in (%d+) GPU")
    T.close(tonumber(ms), unlinked / 1000, name .. ": DIAG unlinked ms", 0, 0.006)
    T.close(tonumber(p), pct, name .. ": DIAG share", 0, 0.051)
    T.close(tonumber(whole), all / 1000, name .. ": DIAG all GPU ms", 0, 0.006)
    T.eq(tonumber(count), n, name .. ": DIAG event count")
  end
  local sentence = md:match("%*%*Unlinked GPU work%*%*: [^\n]*")
  if T.check(sentence, name .. ": the sentence in analysis.md") then
    local p = sentence:match("%((%d+%.%d)%% of all GPU event time")
    T.close(tonumber(p), pct, name .. ": the sentence's share", 0, 0.051)
    local _, k = md:gsub("%*%*Unlinked GPU work%*%*", "")
    T.eq(k, 1, name .. ": said once")
  end
  local u = manifest.unlinked_gpu or {}
  T.close(u.time_ms, unlinked / 1000, name .. ": manifest time_ms", 0, 0.0006)
  T.close(u.percent_of_gpu_time, pct, name .. ": manifest share", 0, 0.051)
  T.check(not md:find("that a launch links to", 1, true), name .. ": no linking error in the text")
  return unlinked, pct, compute
end

-- The unlinked kernels are rows of their categories' ops files: {category,
-- name (the row's short display name), full (the kernel's name, from
-- kernel_details_summary)}.
local function unlinked_rows(out, manifest)
  local rows, us = {}, 0
  for _, c in ipairs(manifest.categories or {}) do
    if c.tier == "compute_kernel" then
      local csv = out .. "/category_data/" .. c.name .. "_ops.csv"
      for _, r in ipairs(T.file_exists(csv) and T.csv_records(csv) or {}) do
        if r.name:sub(-#SUFFIX) == SUFFIX then
          rows[#rows + 1] = { category = c.name, name = r.name:sub(1, -#SUFFIX - 1),
            full = (r.kernel_details_summary or ""):match("^%[{'name': '(.-)', 'stream': ") }
          us = us + (tonumber(r["Kernel Time (µs)_sum"]) or 0)
        end
      end
    end
  end
  return rows, us
end

-- Unlinked rows are named by a short display name (the full mangled name
-- can pass 1000 characters), unique within its category, with the full
-- name kept in kernel_details_summary; analysis.md never prints a full
-- long name, and no backticked name or table cell in it is overlong.
local MAX_SHORT = 100 -- tracelens.kernel_name.MAX_CHARS
local function check_names(name, rows, md)
  local seen = {}
  for _, r in ipairs(rows) do
    T.check(r.full and #r.full > 0, name .. ": the full kernel name in kernel_details_summary: " .. r.name)
    T.check(utf8.len(r.name) <= MAX_SHORT, name .. ": a short row name: " .. r.name:sub(1, 120))
    local key = r.category .. "\0" .. r.name
    T.check(not seen[key], name .. ": row names unique in " .. r.category .. ": " .. r.name)
    seen[key] = true
    if r.full and #r.full > MAX_SHORT then
      T.check(not md:find(r.full, 1, true), name .. ": analysis.md does not print the full name " .. r.full:sub(1, 80))
    end
  end
  local n = 0
  for line in md:gmatch("[^\n]+") do
    n = n + 1
    if not line:find("data:image/", 1, true) then
      for span in line:gmatch("`([^`]*)`") do
        T.check(utf8.len(span) <= 160, name .. ": analysis.md line " .. n .. ": a backticked text of "
          .. utf8.len(span) .. " characters: " .. span:sub(1, 80))
      end
      if line:sub(1, 1) == "|" then
        for cell in line:gmatch("|([^|]*)") do
          T.check(utf8.len(cell) <= 240, name .. ": analysis.md line " .. n .. ": a table cell of "
            .. utf8.len(cell) .. " characters: " .. cell:sub(1, 80))
        end
      end
    end
  end
end

-- 1. Real traces -------------------------------------------------------------------
-- Qwen H100: its only unlinked GPU work ran before the trace's first launch
-- call (the previous step's tail, during the step's opening
-- cudaDeviceSynchronize): none of it is analysed, the analysis' total time
-- is the reference's gpu_timeline total (its perf_report_csvs, read here),
-- and the health warning says how much was left out.
local REAL = {
  { "qwen_h100", shared .. "/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    shared .. "/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs/gpu_timeline.csv" },
}
local ran = 0
for _, r in ipairs(REAL) do
  local name, path, ref_timeline = r[1], r[2], r[3]
  if T.file_exists(path) then
    ran = ran + 1
    local text = gunzip(path)
    local out, output, md, manifest = analyse(path, name)
    local _, unlinked, _, _, before = expected_share(text)
    T.eq(unlinked, 0.0, name .. ": no unlinked GPU work once the work launched before the trace is left out")
    T.eq(before.n, 509, name .. ": 509 GPU events launched before the trace")
    T.check(not md:find("**Unlinked GPU work**", 1, true), name .. ": no unlinked-work sentence")
    T.check(not output:find("UNLINKED_GPU", 1, true), name .. ": no UNLINKED_GPU line")
    T.eq(manifest.unlinked_gpu, nil, name .. ": no unlinked_gpu in the manifest")
    local rows = unlinked_rows(out, manifest)
    T.eq(#rows, 0, name .. ": no '(no launching op)' rows in the categories")
    local ref = {}
    for _, row in ipairs(T.csv_records(ref_timeline)) do ref[row.type] = tonumber(row["time ms"]) end
    T.close((manifest.gpu_utilization or {}).total_time_ms, ref.total_time, name .. ": the reference's total time",
      1e-6, 1e-6)
    local warn = md:match("%*%*GPU work launched before the trace%*%* %(warning%): [^\n]*") or ""
    local n, ms = warn:match("^[^:]*: ([%d,]+) GPU events %(([%d.]+) ms")
    T.eq(tonumber(n and (n:gsub(",", ""))), before.n, name .. ": the warning's count\n" .. warn)
    T.close(tonumber(ms), before.us / 1000, name .. ": the warning's time", 0, 0.051)
    T.check(warn:find("To fix: synchronize (torch.cuda.synchronize()) before the profiler's active window opens",
      1, true), name .. ": the warning's fix")
  end
end
if ran == 0 then print("note: no shared real trace with work launched before the trace; synthetic cases only") end

-- 1b. Traces without any ac2g flow (HTA's sampled ranks): a GPU event is linked
-- to its launch call by correlation alone when exactly one kernel/copy/memset
-- launch call and exactly one GPU event carry the id (computed here from the
-- JSON; launch calls by name, launch_kind above).

local function expected_by_correlation(text)
  local doc = json.decode(text)
  local events = doc.traceEvents or doc
  local launches, gpus, flows = {}, {}, 0
  for _, e in ipairs(events) do
    local c = type(e.args) == "table" and e.args.correlation
    if e.cat == "ac2g" then flows = flows + 1 end
    if c ~= nil then
      c = tostring(c)
      if (e.cat == "cuda_runtime" or e.cat == "cuda_driver") and launch_kind(e.name) == "work" then
        launches[c] = (launches[c] or 0) + 1
      elseif GPU[e.cat] then
        gpus[c] = (gpus[c] or 0) + 1
      end
    end
  end
  local n, all = 0, 0
  for _, e in ipairs(events) do
    if GPU[e.cat] then
      all = all + 1
      local c = type(e.args) == "table" and e.args.correlation
      if c ~= nil and launches[tostring(c)] == 1 and gpus[tostring(c)] == 1 then n = n + 1 end
    end
  end
  return n, all, flows
end

for _, r in ipairs({ "sampled_rank-0", "sampled_rank-1" }) do
  local path = shared .. "/hta/trace_filter/" .. r .. ".json.gz"
  if T.file_exists(path) then
    local n, all, flows = expected_by_correlation(gunzip(path))
    T.eq(flows, 0, r .. ": the trace has no ac2g flow")
    T.check(n > 0, r .. ": GPU events to link by correlation")
    local linked = 0
    local trace = tl.load(path)
    for _, cat in ipairs({ "kernel", "gpu_memcpy", "gpu_memset" }) do
      for e in trace:events{ cat = cat } do
        if e:launcher() then linked = linked + 1 end
      end
    end
    T.eq(linked, n, r .. ": GPU events with a launching op")
    local _, output, md = analyse(path, r)
    local count = tostring(n):reverse():gsub("(%d%d%d)(%d)", "%1,%2"):reverse() -- 1204 -> 1,204
    T.check(md:find("**GPU events linked by correlation id** (note): the trace has no ac2g flow event, so "
      .. count .. " GPU events were linked", 1, true),
      r .. ": analysis.md says the GPU events were linked by correlation (" .. count .. ")")
    -- the linked ops read right: an op with many kernels lists three in its
    -- Kernel Name cell; fbgemm's embedding backward is not "GEMM work"
    for line in md:gmatch("[^\n]+") do
      if line:sub(1, 1) == "|" then
        for cell in line:gmatch("|([^|]*)") do
          T.check(utf8.len(cell) <= 600, r .. ": a table cell of " .. utf8.len(cell) .. " characters: "
            .. cell:sub(1, 80))
        end
      end
    end
    T.check(not md:find("SplitLookupFunction_rowwise_adagrad_Op>` is classified as miscellaneous. Its name and kernel "
      .. "match GEMM", 1, true), r .. ": the fbgemm embedding op is not read as GEMM work")
    if n == all then
      T.check(not md:find("**Unlinked GPU work**", 1, true), r .. ": no unlinked GPU work left")
      T.check(not output:find("UNLINKED_GPU", 1, true), r .. ": no UNLINKED_GPU line")
    end
    ran = ran + 1
  end
end

-- 2. Synthetic traces: kernels whose correlation matches no runtime event -----------
local ev = T.x_event
local flow = T.flow_event
local GEMM = "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_cublas"
local ADD = "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float> >"
local LN = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<float, float>"
local DIMS = { ["Input Dims"] = "[[64,64],[64,64]]", ["Input type"] = '["float","float"]',
  ["Input Strides"] = "[[64,1],[64,1]]", ["Concrete Inputs"] = '["",""]' }

-- linked: how many of the kernels get a runtime call and flows; early: a
-- 40 µs kernel at 20 µs, before the first launch call (at 51 µs), whose
-- correlation matches nothing (launched before the trace); tail: an 80 µs
-- GEMM kernel at 900 µs, after the first launch call, whose correlation (1)
-- matches nothing and is below every launch call's (3 and up): launched
-- before the trace too (the warm-up step's tail, no synchronisation at the
-- end of a step)
local TAIL = "nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN"
local function synthetic(name, linked, early, tail)
  local events = {}
  local function add(e) events[#events + 1] = e end
  if early then add(ev("kernel", ADD, 20, 40, { correlation = "7", stream = "7" }, 0, 7)) end
  if tail then add(ev("kernel", TAIL, 900, 80, { correlation = "1", stream = "7" }, 0, 7)) end
  local kernels = { { "aten::mm", GEMM, 300 }, { "aten::add", ADD, 100 }, { "aten::layer_norm", LN, 50 },
    { "aten::mm", GEMM, 200 } }
  local gpu_ts = 1000
  for i, k in ipairs(kernels) do
    local corr = 100 + i
    local ts = 10 + 40 * i
    add(ev("cpu_op", k[1], ts, 30, DIMS))
    if i <= linked then
      add(ev("cuda_runtime", "cudaLaunchKernel", ts + 1, 5, { correlation = tostring(corr) }))
      add(flow("s", corr, 1, 1, ts + 1))
      add(flow("f", corr, 0, 7, gpu_ts))
    else
      -- the runtime call is lost: the kernel's correlation matches nothing (the call here, another one, has
      -- a lower id: were every launch call's id above the kernel's, it was launched before them all)
      add(ev("cuda_runtime", "cudaLaunchKernel", ts + 1, 5, { correlation = tostring(corr - 100) }))
    end
    add(ev("kernel", k[2], gpu_ts, k[3], { correlation = tostring(corr), stream = "7" }, 0, 7))
    gpu_ts = gpu_ts + k[3] + 10
  end
  local text = '{"traceEvents":[\n' .. table.concat(events, ",\n") .. "\n]}\n"
  local path = tmp .. "/" .. name .. ".json"
  tl.fs.write_file(path, text)
  return path, text
end

-- two of four kernels linked: 50 + 200 of 650 µs unlinked
do
  local path, text = synthetic("some_unlinked", 2)
  local out, output, md, manifest = analyse(path, "some_unlinked")
  local unlinked, pct = check_share("some_unlinked", text, output, md, manifest)
  T.eq(unlinked, 250.0, "some_unlinked: 250 µs unlinked")
  T.close(pct, 250 / 650 * 100, "some_unlinked: share", 0, 1e-9)
  local rows = unlinked_rows(out, manifest)
  local where, short = {}, {}
  for _, r in ipairs(rows) do where[r.full], short[r.full] = r.category, r.name end
  T.eq(where[GEMM], "gemm", "some_unlinked: the unlinked GEMM kernel joins the gemm category")
  T.eq(where[LN], "norm_fwd", "some_unlinked: the layer-norm kernel is categorised from its name")
  T.eq(where[ADD], nil, "some_unlinked: a linked kernel is not repeated as unlinked")
  -- the rows' display names: a C++ name shortened, a plain one kept
  T.eq(short[GEMM], GEMM, "some_unlinked: a kernel name that is not C++ is kept")
  T.eq(short[LN], "at::native::vectorized_layer_norm_kernel<…>", "some_unlinked: the C++ name shortened")
  check_names("some_unlinked", rows, md)
  -- gemm: the linked aten::mm (300 µs) and the unlinked kernel (200 µs)
  local cat = {}
  for _, c in ipairs(manifest.categories or {}) do cat[c.name] = c end
  T.close(cat.gemm and cat.gemm.gpu_kernel_time_ms, 0.5, "some_unlinked: gemm time with the unlinked kernel", 0,
    1e-9)
  -- every GPU event in the utilisation: 650 µs busy
  local util = manifest.gpu_utilization or { total_time_ms = 0, computation_time_percent = 0 }
  T.close(util.total_time_ms * util.computation_time_percent / 100, 0.65, "some_unlinked: computation time", 0, 1e-6)
end

-- the same with a kernel launched before the trace: left out, and said
do
  local path, text = synthetic("some_unlinked_early", 2, true)
  local out, output, md, manifest = analyse(path, "some_unlinked_early")
  local unlinked, pct = check_share("some_unlinked_early", text, output, md, manifest)
  local _, _, _, _, before = expected_share(text)
  T.eq(before.n, 1, "some_unlinked_early: one kernel launched before the trace")
  T.eq(unlinked, 250.0, "some_unlinked_early: 250 µs unlinked, the early kernel left out")
  T.close(pct, 250 / 650 * 100, "some_unlinked_early: share of the 650 µs analysed", 0, 1e-9)
  local rows = unlinked_rows(out, manifest)
  for _, r in ipairs(rows) do
    T.check(r.full ~= ADD, "some_unlinked_early: the early kernel is not an unlinked row")
  end
  T.check(md:find("**GPU work launched before the trace** (warning): 1 GPU event (0.0 ms, ", 1, true),
    "some_unlinked_early: the health warning")
  local util = manifest.gpu_utilization or { total_time_ms = 0, computation_time_percent = 0 }
  T.close(util.total_time_ms * util.computation_time_percent / 100, 0.65, "some_unlinked_early: computation time "
    .. "without the early kernel", 0, 1e-6)
end

-- the same with the previous step's tail running past the first launch call: the tail kernel's
-- correlation id (1) is below every launch call's (3, 4, 101, 102), so it is left out like the early one
-- and said in the same warning; the unlinked kernels with ids above (103, 104) stay analysed
do
  local path, text = synthetic("some_unlinked_tail", 2, true, true)
  local out, output, md, manifest = analyse(path, "some_unlinked_tail")
  local unlinked, pct = check_share("some_unlinked_tail", text, output, md, manifest)
  local _, _, _, _, before = expected_share(text)
  T.eq(before.n, 2, "some_unlinked_tail: the early and the tail kernel launched before the trace")
  T.eq(before.us, 120.0, "some_unlinked_tail: 40 + 80 µs")
  T.eq(unlinked, 250.0, "some_unlinked_tail: 250 µs unlinked, the tail kernel left out")
  T.close(pct, 250 / 650 * 100, "some_unlinked_tail: share of the 650 µs analysed", 0, 1e-9)
  local rows = unlinked_rows(out, manifest)
  T.eq(#rows, 2, "some_unlinked_tail: the two unlinked kernels with higher ids are rows")
  for _, r in ipairs(rows) do
    T.check(r.full ~= TAIL, "some_unlinked_tail: the tail kernel is not an unlinked row")
  end
  T.check(md:find("**GPU work launched before the trace** (warning): 2 GPU events (0.1 ms, ", 1, true)
    and md:find("1 starts before its first launch call and 1 (0.1 ms) after it but carries a correlation id below "
      .. "every launch call's in the trace", 1, true), "some_unlinked_tail: the health warning names both")
  local util = manifest.gpu_utilization or { total_time_ms = 0, computation_time_percent = 0 }
  T.close(util.total_time_ms * util.computation_time_percent / 100, 0.65, "some_unlinked_tail: computation time "
    .. "without the early and the tail kernel", 0, 1e-6)
end

-- no kernel links: analysed (this stopped with "... that a launch links to")
do
  local path, text = synthetic("none_linked", 0)
  local out, output, md, manifest = analyse(path, "none_linked")
  T.check(not output:find("that a launch links to", 1, true), "none_linked: no linking error")
  local unlinked, pct = check_share("none_linked", text, output, md, manifest)
  T.eq(unlinked, 650.0, "none_linked: every GPU event unlinked")
  T.close(pct, 100, "none_linked: 100%", 0, 1e-9)
  local rows = unlinked_rows(out, manifest)
  T.eq(#rows, 3, "none_linked: three kernel names in the categories")
  -- the perf report alone builds too: the GPU timeline over every GPU event
  local ok, code, so = T.run(string.format("%s report %s -o %s 2>&1", T.q(bin), T.q(path), T.q(tmp .. "/none_report")))
  T.eq(code, 0, "none_linked: tracelens report exit 0 (" .. tostring(so) .. ")")
  local tlr = {}
  local tl_csv = tmp .. "/none_report/perf_report_csvs/gpu_timeline.csv"
  if T.check(T.file_exists(tl_csv), "none_linked: gpu_timeline.csv written") then
    for _, r in ipairs(T.csv_records(tl_csv)) do tlr[r.type] = r end
  end
  T.close(tonumber(tlr.busy_time and tlr.busy_time["time ms"]), 0.65, "none_linked: report busy time", 0, 1e-9)
end

-- 3. The display names themselves (tracelens.kernel_name) ------------------------
do
  local kn = require "tracelens.kernel_name"
  local COPY = "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<"
    .. "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)::{lambda()#3}::operator()() const::"
    .. "{lambda(float)#1}>(at::TensorIteratorBase&, at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)"
    .. "::{lambda()#3}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1}>(int, "
    .. "at::native::gpu_kernel_impl_nocast<at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)"
    .. "::{lambda()#3}::operator()() const::{lambda(float)#1} const&)::{lambda(int)#1})"
  local NEG = COPY:gsub("direct_copy_kernel_cuda", "neg_kernel_cuda")
  local CAT2 = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::"
    .. "OpaqueType<2u>, unsigned int, 4, 64, 64>(at::native::(anonymous namespace)::OpaqueType<2u>*, int)"
  local CAT4 = CAT2:gsub("OpaqueType<2u>", "OpaqueType<4u>")
  T.eq(kn.short(COPY), "at::native::elementwise_kernel<…>", "short: return type, arguments and parameters dropped")
  T.eq(kn.short("void a::b::c::d::kern<int>(float*)"), "c::d::kern<…>", "short: three components at most")
  T.eq(kn.short("Memset (Device)"), "Memset (Device)", "short: a name that is not C++ is kept")
  T.eq(utf8.len(kn.short(string.rep("Cijk_Alik_Bljk_", 20))), kn.MAX_CHARS, "short: a long plain name cut")
  T.eq(kn.MAX_CHARS, MAX_SHORT, "the tests' MAX_SHORT is the module's")
  local u = kn.unique_short({ COPY, NEG, CAT2, CAT4, GEMM, CAT2 })
  T.eq(u[1], "at::native::elementwise_kernel<…direct_copy_kernel_cuda…>", "unique: the word only it has")
  T.eq(u[2], "at::native::elementwise_kernel<…neg_kernel_cuda…>", "unique: the other's word")
  T.eq(u[3], "at::native::CatArrayBatchedCopy<…> #1", "unique: numbered when no word tells them apart")
  T.eq(u[4], "at::native::CatArrayBatchedCopy<…> #2", "unique: numbered in list order")
  T.eq(u[5], GEMM, "unique: a name without a twin is its short form")
  T.eq(u[6], "at::native::CatArrayBatchedCopy<…> #3", "unique: even the same name twice gets its own")
  -- a mangled name (ROCm traces keep some): its nested name
  T.eq(kn.short("_ZN7ck_tile6kentryILi1ENS_12Rmsnorm2dFwdIfEEEvv"), "ck_tile::kentry<…>", "short: a mangled name")
  -- plain names alike in their first 100 characters: the part that tells them apart
  local TENSILE = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT32x32x256_MI16x16x1_SN_LDSB1_AFC1_AFEM1_AFEM1_"
    .. "ASEM1_CLR1"
  local t = kn.unique_short({ TENSILE .. "_NTA0_WG32", TENSILE .. "_NTA4_WG32" })
  T.check(t[1] ~= t[2] and t[1]:find("NTA0", 1, true) and t[2]:find("NTA4", 1, true), "unique: plain names told apart: "
    .. t[1] .. " / " .. t[2])
  T.check(utf8.len(t[1]) <= kn.MAX_CHARS and utf8.len(t[2]) <= kn.MAX_CHARS, "unique: plain names stay short")
end

T.finish()

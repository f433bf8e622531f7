-- The C helpers and the background report that make the standalone
-- analysis faster (issue 17, the analysis after the load) give what the
-- Lua code they replace gave:
--   1. trace:report{background = true}: job:wait() returns the sheets
--      trace:report gives (every sheet's CSV the same), the same table on a
--      second wait; its error is raised by wait; write/extension/compare
--      are refused; a job never waited for is collected cleanly;
--   2. trace:unlinked_gpu() and tracelens.prepare.unlinked_gpu against the
--      Lua walk over trace:events() they replace (a hand-made trace with
--      unlinked kernels, copies and memsets, and the shared MI300X Qwen
--      trace, 30% of whose GPU time has no launching op);
--   3. trace:kernel_slices and trace:dur_us against node:kernels() and
--      node.dur, for every op with kernels and slices at and past the ends;
--   4. fusion.candidates with the walks taken ahead (fusion.walks) equal to
--      the candidates without;
--   5. tl.uid_repeats, tl.uid_claims, tl.join_ints and trace:durs_us against
--      the Lua loops of tracelens.fusion.overlap / metrics they replace;
--   6. tracelens.json's float text (tl.float_repr) against the printf search
--      it replaces.
-- The shared traces are skipped (saying so) when ../shared/data is absent.
local root, shared = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local json = require "tracelens.json"
local prepare = require "tracelens.prepare"
local fusion = require "tracelens.fusion"
local kernel_name = require "tracelens.kernel_name"

local tmp = T.tmpdir()
local read = tl.fs.read_file

-- A trace: two linked kernels (one launch each), unlinked kernels of two
-- names (one twice, with a negative duration clipped to 0), an unlinked
-- copy and memset, and a kernel with a stream arg.
local function small_trace()
  local ev = {
    T.x_event("cpu_op", "aten::mm", 0, 100, { ["Input Dims"] = "[[2, 2]]" }),
    T.x_event("cuda_runtime", "cudaLaunchKernel", 10, 5, { correlation = "1" }),
    T.x_event("cpu_op", "aten::add", 200, 100, {}),
    T.x_event("cuda_runtime", "cudaLaunchKernel", 210, 5, { correlation = "2" }),
    T.x_event("kernel", "gemm_kernel", 20, 30, { correlation = "1", stream = "7", device = "0" }, 0, 7),
    T.x_event("kernel", "add_kernel", 220, 10, { correlation = "2", stream = "7", device = "0" }, 0, 7),
    T.x_event("kernel", "lonely_kernel", 400, 12, { correlation = "90", stream = "7", device = "0" }, 0, 7),
    T.x_event("kernel", "lonely_kernel", 450, 4, { correlation = "91", stream = "7", device = "0" }, 0, 7),
    T.x_event("kernel", "other_kernel", 500, 3, { correlation = "92", stream = "9", device = "0" }, 0, 9),
    T.x_event("gpu_memcpy", "Memcpy HtoD", 600, 8, { correlation = "93", stream = "7", device = "0" }, 0, 7),
    T.x_event("gpu_memset", "Memset (Device)", 700, 2, { correlation = "94", stream = "7", device = "0" }, 0, 7),
    T.flow_event("s", 1, 1, 1, 10), T.flow_event("f", 1, 0, 7, 20),
    T.flow_event("s", 2, 1, 1, 210), T.flow_event("f", 2, 0, 7, 220),
  }
  local path = tmp .. "/small.json"
  tl.fs.write_file(path, '{"traceEvents":[' .. table.concat(ev, ",") .. "]}")
  return path
end

-- tracelens.prepare.unlinked_gpu as it was before trace:unlinked_gpu (a walk
-- over the events in Lua). The unlinked events that start before the first
-- runtime call that enqueues GPU work (by name: "launch", "memcpy",
-- "memset") were launched before the trace: counted apart (`before`).
local GPU_CATS = { "kernel", "gpu_memcpy", "gpu_memset" }
local function first_launch_ns(trace)
  local first = math.huge
  for _, cat in ipairs({ "cuda_runtime", "cuda_driver" }) do
    for e in trace:events({ cat = cat }) do
      local l = tostring(e.name):lower()
      if (l:find("launch", 1, true) or l:find("memcpy", 1, true) or l:find("memset", 1, true)) and e.ts_ns then
        first = math.min(first, e.ts_ns)
      end
    end
  end
  return first
end

local function unlinked_by_walk(trace)
  local r = { total_us = 0, unlinked_us = 0, count = 0, kernels = {}, before = 0 }
  local by_key = {}
  local first = first_launch_ns(trace)
  for _, cat in ipairs(GPU_CATS) do
    for e in trace:events({ cat = cat }) do
      local d = math.max(0, e.dur_ns or 0)
      if not e:launcher() and e.ts_ns < first then
        r.before = r.before + 1
        d = nil
      end
      if d then r.total_us = r.total_us + d end
      if d and not e:launcher() then
        r.unlinked_us, r.count = r.unlinked_us + d, r.count + 1
        local key = cat .. "\0" .. tostring(e.name)
        local k = by_key[key]
        if not k then
          k = { name = tostring(e.name), cat = cat, category = prepare.unlinked_category(e.name, cat), count = 0,
            us = 0, min = d, max = d, stream = e.args and e.args.stream }
          by_key[key] = k
          r.kernels[#r.kernels + 1] = k
        end
        k.count, k.us = k.count + 1, k.us + d
        k.min, k.max = math.min(k.min, d), math.max(k.max, d)
      end
    end
  end
  r.total_us, r.unlinked_us = r.total_us / 1000, r.unlinked_us / 1000
  local full = {}
  for i, k in ipairs(r.kernels) do full[i] = k.name end
  local short = kernel_name.unique_short(full)
  for i, k in ipairs(r.kernels) do
    k.us, k.min, k.max = k.us / 1000, k.min / 1000, k.max / 1000
    k.display = short[i]
  end
  return r
end

-- Deep equality with number kinds (an integer is not a float here).
local function same(a, b, path, errs)
  if type(a) ~= type(b) then
    errs[#errs + 1] = path .. ": " .. type(a) .. " vs " .. type(b)
  elseif type(a) == "table" then
    for k, v in pairs(a) do same(v, b[k], path .. "." .. tostring(k), errs) end
    for k in pairs(b) do
      if a[k] == nil then errs[#errs + 1] = path .. "." .. tostring(k) .. ": missing" end
    end
  elseif a ~= b or math.type(a) ~= math.type(b) then
    errs[#errs + 1] = path .. ": " .. tostring(a) .. " vs " .. tostring(b)
  end
  return errs
end

local function check_unlinked(trace, what)
  local walk = unlinked_by_walk(trace)
  walk.before = nil -- prepare.unlinked_gpu leaves them out
  local errs = same(prepare.unlinked_gpu(trace), walk, what, {})
  T.check(#errs == 0, what .. ": unlinked_gpu differs from the walk: " .. table.concat(errs, "; ", 1, math.min(5, #errs)))
end

-- 1. the background report
local small = tl.load(small_trace(), { include_call_stack = true })
do
  local u = small:unlinked_gpu()
  T.eq(u.count, 5, "small: unlinked events")
  T.eq(#u.groups, 4, "small: unlinked groups (lonely_kernel twice)")
  T.eq(u.groups[1].name, "lonely_kernel", "small: first group")
  T.eq(u.groups[1].count, 2, "small: lonely_kernel count")
  T.eq(u.groups[1].sum_ns, 16000, "small: lonely_kernel ns")
  T.eq(u.groups[1].min_ns, 4000, "small: lonely_kernel min")
  T.eq(u.groups[3].cat, "gpu_memcpy", "small: the copy after the kernels")
  T.eq(u.total_ns, 69000, "small: every GPU event's ns")
  check_unlinked(small, "small")
end

local function csv_dir(sheets, dir)
  tl.fs.mkdir(dir)
  local files = {}
  for _, name in ipairs(sheets.__order) do
    sheets[name]:write_csv(dir .. "/" .. name .. ".csv")
    files[#files + 1] = name
  end
  return files
end

local function same_reports(trace, opts, what)
  local sync = trace:report(opts)
  local bopts = {}
  for k, v in pairs(opts) do bopts[k] = v end
  bopts.background = true
  local job = trace:report(bopts)
  local bg = job:wait()
  T.check(job:wait() == bg, what .. ": a second wait returns the same table")
  T.eq(bg.__platform, sync.__platform, what .. ": platform")
  T.eq(table.concat(bg.__order, ","), table.concat(sync.__order, ","), what .. ": sheet order")
  local a = csv_dir(sync, tmp .. "/" .. what .. "_sync")
  csv_dir(bg, tmp .. "/" .. what .. "_bg")
  for _, name in ipairs(a) do
    T.check(read(tmp .. "/" .. what .. "_sync/" .. name .. ".csv") == read(tmp .. "/" .. what .. "_bg/" .. name .. ".csv"),
      what .. ": sheet " .. name .. " differs")
  end
end

same_reports(small, {}, "small")
do
  local ok, err = pcall(small.report, small, { background = true, write = tmp .. "/w" })
  T.check(not ok and tostring(err):find("background cannot be combined", 1, true), "background + write refused: "
    .. tostring(err))
  -- a job dropped unwaited is joined when collected
  local job = small:report({ background = true })
  job = nil -- luacheck: ignore
  collectgarbage()
  collectgarbage()
  T.check(true, "an unwaited job is collected")
  -- the build's error comes from wait
  local cpu_only = tmp .. "/cpu_only.json"
  tl.fs.write_file(cpu_only, '{"traceEvents":[' .. T.x_event("cpu_op", "aten::mm", 0, 10, {}) .. "]}")
  local t2 = tl.load(cpu_only)
  local j2 = t2:report({ background = true })
  local ok2, err2 = pcall(j2.wait, j2)
  local _, sync_err = pcall(t2.report, t2, {})
  T.check(not ok2 and tostring(err2) == tostring(sync_err), "the background error is the report's: "
    .. tostring(err2) .. " / " .. tostring(sync_err))
end

-- 3. kernel slices and durations against node:kernels() / node.dur
local function check_slices(trace, what)
  local nodes, n = {}, 0
  for e in trace:events({ cat = "cpu_op" }) do
    if #e:kernels() > 0 then
      n = n + 1
      nodes[n] = e.uid
      if n >= 400 then break end
    end
  end
  for _, r in ipairs({ { 1, 1 }, { 1, 3 }, { 2, 100 }, { 3, 2 }, { 0, 2 }, { 5, 6 } }) do
    local lo, hi = r[1], r[2]
    local want = {}
    for i = 2, #nodes do
      local list = {}
      for _, k in ipairs(trace:node(nodes[i]):kernels()) do
        if k.cat == "kernel" then list[#list + 1] = k.uid end
      end
      for p = lo, hi do
        if list[p] == nil then break end
        want[#want + 1] = list[p]
      end
    end
    local got = trace:kernel_slices(nodes, 2, lo, hi)
    T.eq(table.concat(got, ","), table.concat(want, ","), string.format("%s: kernel_slices %d..%d", what, lo, hi))
  end
  local bad = 0
  for u = 0, math.min(#trace, 50000) - 1 do
    local d = trace:dur_us(u)
    local e = trace:node(u).dur or 0
    if d ~= e or math.type(d) ~= math.type(e) then bad = bad + 1 end
  end
  T.eq(bad, 0, what .. ": dur_us differs from node.dur")
end
check_slices(small, "small")

-- 5. the C helpers of tracelens.fusion.overlap against the Lua loops they replace
do
  local seed = 12345
  local function rnd(n)
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed % n
  end
  for round = 1, 30 do
    local lists = {}
    for i = 1, 1 + rnd(8) do
      local l = {}
      for k = 1, rnd(40) do l[k] = rnd(60) end
      if round % 5 == 0 and #l > 0 then l[1] = l[1] + 0.0 end -- a float key is the integer key
      lists[i] = l
    end
    -- repeats
    local seen, want_l, want_u = {}, {}, {}
    for i, l in ipairs(lists) do
      for _, u in ipairs(l) do
        -- (a float uid is the integer one: the same table key; C gives the integer)
        if seen[u] then want_l[#want_l + 1], want_u[#want_u + 1] = i, math.tointeger(u) else seen[u] = true end
      end
    end
    local got_l, got_u = tl.uid_repeats(lists)
    T.eq(table.concat(got_l, ","), table.concat(want_l, ","), "uid_repeats lists, round " .. round)
    T.eq(table.concat(got_u, ","), table.concat(want_u, ","), "uid_repeats uids, round " .. round)
    -- claims, as overlap.resolve's loop
    local owner, by_w, hits_w = {}, {}, {}
    for k, l in ipairs(lists) do
      local hits, by = {}, nil
      for _, u in ipairs(l) do
        local o = owner[u]
        if o then
          hits[o] = (hits[o] or 0) + 1
          if by == nil or hits[o] > hits[by] then by = o end
        end
      end
      by_w[k], hits_w[k] = by or 0, by and hits[by] or 0
      if not by then for _, u in ipairs(l) do owner[u] = k end end
    end
    local by_g, hits_g = tl.uid_claims(lists)
    T.eq(table.concat(by_g, ","), table.concat(by_w, ","), "uid_claims owners, round " .. round)
    T.eq(table.concat(hits_g, ","), table.concat(hits_w, ","), "uid_claims hits, round " .. round)
  end
  T.eq(tl.uid_repeats({ { 1, 2.5 } }), nil, "uid_repeats: a fraction gives nil")
  T.eq(tl.uid_claims({ { 1, "2" } }), nil, "uid_claims: a string gives nil")
  T.eq(tl.join_ints({ 3, -7, 12345678901234 }, ", "), table.concat({ 3, -7, 12345678901234 }, ", "), "join_ints")
  T.eq(tl.join_ints({}, ", "), "", "join_ints: empty")
  T.eq(tl.join_ints({ 1, 2.0 }, ","), nil, "join_ints: a float gives nil")
  local uids = {}
  for u = 0, math.min(#small, 40) - 1 do uids[#uids + 1] = u end
  local d = small:durs_us(uids)
  local bad = 0
  for k, u in ipairs(uids) do
    if d[k] ~= small:dur_us(u) or math.type(d[k]) ~= math.type(small:dur_us(u)) then bad = bad + 1 end
  end
  T.eq(bad, 0, "durs_us against dur_us")
end

-- 6. tracelens.json's float text through tl.float_repr: the text of the
--    printf search it replaces (kept for the powers of two, where that search
--    gives a longer text than Python's shortest: 2^-24)
do
  local function search(x)
    local s
    for p = 0, 16 do
      s = string.format("%." .. p .. "e", x)
      if tonumber(s) == x then break end
    end
    local sign, d1, rest, exp = s:match("^(-?)(%d)%.?(%d*)e([-+]%d+)$")
    local digits = (d1 .. rest):gsub("0+$", "")
    if digits == "" then digits = "0" end
    local e = tonumber(exp)
    if e >= -4 and e < 16 then
      if e >= 0 then
        local int = digits:sub(1, e + 1)
        if #int < e + 1 then int = int .. string.rep("0", e + 1 - #int) end
        local frac = digits:sub(e + 2)
        return sign .. int .. "." .. (frac == "" and "0" or frac)
      end
      return sign .. "0." .. string.rep("0", -e - 1) .. digits
    end
    local mant = digits:sub(1, 1)
    if #digits > 1 then mant = mant .. "." .. digits:sub(2) end
    return string.format("%s%se%s%02d", sign, mant, e < 0 and "-" or "+", math.abs(e))
  end
  local seed, bad, n = 99, 0, 0
  local function r31()
    seed = (seed * 1103515245 + 12345) % 2147483648
    return seed
  end
  local function chk(x)
    n = n + 1
    if json.repr_float(x) ~= search(x) then
      bad = bad + 1
      if bad <= 5 then io.stderr:write(string.format("float text of %.17g: %s, expected %s\n", x, json.repr_float(x),
        search(x))) end
    end
  end
  for _ = 1, 20000 do
    local x = string.unpack("<d", string.pack("<i8", (r31() << 33) ~ (r31() << 2) ~ (r31() & 3)))
    if x == x and x ~= math.huge and x ~= -math.huge and x ~= 0 then chk(x) end
    chk(r31() / 1000)
    chk(r31() / 7 * 1e-6)
  end
  for e = -1074, 1023, 7 do chk(2.0 ^ e) end
  for e = -300, 300 do chk(10.0 ^ e) end
  chk(2.0 ^ -24)
  T.eq(bad, 0, "json float text against the printf search (" .. n .. " values)")
  T.eq(json.repr_float(2.0 ^ -24), "5.9604644775390625e-08", "2^-24 keeps its 17 digits")
  T.eq(tl.float_repr(2.0 ^ -24), nil, "float_repr: nil for a power of two")
  T.eq(tl.float_repr(0.0), nil, "float_repr: nil for 0")
  T.eq(tl.float_repr(0.1), "0.1", "float_repr 0.1")
  T.eq(tl.float_repr(3e-05), "3e-05", "float_repr 3e-05")
end

-- 2-4 on the shared trace
local path = shared .. "/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
if not tl.fs.kind(path) then
  print("SKIP (shared trace): " .. path .. " is absent")
else
  local trace = tl.load(path, { include_call_stack = true, enable_pseudo_ops = true })
  local u = trace:unlinked_gpu()
  T.check(u.before_trace_count > 0, "qwen: has GPU events launched before the trace")
  T.eq(u.before_trace_count, unlinked_by_walk(trace).before, "qwen: GPU events launched before the trace, as the walk")
  check_unlinked(trace, "qwen")
  check_slices(trace, "qwen")
  local opts = { group_by_num_kernels = true, include_call_stack = true }
  same_reports(trace, opts, "qwen")
  local unified = trace:report(opts).unified_perf_summary
  local a = json.encode(fusion.candidates(trace, unified))
  local b = json.encode(fusion.candidates(trace, unified, fusion.walks(trace)))
  T.check(#a > 2 and a == b, "qwen: fusion candidates with the walks taken ahead")
end

T.rmrf(tmp)
T.finish()

-- trace:kernel_sequences() and the kernel_sequences sheet (issue 16): a
-- trace built here with the tiling worked out by hand (a copy breaks a
-- sequence, repetitions are left out, a tie goes to the earlier sequence, a
-- part of a taken sequence does not come back); and on a shared trace every
-- row recomputed here from the raw JSON (cjson) by a brute-force version of
-- the rules in docs/compat.md.
local root, data = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local cjson = require "cjson"
local dir = T.tmpdir()
local X = T.x_event

local ev = {}
local ts = 0
local DUR = { A = 10, B = 20, C = 5, X = 100, D = 1, P = 10, Q = 10, R = 30 }
local function run(stream, names)
  for i = 1, #names do
    local n = names:sub(i, i)
    local cat = n == "M" and "gpu_memcpy" or "kernel"
    local d = DUR[n] or 3
    ev[#ev + 1] = X(cat, n == "M" and "Memcpy HtoD (Pageable -> Device)" or n, ts, d,
      { stream = tostring(stream), device = "0" }, 0, stream)
    ts = ts + d + 2
  end
end
-- stream 7: A B C four times (a copy between the third and the fourth), then X and six D
run(7, "ABCABCABCMABCXDDDDDD")
-- stream 8: P Q R twice, then P Q
run(8, "PQRPQRPQ")
local path = dir .. "/seq.json"
local f = assert(io.open(path, "w"))
f:write('{"traceEvents":[', table.concat(ev, ",\n"), "]}")
f:close()

local t = tl.load(path)
local ks = t:kernel_sequences()
T.eq(#ks, 2, "one sequence per stream")
local a, p = ks[1], ks[2]
T.eq(table.concat(a.kernels, " "), "A B C", "stream 7: A B C (not A B, B C A, nor the periodic D D)")
T.eq(a.stream, 7, "stream 7 first")
T.eq(a.device, 0, "device from args.device")
T.eq(a.count, 4, "four times: the copy does not hide the fourth")
T.close(a.gpu_us, 140, "4 x 35 us", 0, 1e-9)
T.close(a.max_kernel_us, 20, "the longest kernel in them: B", 0, 1e-9)
T.close(a.stream_kernel_us, 140 + 100 + 6, "the stream's kernel time (the copy not counted)", 0, 1e-9)
T.eq(a.rank, 1, "rank 1")
-- P Q R, Q R P and R P Q all cover 100 us twice: the earliest wins, and the others are then gone
T.eq(table.concat(p.kernels, " "), "P Q R", "stream 8: the tie goes to the earliest")
T.eq(p.count, 2, "P Q R twice")
T.close(p.gpu_us, 100, "2 x 50 us", 0, 1e-9)
-- pairs only: Q R and R P tie at 80 us; P Q then has one unmarked occurrence left
local k2 = t:kernel_sequences{ max_len = 2 }
T.eq(#k2, 2, "max_len = 2: one per stream")
T.eq(table.concat(k2[2].kernels, " "), "Q R", "stream 8 pairs: Q R")
T.close(k2[2].gpu_us, 80, "Q R twice", 0, 1e-9)
T.eq(#t:kernel_sequences{ min_count = 5 }, 0, "min_count = 5: nothing repeats five times")
local ok, err = pcall(t.kernel_sequences, t, { min_len = 1 })
T.check(not ok and tostring(err):find("min_len must be an integer from 2 to 64", 1, true), "min_len = 1 refused: "
  .. tostring(err))

-- A sequence whose end repeats its start (A B A): its windows at 1 and 3
-- overlap, so counting without overlap takes the light one (1 + 1 + 100 us)
-- until X A B marks kernels 1 and 2; then it is the heavy one (300 us) and
-- A B A, not A B or B A, covers the most. Kernel durations by position:
ev, ts = {}, 0
local PDUR = { 1000, 1, 1, 100, 100, 100, 5 }
for block = 1, 2 do
  for i, n in ipairs({ "X", "A", "B", "A", "B", "A", "Y" .. block }) do
    ev[#ev + 1] = X("kernel", n, ts, PDUR[i], { stream = "9" }, 0, 9)
    ts = ts + PDUR[i] + 1
  end
end
local bpath = dir .. "/border.json"
f = assert(io.open(bpath, "w"))
f:write('{"traceEvents":[', table.concat(ev, ",\n"), "]}")
f:close()
local kb = tl.load(bpath):kernel_sequences{ max_len = 3 }
T.eq(table.concat(kb[1] and kb[1].kernels or {}, " "), "X A B", "border: X A B first")
T.eq(table.concat(kb[2] and kb[2].kernels or {}, " "), "A B A", "border: then A B A, over its heavy windows")
T.close(kb[2] and kb[2].gpu_us or 0, 600, "border: 2 x 300 us", 0, 1e-9)

local rep = t:report{ platform = "none" }
local sh = rep.kernel_sequences
T.check(sh ~= nil, "kernel_sequences sheet written")
if sh then
  T.eq(sh:nrows(), 2, "two rows")
  T.eq(sh:get(1, "sequence"), "A | B | C", "names joined by |")
  T.eq(sh:get(1, "occurrences"), 4, "sheet occurrences")
  T.close(sh:get(1, "gpu_time_ms"), 0.14, "sheet time", 0, 1e-12)
  T.close(sh:get(1, "percent_of_stream_kernel_time"), 140 / 246 * 100, "sheet share", 1e-12, 0)
  T.close(sh:get(1, "time_per_occurrence_us"), 35, "sheet per occurrence", 0, 1e-9)
  T.close(sh:get(1, "mean_kernel_us"), 35 / 3, "sheet mean kernel", 1e-12, 0)
end
T.check(t:report{ kernel_sequences = false, platform = "none" }.kernel_sequences == nil,
  "kernel_sequences = false omits it")

-- the command line: written by default, omitted with --no-kernel-sequences
for _, flag in ipairs({ "", "--no-kernel-sequences" }) do
  local out = dir .. "/cli" .. #flag
  local okc, rc, _, se = T.run(T.q(T.tracelens_bin()) .. " report -q --no-xlsx --platform none " .. flag .. " "
    .. T.q(path) .. " -o " .. T.q(out))
  T.check(okc, "report " .. flag .. " exit " .. tostring(rc) .. ": " .. tostring(se))
  T.eq(T.file_exists(out .. "/perf_report_csvs/kernel_sequences.csv"), flag == "", "kernel_sequences.csv with [" .. flag .. "]")
end

-- The rules by brute force on decoded events: every candidate evaluated
-- again at every pick (the C code's lazy greedy must give the same).
local function ns(v)
  local w = math.floor(v)
  return w * 1000 + math.floor((v - w) * 1000 + 0.5)
end
local function brute_force(evs)
  local GPU = { kernel = true, gpu_memcpy = true, gpu_memset = true }
  local streams, order = {}, {}
  for uid, e in ipairs(evs) do
    if GPU[e.cat] and type(e.ts) == "number" then
      local a = e.args or {}
      local dev = math.tointeger(a.device) or math.tointeger(e.pid) or -1
      local st = math.tointeger(a.stream) or -1
      local key = dev .. "/" .. st
      if not streams[key] then
        streams[key] = { dev = dev, st = st, ev = {} }
        order[#order + 1] = key
      end
      local s = streams[key].ev
      s[#s + 1] = { ts = ns(e.ts), uid = uid, name = e.name, kern = e.cat == "kernel", dur = ns(e.dur or 0) }
    end
  end
  table.sort(order, function(x, y)
    local a, b = streams[x], streams[y]
    if a.dev ~= b.dev then return a.dev < b.dev end
    return a.st < b.st
  end)
  local want = {}
  for _, key in ipairs(order) do
    local s = streams[key].ev
    table.sort(s, function(x, y) if x.ts ~= y.ts then return x.ts < y.ts end return x.uid < y.uid end)
    local m = #s
    -- every window of 2..8 kernels, grouped by its names
    local cands = {}
    for len = 2, 8 do
      local byk = {}
      for i = 1, m - len + 1 do
        local names, okw = {}, true
        for j = 0, len - 1 do
          if not s[i + j].kern then okw = false break end
          names[#names + 1] = s[i + j].name
        end
        if okw then
          local k = table.concat(names, "\0")
          local c = byk[k]
          if not c then
            -- a repetition of a shorter sequence is left out
            local periodic = false
            for per = 1, len - 1 do
              if len % per == 0 then
                local same = true
                for j = 1, len - per do if names[j] ~= names[j + per] then same = false break end end
                if same then periodic = true break end
              end
            end
            c = { len = len, names = names, pos = {}, periodic = periodic }
            byk[k] = c
            if not periodic then cands[#cands + 1] = c end
          end
          c.pos[#c.pos + 1] = i
        end
      end
    end
    local mark, total = {}, 0
    for i = 1, m do if s[i].kern then total = total + s[i].dur end end
    local function eval(c, domark)
      local last, n, t_ns, first, mx = 0, 0, 0, nil, 0
      for _, i in ipairs(c.pos) do
        if i >= last then
          local free = true
          for j = 0, c.len - 1 do if mark[i + j] then free = false end end
          if free then
            n = n + 1
            first = first or i
            for j = 0, c.len - 1 do
              t_ns = t_ns + s[i + j].dur
              mx = math.max(mx, s[i + j].dur)
              if domark then mark[i + j] = true end
            end
            last = i + c.len
          end
        end
      end
      return n, t_ns, first, mx
    end
    for rank = 1, 10 do
      local best, bn, bt, bf
      for _, c in ipairs(cands) do
        local n, tn, fi = eval(c, false)
        if n >= 2 and (not best or tn > bt or (tn == bt and (c.len > best.len or (c.len == best.len and fi < bf)))) then
          best, bn, bt, bf = c, n, tn, fi
        end
      end
      if not best then break end
      local n, tn, _, mx = eval(best, true)
      want[#want + 1] = { dev = streams[key].dev, st = streams[key].st, rank = rank, names = best.names, n = n,
        t = tn, mx = mx, total = total }
    end
  end
  return want
end

local function compare(got, want, label)
  T.eq(#got, #want, label .. ": rows")
  for i = 1, math.min(#got, #want) do
    local g, w = got[i], want[i]
    local what = string.format("%s: row %d (stream %d rank %d)", label, i, w.st, w.rank)
    T.eq(g.device, w.dev, what .. " device")
    T.eq(g.stream, w.st, what .. " stream")
    T.eq(g.rank, w.rank, what .. " rank")
    T.eq(table.concat(g.kernels, "\0"), table.concat(w.names, "\0"), what .. " kernels")
    T.eq(g.count, w.n, what .. " count")
    T.close(g.gpu_us, w.t / 1000, what .. " GPU time", 1e-12, 1e-9)
    T.close(g.max_kernel_us, w.mx / 1000, what .. " longest kernel", 1e-12, 1e-9)
    T.close(g.stream_kernel_us, w.total / 1000, what .. " stream kernel time", 1e-12, 1e-9)
  end
end

-- Random traces over three kernel names: many sequences whose end repeats
-- their start (A B A), where counting without overlap changes as kernels are
-- marked
local rng = 12345
local function rand(n)
  rng = (rng * 1103515245 + 12345) % 2147483648
  return rng % n + 1
end
for trial = 1, 6 do
  local rev, t0 = {}, 0
  for st = 1, 3 do
    for _ = 1, 150 do
      local n = ({ "A", "B", "C" })[rand(trial % 2 == 0 and 2 or 3)]
      local d = rand(9)
      rev[#rev + 1] = X(rand(40) == 1 and "gpu_memset" or "kernel", n, t0, d, { stream = tostring(st) }, 0, st)
      t0 = t0 + d + 1
    end
  end
  local rpath = dir .. "/random.json"
  local rf = assert(io.open(rpath, "w"))
  rf:write('{"traceEvents":[', table.concat(rev, ",\n"), "]}")
  rf:close()
  local text = T.read_file(rpath)
  compare(tl.load(rpath):kernel_sequences(), brute_force(cjson.decode(text).traceEvents), "random " .. trial)
end

-- A shared trace, recomputed by brute force ---------------------------------------
local shared = data and data .. "/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
if shared and T.file_exists(shared) then
  local okz, code, text = T.run("gzip -dc " .. T.q(shared))
  T.check(okz, "gzip -dc exit " .. tostring(code))
  local evs = cjson.decode(text).traceEvents
  local want = brute_force(evs)
  local st = tl.load(shared)
  local got = st:kernel_sequences()
  T.check(#want >= 5, "shared: some repeated sequences: " .. #want)
  compare(got, want, "shared")
  -- a background report hands over the sequences of its sheet (the
  -- orchestrator's fusion hint): the same, also with the sheet turned off
  for _, sheet in ipairs({ true, false }) do
    local job = st:report({ background = true, kernel_sequences = sheet })
    compare(job:kernel_sequences(), want, "shared: job:kernel_sequences() with the sheet " .. tostring(sheet))
    T.check(job:wait() ~= nil, "shared: the job's sheets after its sequences")
  end
  -- the report's sheet holds the same rows
  local out = dir .. "/r"
  local okr, rc, _, se = T.run(T.q(T.tracelens_bin()) .. " report -q --no-xlsx " .. T.q(shared) .. " -o " .. T.q(out))
  T.check(okr, "report exit " .. tostring(rc) .. ": " .. tostring(se))
  local rows = T.csv_records(out .. "/perf_report_csvs/kernel_sequences.csv")
  T.eq(#rows, #want, "shared: sheet rows")
  for i = 1, math.min(#rows, #want) do
    T.eq(tonumber(rows[i].occurrences), want[i].n, "shared: sheet occurrences row " .. i)
    T.close(tonumber(rows[i].gpu_time_ms), want[i].t / 1e6, "shared: sheet time row " .. i, 1e-12, 1e-12)
    T.eq(rows[i].sequence, table.concat(want[i].names, " | "), "shared: sheet sequence row " .. i)
  end
else
  print("note: ../shared/data not found: the shared-trace kernel sequences are skipped")
end
T.rmrf(dir)
T.finish()

-- The call tree does not depend on how the file orders its host events: it
-- sorts them by ts, ties in file order (a stable sort). The sort takes a
-- fast path when the events come almost in time order (the ones behind the
-- running maximum are sorted alone and merged back), so the same events are
-- written three ways: shuffled, sorted (the fast path with nothing to
-- merge) and sorted with a few displaced, with ts drawn from a small range
-- so that many ties decide parents. Each event's parent and children,
-- named by a unique External id, must come out the same in all three.
local root, _, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local tmp = T.tmpdir()

-- A deterministic generator (no dependence on math.random's seeding).
local state = 12345
local function rnd(n)
  state = (state * 1103515245 + 12345) % 2147483648
  return state % n
end

-- Nested ops on three threads: each op's children lie inside it, start on
-- a 5 µs grid (so children often share their parent's or a sibling's
-- start) and nest two more levels.
local events = {}
local function op(tid, ts, dur, depth)
  local host_rt = depth > 0 and rnd(4) == 0
  events[#events + 1] = {id = #events + 1, cat = host_rt and "cuda_runtime" or "cpu_op",
    name = host_rt and "cudaLaunchKernel" or ("op" .. rnd(7)), tid = tid, ts = ts, dur = dur}
  if depth >= 3 or host_rt then return end
  local t = ts
  for _ = 1, 1 + rnd(3) do
    local room = ts + dur - t
    if room < 5 then break end
    local d = 5 * (1 + rnd(room // 5))
    op(tid, t, d, depth + 1)
    t = t + 5 * rnd(d // 5 + 1)
  end
end
for tid = 1, 3 do
  for k = 0, 150 do op(tid, 100 * k, 90, 0) end
end
local N = #events

local function write(path, order)
  local f = assert(io.open(path, "wb"))
  f:write('{"traceEvents":[\n')
  for k, i in ipairs(order) do
    local e = events[i]
    f:write(string.format('%s{"ph":"X","cat":"%s","name":"%s","pid":1,"tid":%d,"ts":%d.000,"dur":%d.000,'
      .. '"args":{"External id":%d}}', k > 1 and ",\n" or "", e.cat, e.name, e.tid, e.ts, e.dur, e.id))
  end
  f:write("\n]}\n")
  f:close()
end

-- shuffled (Fisher-Yates)
local shuffled = {}
for i = 1, N do shuffled[i] = i end
for i = N, 2, -1 do
  local j = 1 + rnd(i)
  shuffled[i], shuffled[j] = shuffled[j], shuffled[i]
end
-- the stable sort of the shuffled order by ts: what the tree sees either way
local pos = {}
for k, i in ipairs(shuffled) do pos[i] = k end
local sorted = {}
for k, i in ipairs(shuffled) do sorted[k] = i end
table.sort(sorted, function(a, b)
  if events[a].ts ~= events[b].ts then return events[a].ts < events[b].ts end
  return pos[a] < pos[b]
end)
-- sorted, then every 97th event moved 1 to 300 places later: in file
-- order it comes after events that start later than it does
local displaced = {}
for k, i in ipairs(sorted) do displaced[k] = i end
for k = 1, N, 97 do
  local to = math.min(N, k + 1 + rnd(300))
  local e = table.remove(displaced, k)
  table.insert(displaced, to, e)
end

-- parent and children of every event, by External id
local function shape(path)
  local trace = tl.load(path)
  local out = {}
  for ev in trace:events() do
    local id = ev.args["External id"]
    local p = ev:parent()
    local kids = {}
    for _, c in ipairs(ev:children()) do kids[#kids + 1] = c.args["External id"] end
    out[id] = (p and p.args["External id"] or 0) .. ":" .. table.concat(kids, ",")
  end
  return out
end

local function check_same(a, b, what)
  local bad = 0
  for id = 1, N do
    if a[id] ~= b[id] then
      bad = bad + 1
      if bad <= 3 then T.check(false, string.format("%s: event %d: %s vs %s", what, id, a[id], b[id])) end
    end
  end
  T.eq(bad, 0, what .. ": events whose parent or children differ")
end

-- Each file's tree must equal the tree of its own stable sort by ts,
-- written out in that order.
write(tmp .. "/shuffled.json", shuffled)
write(tmp .. "/sorted.json", sorted)
local s_shuffled, s_sorted = shape(tmp .. "/shuffled.json"), shape(tmp .. "/sorted.json")
check_same(s_shuffled, s_sorted, "shuffled vs sorted")

-- the displaced file: its own stable sort, written out sorted, is the reference
local dpos = {}
for k, i in ipairs(displaced) do dpos[i] = k end
local dsorted = {}
for k, i in ipairs(displaced) do dsorted[k] = i end
table.sort(dsorted, function(a, b)
  if events[a].ts ~= events[b].ts then return events[a].ts < events[b].ts end
  return dpos[a] < dpos[b]
end)
write(tmp .. "/displaced.json", displaced)
write(tmp .. "/displaced_sorted.json", dsorted)
check_same(shape(tmp .. "/displaced.json"), shape(tmp .. "/displaced_sorted.json"), "displaced vs its sort")

-- and the tree is not trivial: most events have a parent or children
local linked = 0
for id = 1, N do
  if s_sorted[id] ~= "0:" then linked = linked + 1 end
end
T.check(linked > N / 2, "most events are linked (" .. linked .. " of " .. N .. ")")
print("events " .. N .. ", linked " .. linked)

T.rmrf(tmp)
T.finish()

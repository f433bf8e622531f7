-- Table:group_by(keys):agg{...}, Table:join, Table:preview and the ASCII
-- column aliases, checked against the same summaries computed row by row
-- in Lua from the table itself.
local root = arg[1]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local trace = tl.load(root .. "/examples/demo_trace.json")
local u = trace:table("unified_perf_summary")
local KT = "Kernel Time (\u{b5}s)_sum"

-- the ASCII alias of a µ column
T.eq(u:get(1, "Kernel Time (us)_sum"), u:get(1, KT), "(us) alias of (µs)")
T.check(not pcall(u.get, u, 1, "Kernel Time (ms)_sum"), "an unknown column is still an error")

-- expected per category, by hand
local by = {}
for _, r in u:rows() do
  local c = r["op category"]
  local g = by[c] or { sum = 0, n = 0, min = math.huge, max = -math.huge, vals = {}, ops = 0 }
  by[c] = g
  local v = r[KT]
  if v then
    g.sum, g.n = g.sum + v, g.n + 1
    g.min, g.max = math.min(g.min, v), math.max(g.max, v)
    g.vals[#g.vals + 1] = v
  end
  g.ops = g.ops + 1
end
local function median(v)
  table.sort(v)
  local n = #v
  if n % 2 == 1 then return v[(n + 1) // 2] end
  return (v[n // 2] + v[n // 2 + 1]) / 2
end

local g = u:group_by("op category"):agg{
  { "Kernel Time (us)_sum", "sum", as = "total" },
  { KT, "mean" },
  { KT, "median", as = "med" },
  { KT, "min", as = "lo" },
  { KT, "max", as = "hi" },
  { KT, "count", as = "n" },
  { "*", "size", as = "rows" },
}
T.eq(table.concat(g:columns(), "|"), "op category|total|" .. KT .. "_mean|med|lo|hi|n|rows", "agg columns in spec order")
local ncat, prev = 0, nil
for _, r in g:rows() do
  ncat = ncat + 1
  local e = by[r["op category"]]
  T.check(e ~= nil, "group " .. tostring(r["op category"]))
  T.close(r.total, e.sum, "sum " .. r["op category"], 1e-12)
  T.close(r[KT .. "_mean"], e.sum / e.n, "mean " .. r["op category"], 1e-12)
  T.close(r.med, median(e.vals), "median " .. r["op category"], 1e-12)
  T.eq(r.lo, e.min, "min " .. r["op category"])
  T.eq(r.hi, e.max, "max " .. r["op category"])
  T.eq(r.n, e.n, "count " .. r["op category"])
  T.eq(r.rows, e.ops, "size " .. r["op category"])
  if prev then T.check(prev < r["op category"], "groups sorted by key") end
  prev = r["op category"]
end
local want = 0
for _ in pairs(by) do want = want + 1 end
T.eq(ncat, want, "one row per category")
-- unsorted: first-appearance order
local g2 = u:group_by({ "op category" }, { sort = false }):agg{ { "*", "count" } }
T.eq(g2:get(1, "op category"), u:get(1, "op category"), "sort = false keeps first appearance")
T.eq(g2:columns()[2], "*_count", "default output name")

-- bad specs are errors that say what is wrong
local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  return not ok and tostring(e) or ""
end
T.check(err_of(function() return u:group_by("op category"):agg{ { KT, "avg" } } end):find("unknown function 'avg'"),
  "unknown function")
T.check(err_of(function() return u:group_by("op category"):agg{ { "name", "sum" } } end):find("needs a number column"),
  "sum of text")
T.check(err_of(function() return u:group_by("nope") end):find("no column 'nope'"), "unknown key")
T.check(err_of(function() return u:group_by("name"):agg{ { "*", "count", as = "name" } } end):find("also a key"),
  "output named like a key")

-- join: every unified row gets its category's totals (left join), an
-- inner join with a subset keeps only the matching rows
local j = u:join(g, "op category", { how = "left" })
T.eq(j:nrows(), u:nrows(), "left join keeps every row once (unique right keys)")
for i, r in j:rows() do
  T.eq(r.name, u:get(i, "name"), "join keeps the left order")
  T.close(r.total, by[r["op category"]].sum, "joined total", 1e-12)
end
local gemm = g:filter(function(r) return r["op category"] == "GEMM" end)
local ji = u:join(gemm, "op category")
T.eq(ji:nrows(), by.GEMM and by.GEMM.ops or 0, "inner join: the GEMM rows only")
-- a right table with a clashing column name gets _right
local clash = u:group_by("op category"):agg{ { "name", "first", as = "name" } }
local jc = u:join(clash, "op category")
T.check(jc:columns()[#jc:columns()] == "name_right", "clashing column renamed name_right")
-- duplicate right keys multiply rows
local dup = u:select{ "op category", "name" }
local jd = g:join(dup, "op category")
T.eq(jd:nrows(), u:nrows(), "one row per (group, matching unified row)")
T.check(err_of(function() return u:join(g, "name") end):find("key column 'name'"), "join key absent on the right")

-- preview: title, aligned header, the first rows, what was left out
local p = u:preview(3, 80)
local lines = {}
for l in p:gmatch("[^\n]+") do lines[#lines + 1] = l end
T.eq(lines[1], ("table %s (%d rows x %d columns)"):format(u:name(), u:nrows(), #u:columns()), "preview title")
T.check(lines[2]:match("^name%s"), "preview header starts with name")
T.eq(#lines, 1 + 1 + 3 + 1, "title, header, 3 rows, the left-out line")
for i = 2, 5 do T.check(utf8.len(lines[i]) <= 80, "preview line fits 80 columns: " .. lines[i]) end
T.check(lines[6]:find(("%d more rows"):format(u:nrows() - 3), 1, true), "preview says how many rows are left out")
T.check(lines[3]:find(u:get(1, "name"):sub(1, 10), 1, true), "first row shown")
T.finish()

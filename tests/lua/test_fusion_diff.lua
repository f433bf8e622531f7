-- trace:fusion_diff_nodes(diff_stats, max_n1), the C walk of the comparative
-- fusion extraction (analysis-layer §3.6 Case A), on a hand-made trace and
-- hand-made diff_stats Tables: which nodes come back (2..max_n1 mapped GPU
-- events, more of them than trace-2 rows), their trace-1 rows (gpu_events
-- order, the last row of a UID winning), their trace-2 rows (ascending LCA id,
-- row order within an id) and the row columns (cells read as Lua's tonumber).
local root = arg[1]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local cjson = require "cjson"

-- Blk (module) [0, 1000] > aten::a [10, 400] launching k1 k2 k3, aten::b [500, 900] launching k4
local ev, uid, corr = {}, {}, 0
local function add(label, e)
  ev[#ev + 1] = e
  if label then uid[label] = #ev - 1 end
end
local function op(label, name, ts, dur)
  add(label, { ph = "X", cat = "cpu_op", name = name, pid = 1, tid = 1, ts = ts, dur = dur, args = {} })
end
local function launch(label, ts, kts)
  corr = corr + 1
  add(nil, { ph = "X", cat = "cuda_runtime", name = "cudaLaunchKernel", pid = 1, tid = 1, ts = ts, dur = 10,
    args = { correlation = corr } })
  add(nil, { ph = "s", id = corr, pid = 1, tid = 1, ts = ts, cat = "ac2g", name = "ac2g" })
  add(nil, { ph = "f", id = corr, pid = 2, tid = 7, ts = kts, cat = "ac2g", name = "ac2g", bp = "e" })
  add(label, { ph = "X", cat = "kernel", name = label .. "_kernel", pid = 2, tid = 7, ts = kts, dur = 5,
    args = { correlation = corr, stream = 7 } })
end
op("Blk", "nn.Module: Blk_0", 0, 1000)
op("a", "aten::a", 10, 400)
launch("k1", 20, 2000)
launch("k2", 100, 2100)
launch("k3", 200, 2200)
op("b", "aten::b", 500, 400)
launch("k4", 600, 2300)
local dir = T.tmpdir()
local path = dir .. "/t.json"
tl.fs.write_file(path, cjson.encode({ traceEvents = ev }))
local trace = tl.load(path)

-- A Table of n rows with the given columns (arrays of n values, nil = missing).
local function table_of(n, cols)
  local rows = {}
  for i = 1, n do rows[i] = 1 end
  local t = trace:table("gpu_timeline"):take(rows)
  for _, c in ipairs(cols) do -- nil cells: the length is n
    t = t:with_column(c[1], setmetatable(c[2], { __len = function() return n end }))
  end
  return t
end

local function nodes_of(ds, max)
  local nodes, rows = trace:fusion_diff_nodes(ds, max)
  local out = {}
  for j = 1, nodes.n do
    local t1, t2 = {}, {}
    for i = nodes.t1_off[j], nodes.t1_off[j + 1] - 1 do t1[#t1 + 1] = rows.row[nodes.t1[i]] end
    for i = nodes.t2_off[j], nodes.t2_off[j + 1] - 1 do t2[#t2 + 1] = rows.row[nodes.t2[i]] end
    out[j] = string.format("%d:%s|%s", nodes.uid[j], table.concat(t1, ","), table.concat(t2, ","))
  end
  return table.concat(out, " "), rows
end

local nan = 0 / 0
-- rows: 1 k1 (lca 20, replaced by row 6), 2 trace-2 lca 20, 3 k2 lca 10.0, 4 k3 no lca (not mapped),
-- 5 k4 lca 20, 6 k1 lca 10 (the last row of k1), 7 trace-2 lca 10, 8 another source, 9 trace-2 lca 30
local numeric = table_of(9, {
  { "name", { "k1_kernel", "x", "k2_kernel", "k3_kernel", "k4_kernel", "k1_kernel", "y", "z", "w" } },
  { "lowest_common_ancestor_id", { 20, 20, 10.5 - 0.5, nan, 20, 10, 10, 10, 30 } },
  { "kernel_time", { 1.5, 2, 3, 4, nan, 6, 7, 8, 9 } },
  { "source", { "trace1", "trace2", "trace1", "trace1", "trace1", "trace1", "trace2", "both", "trace2" } },
  { "gpu_op_uid", { uid.k1, nil, uid.k2, uid.k3, uid.k4, uid.k1, nil, nil, nil } },
})
-- Blk: k1 (row 6), k2 (row 3), k4 (row 5); LCAs 10 (row 7), 20 (row 2) -> 3 > 2
-- aten::a: k1, k2 (k3 has no LCA); LCA 10 -> 2 > 1.  aten::b: one kernel.
local got, rows = nodes_of(numeric, 30)
T.eq(got, string.format("%d:6,3,5|7,2 %d:6,3|7", uid.Blk, uid.a), "numeric ids: nodes, rows, LCA order")
T.eq((nodes_of(numeric, 2)), string.format("%d:6,3|7", uid.a), "max_n1 bounds n1")
T.eq(rows.n, 5, "each referenced row once")
local by_row = {}
for i = 1, rows.n do by_row[rows.row[i]] = i end
T.eq(rows.name[by_row[6]], "k1_kernel", "name cell")
T.eq(rows.kernel_time[by_row[6]], 6, "kernel_time cell")
T.eq(rows.kernel_time[by_row[5]], nil, "NaN kernel_time: none")
T.eq(math.type(rows.lca_id[by_row[3]]), "float", "lca_id a float")
T.eq(rows.lca_id[by_row[3]], 10.0, "lca_id value")
T.eq(rows.gpu_op_uid[by_row[5]], uid.k4, "gpu_op_uid of a trace-1 row")
T.eq(rows.lca_id[by_row[7]], nil, "no lca_id for a trace-2 row")
T.eq(rows.gpu_op_uid[by_row[2]], nil, "no gpu_op_uid for a trace-2 row")

-- text cells go through tonumber: "0x14" is 20, "10.0" is 10; "k" and "" are no id
local text = table_of(6, {
  { "name", { "k1_kernel", "k2_kernel", "k4_kernel", "x", "y", "z" } },
  { "lowest_common_ancestor_id", { "0x14", "10.0", "k", "10", " 20 ", "" } },
  { "kernel_time", { "1", "2.5", "3", "x", "5", "6" } },
  { "source", { "trace1", "trace1", "trace1", "trace2", "trace2", "trace2" } },
  { "gpu_op_uid", { tostring(uid.k1), uid.k2 + 0.0, uid.k4, "", "", "" } },
})
got, rows = nodes_of(text, 30)
-- Blk and aten::a: k1 (lca 20), k2 (lca 10); k4 has no id -> LCAs 10 (row 4), 20 (row 5): 2 > 2 fails
T.eq(got, "", "text ids: n1 == n2 drops the node")
local more = table_of(7, {
  { "name", { "k1_kernel", "k2_kernel", "k4_kernel", "x", "k3_kernel", "z", "y" } },
  { "lowest_common_ancestor_id", { "0x14", "10.0", "20", "10", "20", "", "40" } },
  { "kernel_time", { "1", "2.5", "3", "x", "5", "6", "7" } },
  { "source", { "trace1", "trace1", "trace1", "trace2", "trace1", "trace2", "trace2" } },
  { "gpu_op_uid", { tostring(uid.k1), uid.k2 + 0.0, uid.k4, "", uid.k3, "", "" } },
})
got, rows = nodes_of(more, 30)
-- Blk: k1 (20), k2 (10), k3 (20), k4 (20) -> LCA 10: row 4, LCA 20: none -> 4 > 1
-- aten::a: k1, k2, k3 -> 3 > 1
T.eq(got, string.format("%d:1,2,5,3|4 %d:1,2,5|4", uid.Blk, uid.a), "text ids")
for i = 1, rows.n do by_row[rows.row[i]] = i end
T.eq(math.type(rows.kernel_time[by_row[2]]), "float", "text kernel_time: tonumber")
T.eq(rows.kernel_time[by_row[4]], nil, "text kernel_time that is no number: none")
T.eq(rows.gpu_op_uid[by_row[2]], uid.k2, "float gpu_op_uid: the event")
T.eq(math.type(rows.gpu_op_uid[by_row[2]]), "integer", "gpu_op_uid an integer")
T.eq(rows.lca_id[by_row[1]], 20.0, "hex text id")

-- errors: not a Table, a missing column
T.check(not pcall(trace.fusion_diff_nodes, trace, {}, 30), "a Lua table is refused")
local ok, err = pcall(trace.fusion_diff_nodes, trace, numeric:select { "name", "source" }, 30)
T.check(not ok and tostring(err):find("no column 'lowest_common_ancestor_id'", 1, true), "missing column named")
local empty = table_of(1, { { "name", { "k1_kernel" } }, { "lowest_common_ancestor_id", { 1 } },
  { "kernel_time", { 1 } }, { "source", { "trace1" } }, { "gpu_op_uid", { uid.k1 } } })
T.eq((nodes_of(empty, 30)), "", "one mapped kernel: no node")

T.finish()

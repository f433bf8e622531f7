-- TraceDiff (tl.diff; spec inference-and-comparative §2.2) on hand-made
-- traces, one per matching phase. Every expectation below was worked out by
-- hand from the spec's rules (the comment above each case walks through
-- them); merged ids are assigned in pre-order of the recursion, which visits
-- a node's children in the order of its final edit script.
--
-- Host events are on pid 1 / tid 1, GPU events on pid 2 / tid 7; a launch is
-- a runtime event, an ac2g s/f flow pair and the GPU event, linked by the
-- correlation. Times are µs.
local root = arg[1]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local cjson = require "cjson"

-- ------------------------------------------------------------ builder
local function builder()
  local b = { ev = {}, uid = {}, corr = 0 }
  local function add(label, e)
    b.ev[#b.ev + 1] = e
    if label then b.uid[label] = #b.ev - 1 end
  end
  function b.op(label, name, ts, dur, cat)
    add(label, { ph = "X", cat = cat or "cpu_op", name = name, pid = 1, tid = 1, ts = ts, dur = dur, args = {} })
  end
  function b.py(label, name, ts, dur) b.op(label, name, ts, dur, "python_function") end
  -- a runtime call at ts (10 µs) and its GPU event at kts
  function b.launch(label, rname, ts, kname, kts, kdur, opts)
    opts = opts or {}
    b.corr = b.corr + 1
    local c = b.corr
    add(label and label .. ".rt", { ph = "X", cat = opts.rcat or "cuda_runtime", name = rname, pid = 1, tid = 1, ts = ts,
      dur = 10, args = { correlation = c } })
    add(nil, { ph = "s", id = c, pid = 1, tid = 1, ts = ts, cat = "ac2g", name = "ac2g" })
    add(nil, { ph = "f", id = c, pid = 2, tid = 7, ts = kts, cat = "ac2g", name = "ac2g", bp = "e" })
    add(label, { ph = "X", cat = opts.kcat or "kernel", name = kname, pid = 2, tid = 7, ts = kts, dur = kdur,
      args = { correlation = c, stream = 7 } })
  end
  function b.load(dir, name, opts)
    local path = dir .. "/" .. name .. ".json"
    tl.fs.write_file(path, cjson.encode({ traceEvents = b.ev }))
    return tl.load(path, opts)
  end
  return b
end

local dir = T.tmpdir()

local function rows_of(tab)
  local out = {}
  for _, r in tab:rows() do out[#out + 1] = r end
  return out
end

-- one diff_stats row: name, cpu_op_name, source, kernel_time, busy_time, lca name, lca id
local function check_rows(tag, d, want)
  local rows = rows_of(d.diff_stats)
  T.eq(#rows, #want, tag .. ": diff_stats rows")
  for i, w in ipairs(want) do
    local r = rows[i] or {}
    local got = string.format("%s|%s|%s|%s|%s|%s|%s", tostring(r.name), tostring(r.cpu_op_name), tostring(r.source),
      tostring(r.kernel_time), tostring(r.busy_time), tostring(r.lowest_common_ancestor_name),
      tostring(r.lowest_common_ancestor_id))
    T.eq(got, table.concat(w, "|"), tag .. ": diff_stats row " .. i)
  end
end

local function lines(s) return s:gsub("%s+$", "") end

-- ---------------------------------------------- 1. positional match
-- P has children [A, B] and [X, Y]: equal lengths, no dispatch among them,
-- so they pair by position whatever their names (combined: A | X). Under
-- each, the launch pairs by WF (a dispatch), the kernels by position; the
-- kernel pair is an LCA (both events kernels): name "kA | kX".
-- Merged ids: P 0, A|X 1, launch 2, kA|kX 3, B|Y 4, launch 5, kB|kY 6.
do
  local b1, b2 = builder(), builder()
  b1.op("P", "P", 0, 1000); b1.op("A", "A", 10, 100); b1.launch("a", "cudaLaunchKernel", 20, "kA", 500, 40)
  b1.op("B", "B", 200, 100); b1.launch("b", "cudaLaunchKernel", 210, "kB", 600, 50)
  b2.op("P", "P", 0, 1000); b2.op("X", "X", 10, 100); b2.launch("x", "cudaLaunchKernel", 20, "kX", 500, 30)
  b2.op("Y", "Y", 200, 100); b2.launch("y", "cudaLaunchKernel", 210, "kY", 600, 60)
  local d = tl.diff(b1.load(dir, "pos1"), b2.load(dir, "pos2"))
  T.eq(lines(d.merged_tree), [[
└── P
    ├── combined: A | X
    │   └── cudaLaunchKernel
    │       └── combined: kA | kX
    └── combined: B | Y
        └── cudaLaunchKernel
            └── combined: kB | kY]], "positional: merged tree")
  T.eq(d.merged_nodes, 7, "positional: merged nodes")
  check_rows("positional", d, {
    { "kA", "A", "trace1", "40.0", "40.0", "kA | kX", 3 }, { "kX", "X", "trace2", "30.0", "30.0", "kA | kX", 3 },
    { "kB", "B", "trace1", "50.0", "50.0", "kB | kY", 6 }, { "kY", "Y", "trace2", "60.0", "60.0", "kB | kY", 6 } })
  T.eq(d.merged_uid(1, b1.uid.A), b2.uid.X, "positional: merged_uid (1, A) is X")
  T.eq(d.merged_uid(2, b2.uid.Y), b1.uid.B, "positional: merged_uid (2, Y) is B")
  T.eq(d.merged_uid(1, 999), nil, "positional: merged_uid of an unknown UID")
  T.eq(d.identical, false, "positional: not identical")
  T.eq(d.diff_stats:columns()[4], "source", "positional: source column")
end

-- ------------------------------------------- 2. WF: delete and insert
-- [A, B, C, Z] vs [A, C, D, Z], Z a launch (a dispatch: no positional
-- match), D copies memory. WF: the common suffix Z matches; then from (3, 3):
-- C|D differ and dp[3][3] = 2 != dp[2][3] + 1 = 3 -> insert D; C = C match;
-- B|A differ, dp[2][1] = 1 = dp[1][1] + 1 -> delete B; A = A match.
-- Reconcile: B's and D's GPU-path children are [cudaLaunchKernel] and
-- [cudaMemcpyAsync] (no substitution). Canonicalise: B and D are cpu_ops
-- with a dispatch child, so they collapse to themselves; WF and the
-- strip_details pass keep delete/insert. Script: match A, C, Z, then delete
-- B, insert D. Merged ids: P 0, A 1-3, C 4-6, Z 7-8, B 9-11, D 12-14. P is
-- the LCA of B's and D's GPU events (its non-combined GPU-path children).
do
  local b1, b2 = builder(), builder()
  b1.op("P", "P", 0, 1000)
  b1.op(nil, "A", 10, 100); b1.launch(nil, "cudaLaunchKernel", 20, "kA", 500, 10)
  b1.op("B", "B", 200, 100); b1.launch(nil, "cudaLaunchKernel", 210, "kB", 520, 20)
  b1.op(nil, "C", 400, 100); b1.launch(nil, "cudaLaunchKernel", 410, "kC", 560, 30)
  b1.launch(nil, "cudaLaunchKernel", 600, "kZ", 600, 3)
  b2.op("P", "P", 0, 1000)
  b2.op(nil, "A", 10, 100); b2.launch(nil, "cudaLaunchKernel", 20, "kA", 500, 11)
  b2.op(nil, "C", 200, 100); b2.launch(nil, "cudaLaunchKernel", 210, "kC", 520, 31)
  b2.op("D", "D", 400, 100); b2.launch(nil, "cudaMemcpyAsync", 410, "Memcpy HtoD", 560, 5, { kcat = "gpu_memcpy" })
  b2.launch(nil, "cudaLaunchKernel", 600, "kZ", 600, 4)
  local d = tl.diff(b1.load(dir, "wf1"), b2.load(dir, "wf2"))
  T.eq(lines(d.merged_tree), [[
└── P
    ├── A
    │   └── cudaLaunchKernel
    │       └── kA
    ├── C
    │   └── cudaLaunchKernel
    │       └── kC
    ├── cudaLaunchKernel
    │   └── kZ
    ├── >> trace1: B
    │   └── >> trace1: cudaLaunchKernel
    │       └── >> trace1: kB
    └── << trace2: D
        └── << trace2: cudaMemcpyAsync
            └── << trace2: Memcpy HtoD]], "WF: merged tree")
  check_rows("WF", d, {
    { "kB", "B", "trace1", "20.0", "20.0", "P", 0 }, { "Memcpy HtoD", "D", "trace2", "5.0", "5.0", "P", 0 },
    { "kA", "A", "trace1", "10.0", "10.0", "kA", 3 }, { "kA", "A", "trace2", "11.0", "11.0", "kA", 3 },
    { "kC", "C", "trace1", "30.0", "30.0", "kC", 6 }, { "kC", "C", "trace2", "31.0", "31.0", "kC", 6 },
    { "kZ", "P", "trace1", "3.0", "3.0", "kZ", 8 }, { "kZ", "P", "trace2", "4.0", "4.0", "kZ", 8 } })
  T.eq(d.merged_uid(1, b1.uid.B), -1, "WF: B is trace1's only")
  T.eq(d.merged_uid(2, b2.uid.D), -1, "WF: D is trace2's only")
  -- the unique-args summary: kernel_time_sum descending, ties by str() of the columns
  local s = d.diff_stats_unique_args_summary
  T.eq(table.concat(s:columns(), ","), "name,operation_count,cpu_op_name,cpu_op_uid,source,Input Dims,Input Strides,"
    .. "Input type,Concrete Inputs,busy_time,lowest_common_ancestor_name,nn_module_stack,nn_module_parent,"
    .. "kernel_time_mean,kernel_time_sum", "summary columns")
  local names = {}
  for _, r in s:rows() do names[#names + 1] = r.name .. "/" .. r.source .. "/" .. r.kernel_time_sum end
  T.eq(table.concat(names, " "), "kC/trace2/31.0 kC/trace1/30.0 kB/trace1/20.0 kA/trace2/11.0 kA/trace1/10.0 "
    .. "Memcpy HtoD/trace2/5.0 kZ/trace2/4.0 kZ/trace1/3.0", "summary order")
  -- the cpu_op maps: B and D are the unmatched ops under the one LCA P; no
  -- common name part, but each has one nn.Module parent, the same ("root"),
  -- so find_common_name names them both "root"
  T.eq(d.cpu_op_map_trace1, '{\n  "A": [\n    "kA"\n  ],\n  "B": [\n    "kB"\n  ],\n  "C": [\n    "kC"\n  ],\n'
    .. '  "P": [\n    "kZ"\n  ]\n}', "cpu_op_map_trace1.json")
  local m = cjson.decode(d.cpu_op_map)
  T.eq(m.root and m.root.trace1.kernels[1], "kB", "cpu_op_map: B renamed root (trace1)")
  T.eq(m.root and m.root.trace2.kernels[1], "Memcpy HtoD", "cpu_op_map: D renamed root (trace2)")
  T.eq(m.B, nil, "cpu_op_map: no B key")
  -- the summary keeps the real names ([FIX])
  local ops = {}
  for _, r in s:rows() do ops[r.cpu_op_name] = true end
  T.check(ops.B and ops.D and not ops.root, "summary keeps cpu_op_name B and D")
end

-- ------------------------------------------------ 3. reconcile
-- As case 2 but D launches a kernel: B's and D's GPU-path children are both
-- [cudaLaunchKernel], so both are replaced by them; the lists re-sorted by
-- ts are [A, launchB, C, Z] and [A, C, launchD, Z]; A, C and Z stay matched
-- and WF on the free launches matches them. Merged ids: P 0, A 1-3, C 4-6,
-- Z 7-8, launch pair 9, kB|kD 10 (an LCA: both kernels; cpu ops B and D).
do
  local b1, b2 = builder(), builder()
  b1.op("P", "P", 0, 1000)
  b1.op(nil, "A", 10, 100); b1.launch(nil, "cudaLaunchKernel", 20, "kA", 500, 10)
  b1.op("B", "B", 200, 100); b1.launch("b", "cudaLaunchKernel", 210, "kB", 520, 20)
  b1.op(nil, "C", 400, 100); b1.launch(nil, "cudaLaunchKernel", 410, "kC", 560, 30)
  b1.launch(nil, "cudaLaunchKernel", 600, "kZ", 600, 3)
  b2.op("P", "P", 0, 1000)
  b2.op(nil, "A", 10, 100); b2.launch(nil, "cudaLaunchKernel", 20, "kA", 500, 10)
  b2.op(nil, "C", 200, 100); b2.launch(nil, "cudaLaunchKernel", 210, "kC", 520, 30)
  b2.op("D", "D", 400, 100); b2.launch("d", "cudaLaunchKernel", 410, "kD", 560, 25)
  b2.launch(nil, "cudaLaunchKernel", 600, "kZ", 600, 3)
  local d = tl.diff(b1.load(dir, "rc1"), b2.load(dir, "rc2"))
  T.eq(lines(d.merged_tree), [[
└── P
    ├── A
    │   └── cudaLaunchKernel
    │       └── kA
    ├── C
    │   └── cudaLaunchKernel
    │       └── kC
    ├── cudaLaunchKernel
    │   └── kZ
    └── cudaLaunchKernel
        └── combined: kB | kD]], "reconcile: merged tree")
  T.eq(d.merged_uid(1, b1.uid["b.rt"]), b2.uid["d.rt"], "reconcile: launch of B paired with launch of D")
  T.eq(d.merged_uid(1, b1.uid.B), nil, "reconcile: B itself is not in the merged tree")
  check_rows("reconcile", d, {
    { "kA", "A", "trace1", "10.0", "10.0", "kA", 3 }, { "kA", "A", "trace2", "10.0", "10.0", "kA", 3 },
    { "kC", "C", "trace1", "30.0", "30.0", "kC", 6 }, { "kC", "C", "trace2", "30.0", "30.0", "kC", 6 },
    { "kZ", "P", "trace1", "3.0", "3.0", "kZ", 8 }, { "kZ", "P", "trace2", "3.0", "3.0", "kZ", 8 },
    { "kB", "B", "trace1", "20.0", "20.0", "kB | kD", 10 }, { "kD", "D", "trace2", "25.0", "25.0", "kB | kD", 10 } })
end

-- ------------------------------------- 4. disambiguation of repeated names
-- P: [X(kA), X(kB), launch(kZ)] vs [X(kB), X(kA), launch(kZ)]. WF matches by
-- position; X is repeated and matched, so its nodes are re-paired by BFS
-- signatures ([launch], [kA], []) etc.: the crossed pairs agree on 3 levels,
-- the positional ones on 1, so X1-X2' and X2-X1'. The new matches are not
-- WF's: the script is the kept match of the launch, then the new matches in
-- index order. Merged ids: P 0, launch 1, kZ 2, X 3-5 (kA), X 6-8 (kB).
do
  local b1, b2 = builder(), builder()
  b1.op("P", "P", 0, 1000)
  b1.op("X1", "X", 10, 100); b1.launch(nil, "cudaLaunchKernel", 20, "kA", 500, 10)
  b1.op("X2", "X", 200, 100); b1.launch(nil, "cudaLaunchKernel", 210, "kB", 520, 20)
  b1.launch(nil, "cudaLaunchKernel", 400, "kZ", 560, 30)
  b2.op("P", "P", 0, 1000)
  b2.op("X1", "X", 10, 100); b2.launch(nil, "cudaLaunchKernel", 20, "kB", 500, 21)
  b2.op("X2", "X", 200, 100); b2.launch(nil, "cudaLaunchKernel", 210, "kA", 520, 11)
  b2.launch(nil, "cudaLaunchKernel", 400, "kZ", 560, 30)
  local d = tl.diff(b1.load(dir, "dis1"), b2.load(dir, "dis2"))
  T.eq(lines(d.merged_tree), [[
└── P
    ├── cudaLaunchKernel
    │   └── kZ
    ├── X
    │   └── cudaLaunchKernel
    │       └── kA
    └── X
        └── cudaLaunchKernel
            └── kB]], "disambiguation: merged tree")
  T.eq(d.merged_uid(1, b1.uid.X1), b2.uid.X2, "disambiguation: X1 pairs with X2'")
  T.eq(d.merged_uid(1, b1.uid.X2), b2.uid.X1, "disambiguation: X2 pairs with X1'")
  T.eq(d.stats.disambiguations, 1, "disambiguation: one ambiguous name")
  check_rows("disambiguation", d, {
    { "kZ", "P", "trace1", "30.0", "30.0", "kZ", 2 }, { "kZ", "P", "trace2", "30.0", "30.0", "kZ", 2 },
    { "kA", "X", "trace1", "10.0", "10.0", "kA", 5 }, { "kA", "X", "trace2", "11.0", "11.0", "kA", 5 },
    { "kB", "X", "trace1", "20.0", "20.0", "kB", 8 }, { "kB", "X", "trace2", "21.0", "21.0", "kB", 8 } })
end

-- --------------------------------------- 5. collapse of a single-child chain
-- P -> W -> [A, B] vs P -> [A, B]: the child counts differ (1 and 2) and
-- trace 1 has one, so W is collapsed: it has two GPU-path children, so the
-- merged node shows W for trace 1 (combined: W | P) and its children pair by
-- position. merged_uid keeps the pair the node was made for (P, P).
do
  local b1, b2 = builder(), builder()
  b1.op("P", "P", 0, 1000); b1.op("W", "W", 5, 600)
  b1.op(nil, "A", 10, 100); b1.launch(nil, "cudaLaunchKernel", 20, "kA", 700, 10)
  b1.op(nil, "B", 200, 100); b1.launch(nil, "cudaLaunchKernel", 210, "kB", 720, 20)
  b2.op("P", "P", 0, 1000)
  b2.op(nil, "A", 10, 100); b2.launch(nil, "cudaLaunchKernel", 20, "kA", 700, 10)
  b2.op(nil, "B", 200, 100); b2.launch(nil, "cudaLaunchKernel", 210, "kB", 720, 20)
  local d = tl.diff(b1.load(dir, "col1"), b2.load(dir, "col2"))
  T.eq(lines(d.merged_tree), [[
└── combined: W | P
    ├── A
    │   └── cudaLaunchKernel
    │       └── kA
    └── B
        └── cudaLaunchKernel
            └── kB]], "collapse: merged tree")
  T.eq(d.merged_uid(1, b1.uid.P), b2.uid.P, "collapse: merged_uid (1, P)")
  T.eq(d.merged_uid(1, b1.uid.W), nil, "collapse: W was never a pair of its own")
  T.eq(d.merged_nodes, 7, "collapse: merged nodes")
end

-- ------------------- 6. identical traces; the top root's single-child chain
-- With python functions: R "main.py(1): <module>" -> Q "main.py(5): run" ->
-- [A, B], and a CPU-only op after them. The cpu_op roots are A, B, empty.
-- A's top root: up to R, then down the single python child to Q (2
-- children): Q, and R's children become Q's (kept in TraceDiff's overlay).
-- B's: its parent is now R, which has 2 children: R itself. So the roots
-- are [Q, R, aten::empty]; R's children are the pairs already merged under
-- Q (the same merged ids). A trace against itself: identical, the trace2
-- rows and the source column dropped.
do
  local b = builder()
  b.py("R", "main.py(1): <module>", 0, 1000); b.py("Q", "main.py(5): run", 1, 998)
  b.op("A", "A", 10, 100); b.launch(nil, "cudaLaunchKernel", 20, "kA", 1100, 40)
  b.op("B", "B", 200, 100); b.launch(nil, "cudaLaunchKernel", 210, "kB", 1200, 50)
  b.op(nil, "aten::empty", 1500, 10)
  local t = b.load(dir, "same", { include_call_stack = true })
  local d = tl.diff(t, t)
  T.eq(lines(d.merged_tree), [[
├── main.py(5): run
│   ├── A
│   │   └── cudaLaunchKernel
│   │       └── kA
│   └── B
│       └── cudaLaunchKernel
│           └── kB
├── main.py(1): <module>
│   ├── A
│   │   └── cudaLaunchKernel
│   │       └── kA
│   └── B
│       └── cudaLaunchKernel
│           └── kB
└── aten::empty]], "identical: merged tree")
  T.eq(d.merged_roots, 3, "identical: roots")
  T.eq(d.merged_nodes, 9, "identical: merged nodes (R's children are Q's)")
  local pruned = tl.diff(t, t, { prune_non_gpu = true })
  T.eq(select(2, pruned.merged_tree:gsub("\n", "")), 14, "prune_non_gpu: the CPU-only root's line is dropped")
  T.check(pruned.merged_tree:find("├── main.py(1): <module>", 1, true),
    "prune_non_gpu: the connectors are those of the unpruned list")
  T.eq(d.identical, true, "identical")
  T.eq(table.concat(d.diff_stats:columns(), ","), "name,cpu_op_name,cpu_op_uid,Input Dims,Input Strides,Input type,"
    .. "Concrete Inputs,kernel_time,busy_time,lowest_common_ancestor_name,lowest_common_ancestor_id,gpu_op_uid,"
    .. "nn_module_stack,nn_module_parent", "identical: no source column")
  local rows = rows_of(d.diff_stats)
  T.eq(#rows, 2, "identical: trace1 rows only")
  T.eq(rows[1].name .. " " .. rows[1].lowest_common_ancestor_id .. " " .. rows[1].nn_module_stack, "kA 3 root",
    "identical: first row")
  T.eq(#d.diff_stats_unique_args_summary, 2, "identical: summary rows")
  T.eq(table.concat(d.diff_stats_unique_args_summary:columns(), ","), "name,operation_count,cpu_op_name,cpu_op_uid,"
    .. "Input Dims,Input Strides,Input type,Concrete Inputs,busy_time,lowest_common_ancestor_name,nn_module_stack,"
    .. "nn_module_parent,kernel_time_mean,kernel_time_sum", "identical: summary without source")
  T.eq(d.cpu_op_map, '{\n  "B": {\n    "kernels": [\n      "kB"\n    ],\n    "nn_module_parents": [\n      "root"\n'
    .. '    ]\n  },\n  "A": {\n    "kernels": [\n      "kA"\n    ],\n    "nn_module_parents": [\n      "root"\n    ]\n  }\n}',
    "identical: cpu_op_map.json holds the trace1 maps directly, in summary order")
  T.eq(d.cpu_op_map_trace2, '{\n  "A": [\n    "kA"\n  ],\n  "B": [\n    "kB"\n  ]\n}', "identical: cpu_op_map_trace2")
  -- the report of a trace against itself: every LCA's speedup is 1
  local r = t:report({ compare = t })
  local u = r.unified_perf_summary
  for i = 1, #u do
    T.eq(u:get(i, "speedup (trace2/trace1)"), 1.0, "identical report: speedup row " .. i)
    T.eq(u:get(i, "delta_us (trace2 - trace1)"), 0.0, "identical report: delta row " .. i)
  end
  T.eq(#r.diff_stats, 2, "identical report: diff_stats rows")
end

-- ------------- 7. the strip_details pass, name normalisation, the tree text
-- run.py main: [d, E, L, H] vs [i, E, L', H'] (python functions in the tree).
-- H/H' differ only in a hex address and L/L' are hipModuleLaunchKernel and
-- cuLaunchKernel (both __kernel_launch__): WF matches H, L, E from the end,
-- then d|i is insert + delete. No reconcile (children [mm, add] vs
-- [mm, relu]). Canonicalise: d and i have two GPU-path children each, so
-- they stay; WF on normalized names keeps them apart; the strip_details pass
-- makes both "model.py" (": forward" dropped, then the path): matched. The
-- new script is the earlier matches in order (E, L, H), then d|i; under d|i
-- the children pair by position. L has no cpu_op above it: its kernel gives
-- no row. Merged ids: P 0, E 1-3, L 4-5, H 6-9, d|i 10, mm 11-13,
-- add|relu 14-16.
do
  local function side(b, two)
    b.py("P", "run.py(1): main", 0, 2000)
    b.py("d", two and "c/model.py(20): forward_v2" or "a/b/model.py(10): forward", 10, 290)
    b.op(nil, "aten::mm", 20, 80); b.launch(nil, "cudaLaunchKernel", 30, "kmm", 3000, 10)
    b.op(nil, two and "aten::relu" or "aten::add", 110, 90)
    b.launch(nil, "cudaLaunchKernel", 120, two and "krelu" or "kadd", 3100, two and 12 or 20)
    b.op(nil, "aten::copy_", 400, 100); b.launch(nil, "cudaLaunchKernel", 410, "kcopy", 3200, 5)
    b.launch(nil, two and "cuLaunchKernel" or "hipModuleLaunchKernel", 600, "kL", 3300, 7,
      { rcat = two and "cuda_driver" or "cuda_runtime" })
    b.py(nil, "<built-in method foo of Foo object at " .. (two and "0x55bb11" or "0x7f00aa") .. ">", 700, 100)
    b.op(nil, "aten::foo", 710, 80); b.launch(nil, "cudaLaunchKernel", 720, "kfoo", 3400, 9)
  end
  local b1, b2 = builder(), builder()
  side(b1, false)
  side(b2, true)
  local o = { include_call_stack = true }
  local d = tl.diff(b1.load(dir, "strip1", o), b2.load(dir, "strip2", o))
  T.eq(lines(d.merged_tree), [[
└── run.py(1): main
    ├── aten::copy_
    │   └── cudaLaunchKernel
    │       └── kcopy
    ├── combined: hipModuleLaunchKernel | cuLaunchKernel
    │   └── kL
    ├── combined: <built-in method foo of Foo object at 0x7f00aa> | <built-in method foo of Foo object at 0x55bb11>
    │   └── aten::foo
    │       └── cudaLaunchKernel
    │           └── kfoo
    └── combined: a/b/model.py(10): forward | c/model.py(20): forward_v2
        ├── aten::mm
        │   └── cudaLaunchKernel
        │       └── kmm
        └── combined: aten::add | aten::relu
            └── cudaLaunchKernel
                └── combined: kadd | krelu]], "strip_details: merged tree")
  T.eq(d.merged_uid(1, b1.uid.d), b2.uid.d, "strip_details: the frames are paired")
  check_rows("strip_details", d, {
    { "kcopy", "aten::copy_", "trace1", "5.0", "5.0", "kcopy", 3 },
    { "kcopy", "aten::copy_", "trace2", "5.0", "5.0", "kcopy", 3 },
    { "kfoo", "aten::foo", "trace1", "9.0", "9.0", "kfoo", 9 }, { "kfoo", "aten::foo", "trace2", "9.0", "9.0", "kfoo", 9 },
    { "kmm", "aten::mm", "trace1", "10.0", "10.0", "kmm", 13 }, { "kmm", "aten::mm", "trace2", "10.0", "10.0", "kmm", 13 },
    { "kadd", "aten::add", "trace1", "20.0", "20.0", "kadd | krelu", 16 },
    { "krelu", "aten::relu", "trace2", "12.0", "12.0", "kadd | krelu", 16 } })
end

-- ------------------------------------------------------------- errors
do
  local b = builder()
  b.launch(nil, "cudaLaunchKernel", 0, "k", 10, 1)
  local t = b.load(dir, "noroots")
  local ok, err = pcall(tl.diff, t, t)
  T.check(not ok and tostring(err):find("cpu_op roots", 1, true), "a trace without cpu_op roots is an error")
end

-- ------------------- 7. what the unique-args summary groups by: cpu_op_uid stays a key
-- A launches k twice (10 us each); B is called twice with the same (no) args, each call launching kb
-- (20 us). A trace against itself: every kernel is its own LCA (both events kernels), busy_time = its
-- duration. A's two k rows differ only in kernel_time's ids (gpu_op_uid, the LCA id): one group of 2.
-- The two B calls differ in cpu_op_uid: two groups of 1 (grouping "by everything but the kernel time
-- and the ids" would have made them one of 2).
do
  local b = builder()
  b.op("A", "A", 0, 100)
  b.launch(nil, "cudaLaunchKernel", 10, "k", 1000, 10)
  b.launch(nil, "cudaLaunchKernel", 30, "k", 1020, 10)
  b.op("B1", "B", 200, 100); b.launch(nil, "cudaLaunchKernel", 210, "kb", 1100, 20)
  b.op("B2", "B", 400, 100); b.launch(nil, "cudaLaunchKernel", 410, "kb", 1200, 20)
  local t = b.load(dir, "groups")
  local d = tl.diff(t, t)
  T.eq(#d.diff_stats, 4, "groups: 4 diff_stats rows (one per kernel)")
  local got = {}
  for _, r in d.diff_stats_unique_args_summary:rows() do
    got[#got + 1] = string.format("%s/%s/%d/%d/%s", r.name, r.cpu_op_name, r.cpu_op_uid, r.operation_count,
      tostring(r.kernel_time_sum))
  end
  -- (all sums 20: ties in str() order of the columns: name k < kb, then cpu_op_uid "14" < "9")
  T.eq(table.concat(got, " "), string.format("k/A/%d/2/20.0 kb/B/%d/1/20.0 kb/B/%d/1/20.0", b.uid.A, b.uid.B2, b.uid.B1),
    "groups: A's two k in one row; each B call a row of its own (cpu_op_uid is a key)")
  -- and `tracelens diff --help` says so
  local bin = arg[3]
  if bin then
    local _, _, help = T.run(T.q(bin) .. " diff --help")
    local flat = help:gsub("%s+", " ")
    T.check(flat:find("grouped by all its columns but kernel_time, gpu_op_uid and lowest_common_ancestor_id", 1, true)
      and flat:find("cpu_op_uid stays a key", 1, true) and not flat:find("everything but the kernel time and the ids", 1, true),
      "diff --help: the summary's grouping names cpu_op_uid: " .. help)
  end
end

T.rmrf(dir)
T.finish()

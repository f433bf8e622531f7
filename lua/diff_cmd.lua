-- diff_cmd.lua — `tracelens diff T1 T2 -o DIR`: TraceDiff of two traces
-- (tl.diff, spec inference-and-comparative §2.2) written as the reference's
-- print_tracediff_report_files writes it. Returns the exit status: 0 done,
-- 1 input error, 2 usage error.

local USAGE = [[
usage: tracelens diff TRACE1 TRACE2 -o DIR [options]

Aligns the call trees of TRACE1 (the baseline) and TRACE2 (TraceDiff) and
writes into DIR:
  merged_tree_output.txt              the merged tree (combined nodes by name,
                                      ">> trace1: X" / "<< trace2: Y" for a
                                      node of one trace only)
  diff_stats.csv                      one row per GPU op under a lowest common
                                      ancestor (LCA) of the two trees: its
                                      cpu_op, args, kernel_time, the LCA's busy
                                      time, name and id
  diff_stats_unique_args_summary.csv  diff_stats grouped by all its columns but
                                      kernel_time, gpu_op_uid and
                                      lowest_common_ancestor_id, with
                                      operation_count, kernel_time_mean and
                                      _sum; cpu_op_uid stays a key (as in the
                                      reference), so a row holds one CPU op
                                      call's kernels of one name and most
                                      counts are 1 (bert H100 vs MI300: all
                                      122 rows)
  cpu_op_map_trace1.json, cpu_op_map_trace2.json, cpu_op_map.json
                                      the kernels of each cpu_op, per trace
Identical traces (every row of one equals the other's) keep only the trace1
rows, without the source column. Files with nothing to say are not written.

options:
  -o, --output DIR         output directory (required)
  --include-call-stack     python functions join the call trees
                           [--include_call_stack]
  --enable-pseudo-ops      the pseudo-op pass on both traces [--enable_pseudo_ops]
  --prune-non-gpu          merged_tree_output.txt without the top roots that
                           launch no GPU work [--prune_non_gpu]
  -q, --quiet              no progress messages
  -h, --help               this help

Exit status: 0 success, 1 input error, 2 usage error.
]]

-- One line: the problem and where the usage is.
local function usage_error(msg)
  io.stderr:write("tracelens: diff: ", msg, " (see `tracelens diff --help`)\n")
  return 2
end

local function parse(argv)
  local o = { traces = {} }
  local i = 1
  while i <= #argv do
    local a = argv[i]
    if a == "-h" or a == "--help" then
      o.help = true
    elseif a == "-o" or a == "--output" then
      i = i + 1
      o.out = argv[i]
      if not o.out then return nil, a .. " needs a directory" end
    elseif a == "--include-call-stack" or a == "--include_call_stack" then
      o.call_stack = true
    elseif a == "--enable-pseudo-ops" or a == "--enable_pseudo_ops" then
      o.pseudo_ops = true
    elseif a == "--prune-non-gpu" or a == "--prune_non_gpu" then
      o.prune = true
    elseif a == "-q" or a == "--quiet" then
      o.quiet = true
    elseif a:sub(1, 1) == "-" and #a > 1 then
      return nil, "unknown option '" .. a .. "'"
    else
      o.traces[#o.traces + 1] = a
    end
    i = i + 1
  end
  return o
end

local function main(argv)
  local o, err = parse(argv)
  if not o then return usage_error(err) end
  if o.help then
    io.write(USAGE)
    return 0
  end
  if #o.traces ~= 2 then return usage_error("two traces are needed (TRACE1 TRACE2)") end
  if not o.out then return usage_error("no output directory given (-o DIR)") end
  -- the output directory is checked before the traces are loaded
  local kind = tl.fs.kind(o.out)
  if kind and kind ~= "directory" then
    io.stderr:write("tracelens: diff: -o ", o.out, ": exists and is not a directory\n")
    return 2
  end
  local function progress(fmt, ...)
    if not o.quiet then io.stderr:write("tracelens: ", string.format(fmt, ...), "\n") end
  end
  local lo = { include_call_stack = o.call_stack or nil, enable_pseudo_ops = o.pseudo_ops or nil }
  -- both traces load at once, each in its own state (the handles are shared back)
  progress("loading %s and %s", o.traces[1], o.traces[2])
  local code = "local path, opts = ...; return tl.load(path, opts)"
  local r = tl.parallel({ { code = code, args = { o.traces[1], lo }, name = "load trace 1" },
    { code = code, args = { o.traces[2], lo }, name = "load trace 2" } }, { jobs = 2 })
  for k = 1, 2 do
    if not r[k].ok then
      io.stderr:write("tracelens: ", tostring(r[k].error), "\n")
      return 1
    end
  end
  local t0 = tl.now()
  local ok, d = pcall(tl.diff, r[1].value, r[2].value, { prune_non_gpu = o.prune })
  if not ok then
    io.stderr:write("tracelens: ", tostring(d), "\n")
    return 1
  end
  progress("TraceDiff: %d merged nodes, %d rows%s (%.2f s)", d.merged_nodes,
    d.diff_stats and #d.diff_stats or 0, d.identical and ", identical traces" or "", tl.now() - t0)
  -- the tree text first: it can be refused (too deep to write), and then nothing is written
  local okt, tree = pcall(function() return d.merged_tree end)
  if not okt then
    io.stderr:write("tracelens: merged_tree_output.txt: ", tostring(tree), "\n")
    return 1
  end
  local written = {}
  local function put(name, text)
    tl.fs.write_file(o.out .. "/" .. name, text)
    written[#written + 1] = name
  end
  local wok, werr = pcall(function()
    tl.fs.mkdir(o.out)
    put("merged_tree_output.txt", tree)
    if d.diff_stats and #d.diff_stats > 0 then
      d.diff_stats:write_csv(o.out .. "/diff_stats.csv")
      written[#written + 1] = "diff_stats.csv"
    end
    local s = d.diff_stats_unique_args_summary
    if s and #s > 0 then
      s:write_csv(o.out .. "/diff_stats_unique_args_summary.csv")
      written[#written + 1] = "diff_stats_unique_args_summary.csv"
    end
    for _, k in ipairs({ "cpu_op_map_trace1", "cpu_op_map_trace2", "cpu_op_map" }) do
      if d[k] then put(k .. ".json", d[k]) end
    end
  end)
  if not wok then
    -- the library's "PATH: reason", without the position of the call
    io.stderr:write("tracelens: ", (tostring(werr):gsub("^[^\n]-%.lua:%d+: ", "")), "\n")
    return 1
  end
  progress("wrote %s to %s", table.concat(written, ", "), o.out)
  return 0
end

return main({ ... })

-- load_stages.lua — the load stage (bench/load_timeline.lua) with a figure
-- per stage: tracelens run bench/load_stages.lua TRACE [THREADS]
-- Prints load (read/inflate + scan + join of the parallel parts), tree and
-- timeline seconds; run with TRACELENS_SCAN_STAGES=1 for the per-part scan
-- lines (time waiting on read/inflate vs scanning) on stderr.
local path = arg[1] or error("usage: tracelens run load_stages.lua TRACE [THREADS]")
local t0 = tl.now()
local trace = tl.load(path, {threads = tonumber(arg[2]) or 0})
local t1 = tl.now()
local tlv = trace:timeline()
local t2 = tl.now()
local info = trace:info()
local mb = info.json_bytes / 1e6
print(string.format("%d events, %.1f MB of JSON (%s), %d parts", #trace, mb, info.gzip and "gzip" or "plain",
    info.scan_parts))
print(string.format("stage load      %.3f s  %7.0f MB/s", info.load_seconds, mb / info.load_seconds))
print(string.format("stage tree      %.3f s", info.tree_seconds))
print(string.format("stage timeline  %.3f s", t2 - t1))
print(string.format("total in Lua    %.3f s  %7.0f MB/s (tl.load + timeline; add start-up and exit for the wall time)",
    t2 - t0, mb / (t2 - t0)))
print(string.format("busy %.3f ms of %.3f ms", tlv.busy_time / 1e3, tlv.total_time / 1e3))

-- load_timeline.lua — the load + tree + GPU timeline stage alone, for the
-- benchmark: tracelens run bench/load_timeline.lua TRACE
local trace = tl.load(arg[1] or error("usage: tracelens run load_timeline.lua TRACE"))
local tlv = trace:timeline()
print(string.format("%d events, busy %.3f ms of %.3f ms", #trace, tlv.busy_time / 1e3, tlv.total_time / 1e3))

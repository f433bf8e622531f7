-- test_wide_ids.lua: correlation and flow ids of every width link and read
-- back exactly, whatever the store keeps them in (ids up to 2^32 - 3 in a
-- 32-bit column, the others in its side list), through every way of
-- loading (one scan, a plain file in two parts, gzip segments); and a trace
-- read with its args offsets wrapping every 2^7 bytes (as a blob over 4 GiB
-- would wrap every 2^32) gives the same report CSVs. The kernels run on one
-- stream (few pid/tid values: the linking's map keeps only the threads where
-- flows end) and on 300 (too many for that filter: every thread is kept).
local root = arg[1]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local N = 24000
local kinds = {
  function(k) return k end,                           -- small
  function(k) return 4294967290 + k % 8 * 100000 + k end, -- around 2^32 - 2 (the side list's marker values)
  function(k) return (1 << 33) + k end,               -- over 32 bits
  function(k) return (1 << 62) + k end,
  function(k) return -(k + 1) end,                    -- negative
}
local corr_of = {}
local dir = T.tmpdir()
local function write_trace(path, streams)
  local parts = {}
  for k = 0, N - 1 do
    local c = kinds[k % #kinds + 1](k)
    local ts = 1000 + 20 * k
    corr_of[ts] = c
    local s = 7 + k % streams
    parts[#parts + 1] = T.x_event("cuda_runtime", "cudaLaunchKernel", ts, 5, {correlation = tostring(c)}, 1, 1)
    parts[#parts + 1] = T.flow_event("s", c, 1, 1, ts)
    parts[#parts + 1] = T.x_event("kernel", "gemm_kernel_" .. k % 7, ts + 8, 6,
      {correlation = tostring(c), stream = tostring(s), device = "0", grid = "[1, 1, 1]"}, 0, s)
    parts[#parts + 1] = T.flow_event("f", c, 0, s, ts + 8)
  end
  local f = assert(io.open(path, "wb"))
  f:write('{"traceEvents":[\n', table.concat(parts, ",\n"), '\n]}\n')
  f:close()
end
local plain = dir .. "/wide_ids.json"
write_trace(plain, 1)
T.check(os.execute("gzip -k -6 " .. T.q(plain)) == true, "gzip")

local function check(trace, what)
  local kernels, linked, bad_corr, bad_flow = 0, 0, 0, 0
  for e in trace:events() do
    local at_kernel = e.cat == "kernel" or e.ph == "f"
    local want = corr_of[e.ts_ns // 1000 - (at_kernel and 8 or 0)]
    if e.cat == "kernel" then
      kernels = kernels + 1
      local p = e:parent()
      if p and p.name == "cudaLaunchKernel" and p.args.correlation == want then linked = linked + 1 end
      if e.args.correlation ~= want then bad_corr = bad_corr + 1 end
    elseif e.cat == "cuda_runtime" then
      if e.args.correlation ~= want then bad_corr = bad_corr + 1 end
    elseif e.cat == "ac2g" then
      if e.id ~= want then bad_flow = bad_flow + 1 end
    end
  end
  T.eq(kernels, N, what .. ": kernels")
  T.eq(linked, N, what .. ": kernels linked to the launch with their correlation")
  T.eq(bad_corr, 0, what .. ": events whose args.correlation differs")
  T.eq(bad_flow, 0, what .. ": flows whose id differs")
end

check(tl.load(plain, {threads = 1}), "plain, one scan")
local two = tl.load(plain, {threads = 2})
T.check(two:info().scan_parts > 1, "plain file scanned in parts: " .. two:info().scan_parts)
check(two, "plain, two parts")
local segs = tl.load(plain .. ".gz", {threads = 3})
T.check(segs:info().scan_parts > 1, "gzip scanned in segments: " .. segs:info().scan_parts)
check(segs, "gzip segments")
local streams = dir .. "/wide_ids_streams.json"
write_trace(streams, 300)
local st = tl.load(streams, {threads = 2})
T.check(st:info().scan_parts > 1, "300 streams: scanned in parts")
check(st, "300 streams, two parts")

-- wrapped args offsets: the same CSVs
local bin = T.tracelens_bin()
local function report(env, out)
  local ok, code, _, err = T.run(string.format("env %s %s report -q --platform none --no-xlsx %s -o %s", env, T.q(bin),
    T.q(plain), T.q(out)))
  T.check(ok, "report " .. env .. " (exit " .. tostring(code) .. "): " .. err)
end
report("TRACELENS_ARGS_OFF_BITS=32", dir .. "/r32")
report("TRACELENS_ARGS_OFF_BITS=7", dir .. "/r7")
local ok = T.run("diff -r " .. T.q(dir .. "/r32") .. " " .. T.q(dir .. "/r7"))
T.check(ok, "report CSVs equal with args offsets wrapping every 128 bytes")
T.check(T.file_exists(dir .. "/r7/perf_report_csvs/kernel_summary.csv"), "kernel_summary.csv written")
T.rmrf(dir)
T.finish()

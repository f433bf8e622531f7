-- trace:memcpy_summary() and the memcpy_summary sheet (issue 16): copies and
-- sets by direction (H2D, D2H, D2D, P2P, memset) and host memory (pageable,
-- pinned, not said), their bandwidth judged against the arch file's links
-- (host link for host copies, HBM for device copies and sets, GPU link for
-- peer copies). A trace built here with hand-computed figures; and on a
-- shared trace every row recomputed here from the raw JSON (cjson).
local root, data = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local cjson = require "cjson"
local json = require "tracelens.json"
local dir = T.tmpdir()
local X = T.x_event

local ev = {}
local ts = 0
local function copy(cat, name, dur, bytes)
  ev[#ev + 1] = X(cat, name, ts, dur, { stream = "7", bytes = bytes and tostring(bytes) or nil }, 0, 7)
  ts = ts + dur + 10
end
-- H2D from pageable memory: 2 x 4 MB in 400 us each: 10 GB/s, 15.625% of the 64 GB/s host link
copy("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 400, 4000000)
copy("gpu_memcpy", "Memcpy HtoD (Pageable -> Device)", 400, 4000000)
-- H2D from pinned memory: 8 MB in 200 us: 40 GB/s, 62.5%
copy("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 200, 8000000)
-- the host memory not said: old CUDA names and AMD names
copy("gpu_memcpy", "Memcpy HtoD (Host -> Device)", 100, 1000000)
copy("gpu_memcpy", "CopyHostToDevice", 100, nil)
-- D2H to pinned memory: 1 MB in 50 us
copy("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", 50, 1000000)
-- D2D: 2 MB in 20 us: 100 GB/s copied, 200 GB/s of HBM traffic
copy("gpu_memcpy", "Memcpy DtoD (Device -> Device)", 20, 2000000)
-- P2P: 45 MB in 100 us: 450 GB/s, all of H100's 450 GB/s NVLink per direction
copy("gpu_memcpy", "Memcpy PtoP (Device -> Device)", 100, 45000000)
-- a set: 1 MB in 10 us
copy("gpu_memset", "Memset (Device)", 10, 1000000)
local path = dir .. "/copies.json"
local f = assert(io.open(path, "w"))
f:write('{"deviceProperties":[{"id":0,"name":"NVIDIA H100 80GB HBM3"}],"traceEvents":[',
  table.concat(ev, ",\n"), "]}")
f:close()

local t = tl.load(path)
local rows, how = t:memcpy_summary()
T.check(type(how) == "string" and how:find("H100", 1, true), "platform detected: " .. tostring(how))
local by = {}
for _, r in ipairs(rows) do by[r.direction .. "/" .. (r.host_memory or "")] = r end
T.eq(#rows, 7, "seven groups")
local order = {}
for _, r in ipairs(rows) do order[#order + 1] = r.direction .. "/" .. (r.host_memory or "") end
T.eq(table.concat(order, " "), "H2D/pageable H2D/pinned H2D/not said D2H/pinned D2D/ P2P/ memset/", "row order")
local pg = by["H2D/pageable"]
T.eq(pg.count, 2, "two pageable H2D")
T.eq(pg.bytes, 8000000, "their bytes")
T.close(pg.time_us, 800, "their time", 0, 1e-9)
T.close(pg.achieved_gbps, 10, "10 GB/s", 1e-12, 0)
T.eq(pg.judged_against, "host_link", "against the host link")
T.eq(pg.link, "PCIe Gen5 x16", "H100's host link")
T.close(pg.reference_gbps, 64, "64 GB/s per direction", 0, 0)
T.close(pg.percent_of_reference, 15.625, "15.625%", 1e-12, 0)
T.close(by["H2D/pinned"].percent_of_reference, 62.5, "pinned: 62.5%", 1e-12, 0)
local ns = by["H2D/not said"]
T.eq(ns.count, 2, "Host -> Device and CopyHostToDevice: host memory not said")
T.eq(ns.transfers_with_bytes, 1, "one of them with bytes")
T.close(ns.achieved_gbps, 10, "over the one with bytes: 1 MB in 100 us", 1e-12, 0)
local dd = by["D2D/"]
T.eq(dd.judged_against, "hbm", "D2D against HBM")
T.close(dd.achieved_gbps, 100, "100 GB/s copied", 1e-12, 0)
T.close(dd.traffic_gbps, 200, "200 GB/s of HBM traffic (read and written)", 1e-12, 0)
T.close(dd.percent_of_reference, 200 / 3350 * 100, "of H100's 3350 GB/s", 1e-12, 0)
local pp = by["P2P/"]
T.eq(pp.judged_against, "gpu_link", "P2P against the GPU link")
T.close(pp.percent_of_reference, 100, "all of the 450 GB/s NVLink", 1e-12, 0)
T.eq(pp.link, "NVLink 4 (18 links)", "H100's GPU link")
local ms = by["memset/"]
T.close(ms.traffic_gbps, 100, "a set writes its bytes once", 1e-12, 0)
T.close(ms.percent_of_reference, 100 / 3350 * 100, "against HBM", 1e-12, 0)
-- no arch: the figures stay, the references go
local none = t:memcpy_summary{ platform = "none" }
T.check(none[1].reference_gbps == nil and none[1].percent_of_reference == nil, "platform none: no reference")
T.close(none[1].achieved_gbps, 10, "platform none: the bandwidth stays", 1e-12, 0)

local okp, errp = pcall(t.memcpy_summary, t, { platform = 3 })
T.check(not okp and tostring(errp):find("platform must be a string, not a number", 1, true), "platform = 3 refused: "
  .. tostring(errp))

local rep = t:report{}
local sh = rep.memcpy_summary
T.check(sh ~= nil, "memcpy_summary sheet written")
if sh then
  T.eq(sh:nrows(), 7, "sheet rows")
  T.eq(sh:get(2, "host_memory"), "pinned", "sheet host memory")
  T.close(sh:get(2, "percent_of_reference"), 62.5, "sheet share of the link", 1e-12, 0)
  T.close(sh:get(1, "mean_transfer_mib"), 4000000 / 1048576, "sheet mean transfer", 1e-12, 0)
end
T.check(t:report{ memcpy_summary = false }.memcpy_summary == nil, "memcpy_summary = false omits it")

-- the command line: written by default, omitted with --no-memcpy-summary
for _, flag in ipairs({ "", "--no-memcpy-summary" }) do
  local out = dir .. "/cli" .. #flag
  local okc, rc, _, se = T.run(T.q(T.tracelens_bin()) .. " report -q --no-xlsx --platform none " .. flag .. " "
    .. T.q(path) .. " -o " .. T.q(out))
  T.check(okc, "report " .. flag .. " exit " .. tostring(rc) .. ": " .. tostring(se))
  T.eq(T.file_exists(out .. "/perf_report_csvs/memcpy_summary.csv"), flag == "", "memcpy_summary.csv with [" .. flag .. "]")
end

-- A shared trace ------------------------------------------------------------------
local shared = data and data .. "/hta/critical_path/alexnet/benchmark_result_2869224_1695835535_trace.json.gz"
if shared and T.file_exists(shared) then
  local okz, code, text = T.run("gzip -dc " .. T.q(shared))
  T.check(okz, "gzip -dc exit " .. tostring(code))
  local doc = cjson.decode(text)
  local function nsv(v)
    local w = math.floor(v)
    return w * 1000 + math.floor((v - w) * 1000 + 0.5)
  end
  local want = {}
  for _, e in ipairs(doc.traceEvents) do
    if (e.cat == "gpu_memcpy" or e.cat == "gpu_memset") and type(e.ts) == "number" then
      local key = e.cat == "gpu_memset" and "memset/" or e.name:find("HtoD", 1, true)
        and ("H2D/" .. (e.name:find("Pageable", 1, true) and "pageable" or e.name:find("Pinned", 1, true) and "pinned"
        or "not said")) or e.name
      local w = want[key] or { n = 0, dur = 0, nb = 0, bytes = 0, bns = 0 }
      want[key] = w
      w.n, w.dur = w.n + 1, w.dur + nsv(e.dur)
      local b = math.tointeger(e.args.bytes)
      if b and b > 0 then
        w.nb, w.bytes, w.bns = w.nb + 1, w.bytes + b, w.bns + nsv(e.dur)
      end
    end
  end
  local arch = json.decode(T.read_file(root .. "/arch/A100.json"))
  local got = tl.load(shared):memcpy_summary()
  local n = 0
  for _ in pairs(want) do n = n + 1 end
  T.eq(#got, n, "shared: groups")
  for _, g in ipairs(got) do
    local key = g.direction .. "/" .. (g.host_memory or "")
    local w = want[key]
    if T.check(w ~= nil, "shared: group " .. key .. " expected") then
      T.eq(g.count, w.n, "shared: " .. key .. " count")
      T.close(g.time_us, w.dur / 1000, "shared: " .. key .. " time", 1e-12, 1e-9)
      T.eq(g.bytes, w.bytes, "shared: " .. key .. " bytes")
      local gbps = w.bytes / w.bns
      T.close(g.achieved_gbps, gbps, "shared: " .. key .. " GB/s", 1e-12, 0)
      local ref = key:sub(1, 4) == "H2D/" and arch.host_link_gbps or arch.mem_bw_gbps
      T.close(g.reference_gbps, ref, "shared: " .. key .. " reference (A100)", 0, 0)
      T.close(g.percent_of_reference, gbps / ref * 100, "shared: " .. key .. " share", 1e-12, 0)
    end
  end
  -- the report's sheet holds the same rows
  local out = dir .. "/r"
  local okr, rc, _, se = T.run(T.q(T.tracelens_bin()) .. " report -q --no-xlsx " .. T.q(shared) .. " -o " .. T.q(out))
  T.check(okr, "report exit " .. tostring(rc) .. ": " .. tostring(se))
  local rows = T.csv_records(out .. "/perf_report_csvs/memcpy_summary.csv")
  T.eq(#rows, n, "shared: sheet rows")
  for _, r in ipairs(rows) do
    local key = r.direction .. "/" .. (r.host_memory or "")
    local w = want[key]
    if T.check(w ~= nil, "shared: sheet group " .. key) then
      T.eq(tonumber(r.count), w.n, "shared: sheet " .. key .. " count")
      T.eq(tonumber(r.bytes), w.bytes, "shared: sheet " .. key .. " bytes")
      T.close(tonumber(r.time_ms), w.dur / 1e6, "shared: sheet " .. key .. " time", 1e-12, 1e-12)
      T.close(tonumber(r.achieved_gbps), w.bytes / w.bns, "shared: sheet " .. key .. " GB/s", 1e-12, 0)
    end
  end
else
  print("note: ../shared/data not found: the shared-trace copies are skipped")
end
T.rmrf(dir)
T.finish()

-- test_gz_segments.lua: a .json.gz trace scanned by several threads in
-- segments of its decompressed bytes (tl.load's threads > 1, the default for
-- gzip files of 8 MB and more) gives what the sequential scan gives: every
-- event's fields and args, in the same order, on every gzip trace of
-- ../shared/data, and the same report (the ops_summary and kernel_summary
-- sheets).
local root, shared = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

if not shared or not T.dir_exists(shared .. "/traces") then T.skip("no ../shared/data traces") end

local files = {}
for _, pat in ipairs({"/traces/*/*.json.gz", "/hta/*/*.json.gz", "/hta/*/*/*.json.gz", "/inference/*/*.json.gz",
                      "/multirank/world8/ranks/rank0_trace.json.gz"}) do
  for _, f in ipairs(T.glob(shared .. pat)) do files[#files + 1] = f end
end
T.check(#files >= 10, "gzip traces found: " .. #files)

local function args_text(a)
  if a == nil then return "-" end
  local keys = {}
  for k in pairs(a) do keys[#keys + 1] = k end
  table.sort(keys)
  local out = {}
  for _, k in ipairs(keys) do
    local v = a[k]
    out[#out + 1] = k .. "=" .. (type(v) == "table" and "<table>" or tostring(v))
  end
  return table.concat(out, ";")
end

local function table_text(t)
  local rows = {}
  for i = 1, #t do
    local r = t:row(i)
    local cells = {}
    for _, c in ipairs(t:columns()) do cells[#cells + 1] = tostring(r[c]) end
    rows[#rows + 1] = table.concat(cells, "\t")
  end
  return table.concat(rows, "\n")
end

for _, f in ipairs(files) do
  local ok1, a = pcall(tl.load, f, {threads = 1})
  local ok2, b = pcall(tl.load, f, {threads = 3})
  T.eq(ok2, ok1, f .. ": loads the same")
  if ok1 and ok2 then
    T.eq(#b, #a, f .. ": events")
    local ia, ib = a:events(), b:events()
    local bad = 0
    while true do
      local x, y = ia(), ib()
      if not x or not y then
        T.check(not x and not y, f .. ": same length")
        break
      end
      if x.name ~= y.name or x.cat ~= y.cat or x.ph ~= y.ph or x.ts_ns ~= y.ts_ns or x.dur_ns ~= y.dur_ns or
          x.pid ~= y.pid or x.tid ~= y.tid or x.id ~= y.id or args_text(x.args) ~= args_text(y.args) then
        bad = bad + 1
        if bad == 1 then T.check(false, f .. ": event " .. x.uid .. " differs") end
      end
    end
    T.eq(bad, 0, f .. ": events that differ")
    -- segments are of 2 MiB: a trace of two or more is scanned in parts
    T.eq(b:info().scan_parts > 1 or a:info().json_bytes < 5e6, true, f .. ": scanned in segments")
    for _, sheet in ipairs({"ops_summary", "kernel_summary"}) do
      local okta, ta = pcall(a.table, a, sheet)
      local oktb, tb = pcall(b.table, b, sheet)
      T.eq(oktb, okta, f .. ": " .. sheet .. " builds the same")
      if okta and oktb then T.eq(table_text(tb), table_text(ta), f .. ": " .. sheet) end
    end
  elseif not ok1 then
    T.eq(tostring(b), tostring(a), f .. ": the same error")
  end
end
T.finish()

-- testlib.lua — helpers shared by the Lua tests: checks that count, CSV
-- reading, tolerant numeric comparison (perf-report spec §0.3), running the
-- tracelens binary, and the closing "N passed, N failed" line.
local M = {}

local passed, failed = 0, 0

function M.check(cond, msg)
  if cond then
    passed = passed + 1
  else
    failed = failed + 1
    io.stderr:write("FAIL: ", tostring(msg), "\n")
  end
  return cond
end

function M.eq(a, b, what)
  return M.check(a == b, string.format("%s: got %s, expected %s", what, tostring(a), tostring(b)))
end

-- |a - b| <= abs or |a - b| <= rel * |b|
function M.close(a, b, what, rel, abs)
  rel, abs = rel or 1e-4, abs or 1e-3
  local ok = a ~= nil and b ~= nil and (math.abs(a - b) <= abs or math.abs(a - b) <= rel * math.abs(b))
  return M.check(ok, string.format("%s: got %s, expected %s", what, tostring(a), tostring(b)))
end

function M.finish()
  print(string.format("%d passed, %d failed", passed, failed))
  os.exit(failed == 0 and 0 or 1)
end

function M.skip(why)
  print("SKIP: " .. why)
  os.exit(77)
end

-- Parses one CSV line (RFC 4180 quoting); returns a list of fields.
local function parse_line(line)
  local fields, i, n = {}, 1, #line
  while i <= n + 1 do
    if line:sub(i, i) == '"' then
      local buf, j = {}, i + 1
      while true do
        local c = line:sub(j, j)
        if c == '"' then
          if line:sub(j + 1, j + 1) == '"' then buf[#buf + 1] = '"'; j = j + 2
          else j = j + 1; break end
        elseif c == "" then break
        else buf[#buf + 1] = c; j = j + 1 end
      end
      fields[#fields + 1] = table.concat(buf)
      i = j + 1
    else
      local j = line:find(",", i, true) or (n + 1)
      fields[#fields + 1] = line:sub(i, j - 1)
      i = j + 1
    end
  end
  return fields
end

-- Reads a CSV file: returns header (list) and rows (list of lists).
function M.read_csv(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  local lines, cur = {}, nil
  for line in (text .. "\n"):gmatch("(.-)\r?\n") do
    if cur then cur = cur .. "\n" .. line else cur = line end
    local _, q = cur:gsub('"', "")
    if q % 2 == 0 then lines[#lines + 1] = cur; cur = nil end
  end
  while #lines > 0 and lines[#lines] == "" do lines[#lines] = nil end
  local header = parse_line(lines[1] or "")
  local rows = {}
  for k = 2, #lines do rows[#rows + 1] = parse_line(lines[k]) end
  return header, rows
end

-- The bytes of a file, or nil when it cannot be read.
function M.read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

-- A CSV file as records: one table per row, column name -> text, empty
-- cells left out.
function M.csv_records(path)
  local header, rows = M.read_csv(path)
  local out = {}
  for i, r in ipairs(rows) do
    local o = {}
    for j, h in ipairs(header) do
      if r[j] ~= "" then o[h] = r[j] end
    end
    out[i] = o
  end
  return out
end

-- The non-empty lines of a file.
function M.lines(path)
  local out = {}
  for l in assert(M.read_file(path), path):gmatch("[^\n]+") do out[#out + 1] = l end
  return out
end

function M.file_exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

function M.dir_exists(path)
  return os.execute("test -d '" .. path .. "'") == true
end

-- Shell-quotes a string.
function M.q(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- Runs a command; returns ok, exit code, stdout, stderr.
function M.run(cmd)
  local tmp = os.tmpname()
  local p = io.popen(cmd .. " 2>" .. tmp, "r")
  local out = p:read("a")
  local ok, _, code = p:close()
  local f = io.open(tmp, "rb")
  local err = f and f:read("a") or ""
  if f then f:close() end
  os.remove(tmp)
  return ok, code, out, err
end

function M.tmpdir()
  local p = io.popen("mktemp -d")
  local d = p:read("l")
  p:close()
  return d
end

function M.rmrf(d)
  if d and d:match("^/tmp/") then os.execute("rm -rf " .. M.q(d)) end
end

-- The tracelens binary running this script (via /proc of this process).
function M.tracelens_bin()
  local f = io.open("/proc/self/stat")
  local pid = f and f:read("l"):match("^(%d+)")
  if f then f:close() end
  local p = io.popen("readlink /proc/" .. pid .. "/exe")
  local bin = p:read("l")
  p:close()
  return bin
end

-- Lists files under dir matching a shell glob.
function M.glob(pattern)
  local out = {}
  local p = io.popen("ls -d " .. pattern .. " 2>/dev/null")
  for line in p:lines() do out[#out + 1] = line end
  p:close()
  table.sort(out)
  return out
end

--- One complete ("X") trace event as JSON text; args: key -> JSON text of
--- the value (written sorted by key); pid and tid default to 1.
function M.x_event(cat, name, ts, dur, args, pid, tid)
  local a = {}
  for k, v in pairs(args or {}) do a[#a + 1] = string.format("%q:%s", k, v) end
  table.sort(a)
  return string.format('{"ph":"X","cat":"%s","name":%q,"pid":%d,"tid":%d,"ts":%d,"dur":%d,"args":{%s}}', cat,
    name, pid or 1, tid or 1, ts, dur, table.concat(a, ","))
end

--- One ac2g flow event as JSON text: ph "s" (at the launch) or "f" (at the
--- kernel, binding to the enclosing slice).
function M.flow_event(ph, id, pid, tid, ts)
  return string.format('{"ph":"%s","cat":"ac2g","name":"ac2g","id":%d,"pid":%d,"tid":%d,"ts":%d%s}', ph, id, pid, tid,
    ts, ph == "f" and ',"bp":"e"' or "")
end

--- Writes a trace file whose traceEvents are the given JSON texts; returns path.
function M.write_trace(path, events)
  local f = assert(io.open(path, "w"))
  f:write('{"traceEvents":[', table.concat(events, ",\n"), "]}")
  f:close()
  return path
end

return M

-- Every trace under ../shared/data analysed as a new user would (issue 11,
-- "Invariants, tested on every real trace"): the orchestrator with no
-- --platform and the shipped rules, then `tracelens validate OUT` with every
-- level, the consistency level (Level 4, docs/validate.md) included.
--
-- The traces: traces/ (recursively), hta/ (recursively), the agent cases'
-- traces (each alone, standalone scope), inference/ (recursively) and one
-- rank of each multirank/ case (rank 0); reference outputs (ref/, *_csvs/)
-- and files that are not traces (execution_details.json) are left out. A
-- missing folder is skipped; no folder at all skips the test.
--
-- A trace with GPU work must give exit 0 and a passing validate. A trace
-- with no GPU work (NO_GPU) must give one line `tracelens: ...` on stderr
-- and exit 1. EXPECTED_FAILURES lists the traces that still fail because an
-- item of issue 11 is not done: each names the error it gives today and the
-- item that fixes it. The test fails when an unlisted trace fails, when a
-- listed trace fails otherwise than listed, and when a listed trace passes
-- (remove it from the list then: the list stays honest).
--
-- Run time: 7-20 s in release (43 traces; measured alone and under ctest -j),
-- so the whole sweep runs by default.
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

-- Traces without any GPU event (kernel, memcpy, memset): ../shared/data/hta/README.md.
local NO_GPU = {
  ["hta/cpu_only/rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz"] = "no GPU events at all",
}

-- trace -> {error = a substring of today's output on stderr, item = the issue 11 item that fixes it}.
-- (Item 2 made hta/call_stack/backward_thread.json and hta/trace_filter/sampled_rank-{0,1}
-- pass; they were listed with "no GPU events found in the trace that a launch links to".)
local EXPECTED_FAILURES = {
}

local function lines_of(cmd)
  local out = {}
  local p = io.popen(cmd .. " 2>/dev/null")
  for l in p:lines() do out[#out + 1] = l end
  p:close()
  return out
end

local function is_trace_name(name)
  return (name:match("%.json$") or name:match("%.json%.gz$")) and name ~= "execution_details.json"
end

-- The traces, as paths relative to shared, sorted.
local function traces()
  local list = {}
  local function add_tree(sub, depth)
    if not T.dir_exists(shared .. "/" .. sub) then return end
    local cmd = string.format("cd %s && find %s %s -type f", T.q(shared), T.q(sub), depth or "")
    for _, rel in ipairs(lines_of(cmd)) do
      local name = rel:match("[^/]+$")
      if is_trace_name(name) and not rel:find("/ref/", 1, true) and not rel:find("_csvs/", 1, true) then
        list[#list + 1] = rel
      end
    end
  end
  add_tree("traces")
  add_tree("hta")
  add_tree("inference")
  for _, scope in ipairs({ "standalone", "comparative" }) do
    for _, case in ipairs(lines_of("ls " .. T.q(shared .. "/agent_cases/" .. scope))) do
      for _, n in ipairs({ "trace.json", "trace1.json", "trace2.json" }) do
        local rel = "agent_cases/" .. scope .. "/" .. case .. "/" .. n
        if T.file_exists(shared .. "/" .. rel) then list[#list + 1] = rel end
      end
    end
  end
  for _, case in ipairs(lines_of("ls " .. T.q(shared .. "/multirank"))) do
    local rel = "multirank/" .. case .. "/ranks/rank0_trace.json.gz"
    if T.file_exists(shared .. "/" .. rel) then list[#list + 1] = rel end
  end
  table.sort(list)
  return list
end

-- The first overlong name in an analysis.md: a backticked text over 160
-- characters or a table cell part (between <br>s) over 200 (a full kernel
-- name runs to thousands; the text names kernels by their short names,
-- tracelens.kernel_name); nil when there is none. The chart's image line is
-- not text.
local function overlong(md)
  local n = 0
  for line in (md .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if not line:find("data:image/", 1, true) then
      for span in line:gmatch("`([^`]*)`") do
        if (utf8.len(span) or #span) > 160 then return string.format("line %d: `%s…`", n, span:sub(1, 80)) end
      end
      if line:sub(1, 1) == "|" then
        for cell in line:gmatch("|([^|]*)") do
          for part in (cell .. "<br>"):gmatch("(.-)<br>") do
            if (utf8.len(part) or #part) > 200 then return string.format("line %d: | %s…", n, part:sub(1, 80)) end
          end
        end
      end
    end
  end
end

local list = traces()
if #list == 0 then T.skip("no traces under " .. shared) end

local tmp = T.tmpdir()
local t0 = os.time()
local seen_listed = {}
for i, rel in ipairs(list) do
  local out = string.format("%s/%d", tmp, i)
  local ok, code, stdout, stderr = T.run(string.format("%s run orchestrator.lua %s -o %s -q", T.q(bin),
    T.q(shared .. "/" .. rel), T.q(out)))
  local vok, vcode, vout = false, nil, ""
  if ok then vok, vcode, vout = T.run(string.format("%s validate %s", T.q(bin), T.q(out))) end
  local passed, why
  if NO_GPU[rel] then
    -- no GPU work: one line `tracelens: ...` on stderr, nothing on stdout, exit 1
    passed = not ok and code == 1 and stdout == "" and stderr:match("^tracelens: [^\n]+\n$") ~= nil
    why = string.format("(%s) expected one line 'tracelens: ...' on stderr and exit 1, got exit %s, stdout %q, "
      .. "stderr %q", NO_GPU[rel], tostring(code), stdout, stderr)
  else
    passed = ok and vok
    why = not ok and string.format("exit %s: %s%s", tostring(code), stdout, stderr)
      or not vok and string.format("validate exit %s:\n%s", tostring(vcode), vout) or ""
    local long = ok and overlong(tl.fs.read_file(out .. "/analysis.md") or "")
    if long then passed, why = false, "an overlong name in analysis.md, " .. long end
  end
  local e = EXPECTED_FAILURES[rel]
  if e then
    seen_listed[rel] = true
    if passed then
      T.check(false, string.format("%s now passes: remove it from EXPECTED_FAILURES (%s)", rel, e.item))
    else
      T.check(stderr:find(e.error, 1, true) ~= nil,
        string.format("%s fails otherwise than listed (expected '%s', fixed by %s): %s", rel, e.error, e.item, why))
    end
  else
    T.check(passed, string.format("%s: %s", rel, why))
  end
end
for rel in pairs(EXPECTED_FAILURES) do
  T.check(seen_listed[rel] or not T.file_exists(shared .. "/" .. rel) or false,
    rel .. ": listed in EXPECTED_FAILURES but not swept")
end
print(string.format("swept %d traces in %d s", #list, os.time() - t0))
T.rmrf(tmp)
T.finish()

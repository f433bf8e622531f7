-- A rule selects rows of any sheet (docs/rules.md "Selecting from another
-- sheet"): `sheet = "kernels"` is one row per GPU kernel launch, so "every
-- kernel over 100 µs" is exact; another sheet is mapped to the operation
-- signatures through the columns it shares with unified_perf_summary. The
-- findings are about the launching operations; a rule's Top Operations row
-- shows its operations' time (never "—" ranked first), and a sheet that
-- names no operation fails the rule with the reason under ## Warnings.
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local json = require "tracelens.json"
local rule = require "tracelens.rule"

local trace_path = root .. "/examples/demo_trace.json"
local tmp = T.tmpdir()
local LIMIT_US = 100

-- the kernels sheet: one row per kernel event, each under the op the report
-- counts it under
local trace = tl.load(trace_path)
local rows, parents = rule.kernel_rows(trace)
local n = 0
for _ in trace:events({ cat = "kernel" }) do n = n + 1 end
T.eq(#rows, n, "one kernels row per kernel event")
local long = 0
for i, r in ipairs(rows) do
  T.check(type(r["Kernel name"]) == "string" and type(r["Kernel duration (µs)"]) == "number", "row " .. i .. " fields")
  T.eq(r["Kernel duration (us)"], r["Kernel duration (µs)"], "ASCII alias of the duration")
  if parents[i] then T.eq(r["Parent cpu_op"], parents[i].name, "parent op named") end
  if r["Kernel duration (µs)"] > LIMIT_US then long = long + 1 end
end
T.check(long > 0 and long < #rows, "the demo trace has kernels on both sides of " .. LIMIT_US .. " µs")
-- expected, from the C-built kernel_summary: the parent ops of the kernels
-- over the limit that have a row in unified_perf_summary
local in_unified, expected = {}, {}
for _, r in trace:table("unified_perf_summary"):rows() do in_unified[r.name] = true end
for _, r in trace:table("kernel_summary"):rows() do
  if r["Kernel duration (µs)_max"] > LIMIT_US and in_unified[r["Parent cpu_op"]] then expected[r["Parent cpu_op"]] = true end
end

local rules = tmp .. "/rules"
tl.fs.mkdir(rules)
local ADVICE = [[
  advice = function(v) return { { action = "Look at the long kernels.", mechanism = "They hold the time." } } end,
]]
tl.fs.write_file(rules .. "/long_kernels.lua", [[
local rule = require "tracelens.rule"
return rule.run(..., {
  sheet = "kernels",
  select = function(k) return k["Kernel duration (us)"] > ]] .. LIMIT_US .. [[ end,
]] .. ADVICE .. [[
})
]])
tl.fs.write_file(rules .. "/long_by_summary.lua", [[
local rule = require "tracelens.rule"
return rule.run(..., {
  sheet = "kernel_summary",
  select = function(r) return r["Kernel duration (µs)_max"] > ]] .. LIMIT_US .. [[ end,
]] .. ADVICE .. [[
})
]])
tl.fs.write_file(rules .. "/no_ops_sheet.lua", [[
local rule = require "tracelens.rule"
return rule.run(..., {
  sheet = "gpu_timeline",
  select = function() return true end,
]] .. ADVICE .. [[
})
]])

local out = tmp .. "/out"
local ok, code, stdout, stderr = T.run(string.format("cd %s && %s run orchestrator.lua %s -o %s --rules %s -q",
  T.q(root), T.q(bin), T.q(trace_path), T.q(out), T.q(rules)))
T.check(ok, "orchestrator with the rules: exit " .. tostring(code) .. "\n" .. stdout .. stderr)

local function op_names(rule_name)
  local m = json.decode(T.read_file(out .. "/category_data/" .. rule_name .. "_metrics.json") or "{}")
  local names = {}
  for _, op in ipairs(m.operations or {}) do names[op.name] = true end
  return names, m
end
local function same_set(a, b, what)
  local ka, kb = {}, {}
  for k in pairs(a) do ka[#ka + 1] = k end
  for k in pairs(b) do kb[#kb + 1] = k end
  table.sort(ka)
  table.sort(kb)
  T.eq(table.concat(ka, ", "), table.concat(kb, ", "), what)
end
local picked, metrics = op_names("long_kernels")
same_set(picked, expected, "sheet = kernels: the operations that launched a kernel over " .. LIMIT_US .. " µs")
T.check((metrics.total_time_ms or 0) > 0, "the rule's operations have kernel time")
same_set((op_names("long_by_summary")), expected, "sheet = kernel_summary: mapped on Parent cpu_op and shapes")

local md = T.read_file(out .. "/analysis.md") or ""
T.check(md:find("no_ops_sheet", 1, true) and md:find('sheet "gpu_timeline" has no column naming the operation', 1, true),
  "a sheet without an operation column: the rule fails with the reason under ## Warnings")
-- the rule rows of Top Operations carry their operations' time; no "—" time
local _, _, top = md:find("<!%-%- impact%-begin kind=top_ops %-%->(.-)<!%-%- impact%-end %-%->")
T.check(top ~= nil, "Top Operations table")
local rule_row
for line in (top or ""):gmatch("[^\n]+") do
  local cells = {}
  for c in line:gmatch("|%s*([^|]-)%s*|") do cells[#cells + 1] = c end
  if line:find("| long_kernels |", 1, true) then rule_row = line end
  if tonumber(cells[1]) then T.check(cells[3] ~= "—", "no Top Operations row without a time: " .. line) end
end
T.check(rule_row ~= nil, "the rule has a Top Operations row")
if rule_row then
  T.check(rule_row:find("| " .. json.number_text(metrics.total_time_ms) .. " | — |", 1, true),
    "the rule's row: its operations' time, no share of the 100%: " .. rule_row)
end
local vok, vcode, vout, verr = T.run(string.format("%s validate %s", T.q(bin), T.q(out)))
T.check(vok, "tracelens validate passes: " .. vout .. verr)

T.finish()

-- tl.parallel: task order, argument and result passing (trace handles
-- included), errors with file:line and traceback, time-out and memory cap
-- that fail one task only, the sandbox of task states, and concurrency.
local root = arg[1]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local trace = tl.load(root .. "/examples/demo_trace.json")
local busy = trace:timeline().busy_time

local tasks = {
  {code = "local t, k = ... return {n = #t, busy = t:timeline().busy_time, k = k}", args = {trace, "x"}},
  {code = "return 1 +", name = "=broken"},
  {code = "local a = nil\nreturn a.b", name = "@agent_nil.lua"},
  {code = "while true do end", name = "=spin"},
  {code = "local t = {} for i = 1, 1e8 do t[i] = i end return #t", name = "=hog"},
  {code = "return {os = os.execute, io = io, dofile = dofile, loadfile = loadfile, clock = type(os.clock)}"},
  {code = "return require('cjson').encode({1, 2})"},
  {code = "local ok, f, e = pcall(load, string.dump(function() end)) return tostring(ok) .. ':' .. type(f) .. ':' .. tostring(e)"},
  {code = "local e = ... return {name = e.name, uid = e.uid, launcher = e:launcher() and e:launcher().name}",
   args = {trace:node(806)}},
  {script = root .. "/tests/lua/parallel_task.lua", args = {trace, 3}},
  {code = "return function() end"},
}
local r = tl.parallel(tasks, {timeout = 2, memory_mb = 64})
T.eq(#r, #tasks, "one result per task")
T.check(r[1].ok, "task 1 ok: " .. tostring(r[1].error))
T.eq(r[1].value and r[1].value.n, #trace, "trace handle passes through args")
T.eq(r[1].value and r[1].value.busy, busy, "same timeline in a task")
T.eq(r[1].value and r[1].value.k, "x", "plain args pass")
T.check(not r[2].ok and r[2].error:find("broken:1:"), "syntax error has file:line: " .. tostring(r[2].error))
T.check(not r[3].ok and r[3].error:find("agent_nil.lua:2:"), "runtime error has file:line: " .. tostring(r[3].error))
T.check(r[3].traceback and r[3].traceback:find("stack traceback"), "runtime error has a traceback")
T.check(not r[4].ok and r[4].error:find("time limit"), "time-out stops one task: " .. tostring(r[4].error))
T.check(not r[5].ok and r[5].error:find("memory"), "memory cap stops one task: " .. tostring(r[5].error))
T.check(r[6].ok, "sandbox probe ran: " .. tostring(r[6].error))
if r[6].ok then
  T.eq(r[6].value.os, nil, "no os.execute in tasks")
  T.eq(r[6].value.io, nil, "no io in tasks")
  T.eq(r[6].value.dofile, nil, "no dofile in tasks")
  T.eq(r[6].value.loadfile, nil, "no loadfile in tasks")
  T.eq(r[6].value.clock, "function", "os.clock in tasks")
end
T.eq(r[7].value, "[1,2]", "cjson preloaded in tasks")
T.check(r[8].ok and r[8].value:find("^true:nil:.*binary chunk") ~= nil, "binary chunks refused: " .. tostring(r[8].value))
local lr = tl.parallel({{code = "return load('return 40 + 2')()"}})
T.check(lr[1].ok and lr[1].value == 42, "load of a text chunk in a task: " .. tostring(lr[1].error))
T.eq(r[9].value and r[9].value.uid, 806, "event views pass through args")
T.eq(r[9].value and r[9].value.launcher, trace:node(806):launcher().name, "launcher inside a task")
T.check(r[10].ok and r[10].value == 3 * #trace, "script task with args: " .. tostring(r[10].error))
T.check(not r[11].ok and r[11].error:find("function"), "functions cannot be returned: " .. tostring(r[11].error))

-- report Tables are shared with tasks, not copied (read-only views)
local ops = trace:table("ops_summary")
local rt = tl.parallel({
  {code = "local t = ... return {n = #t, first = t:get(1, 'name'), cols = #t:columns(), back = t}", args = {ops}},
  {code = "local t = ... return #t:filter(function(r) return r.Count > 1 end)", args = {ops}},
})
T.check(rt[1].ok, "Table passed to a task: " .. tostring(rt[1].error))
T.eq(rt[1].value and rt[1].value.n, #ops, "rows seen in the task")
T.eq(rt[1].value and rt[1].value.first, ops:get(1, "name"), "cells seen in the task")
T.eq(rt[1].value and rt[1].value.cols, #ops:columns(), "columns seen in the task")
T.eq(rt[1].value and rt[1].value.back and #rt[1].value.back, #ops, "a Table comes back from a task")
local multi = 0
for _, r in ops:rows() do if r.Count > 1 then multi = multi + 1 end end
T.eq(rt[2].value, multi, "filter inside a task")

-- bad task specs are usage errors of tl.parallel itself
T.check(not pcall(tl.parallel, {{code = "return 1", script = "x"}}), "code and script together refused")
T.check(not pcall(tl.parallel, {42}), "non-table task refused")

-- tasks run concurrently: with 2 threads the second task starts before the
-- first finishes (monotonic start/finish times of each task)
-- (up to 3 tries: on a machine busy with other tests a run can be serialised)
local work = {code = "local x = 0 for i = 1, 2e7 do x = x + i % 7 end return x"}
local rr, overlap
for _ = 1, 3 do
  rr = tl.parallel({work, work}, {jobs = 2})
  overlap = rr[2].started < rr[1].finished and rr[1].started < rr[2].finished
  if overlap then break end
end
T.check(rr[1].ok and rr[2].ok, "workers ran")
T.check(overlap, string.format("2 threads overlap: [%.3f, %.3f] and [%.3f, %.3f]", rr[1].started, rr[1].finished,
  rr[2].started, rr[2].finished))
rr = tl.parallel({work, work}, {jobs = 1})
T.check(rr[2].started >= rr[1].finished, "1 thread runs tasks one after the other")

-- a module required twice in a task state is loaded once (the same table:
-- ordered JSON objects of tracelens.json depend on it)
rr = tl.parallel({{code = [[local a = require "tracelens.json"; return a == require "tracelens.json"]]}})
T.check(rr[1].ok and rr[1].value == true, "require caches modules in task states")
-- task states have no file system writes
rr = tl.parallel({{code = "return tl.fs == nil and io == nil"}})
T.check(rr[1].ok and rr[1].value == true, "no tl.fs and no io in task states")

-- a module the tasks of one call require is compiled once and loaded as
-- bytecode in the other states (chunk_cache.h): the same results, and its
-- errors keep their file and line (debug information kept) whichever state
-- compiled it; a module changed on disk between calls is read again
do
  local bin, dir = arg[3], T.tmpdir()
  tl.fs.write_file(dir .. "/cmod.lua", "local M = {}\nfunction M.f(x)\n  if x == 'boom' then error('exploded') end\n"
    .. "  return x * 2\nend\nreturn M\n")
  tl.fs.write_file(dir .. "/caller.lua", [[
local tasks = {}
for i = 1, 8 do
  tasks[i] = { code = "local m = require('cmod') return m.f(...)", args = { i % 4 == 0 and "boom" or i } }
end
local r = tl.parallel(tasks, { jobs = 2 })
for i = 1, 8 do print(i, r[i].ok, r[i].ok and r[i].value or r[i].error) end
tl.fs.write_file(arg[1] .. "/cmod.lua", "return { f = function(x) return x + 100 end }\n")
r = tl.parallel({ { code = "return require('cmod').f(...)", args = { 1 } }, { code = "return 0" } })
print("again", r[1].ok, r[1].value)
]])
  local ok, code, out, err = T.run(T.q(bin) .. " run " .. T.q(dir .. "/caller.lua") .. " " .. T.q(dir))
  T.check(ok, "module cache: caller runs (" .. tostring(code) .. ", " .. tostring(err) .. ")")
  local lines = {}
  for l in (out or ""):gmatch("[^\n]+") do lines[#lines + 1] = l end
  for i = 1, 8 do
    local want = i % 4 == 0 and string.format("%d\tfalse\t%s/cmod.lua:3: exploded", i, dir)
      or string.format("%d\ttrue\t%d", i, i * 2)
    T.eq(lines[i], want, "module cache: task " .. i)
  end
  T.eq(lines[9], "again\ttrue\t101", "module cache: a module changed on disk between calls is read again")
  T.rmrf(dir)
end
T.finish()

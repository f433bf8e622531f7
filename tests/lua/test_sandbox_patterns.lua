-- Patterns in task states honour the time limit (issue 10, item 6): Lua's
-- own matcher runs inside one C call where the count hook never fires, so
-- ("a"):rep(3000):find(("a-"):rep(12).."b") ran for hours past --timeout
-- (or, with the watchdog, was abandoned still running). Task states have
-- the pattern functions of src/lua/lpattern.c: the attacks below stop with
-- "time limit exceeded" themselves, soon after the limit, and ordinary
-- calls give what Lua's own functions give.
local root = arg[1]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local attacks = {
  {name = "=find", code = 'return ("a"):rep(3000):find(("a-"):rep(12).."b")'},
  {name = "=match", code = 'return string.match(("a"):rep(3000), ("a?"):rep(40)..("a"):rep(40).."b")'},
  {name = "=gsub", code = 'return ("a"):rep(3000):gsub(("a*"):rep(12).."b", "x")'},
  {name = "=gsub_fn", code = 'return ("a"):rep(3000):gsub("("..("a-"):rep(12)..")b", function(x) return x end)'},
  {name = "=gmatch", code = 'local n = 0 for _ in ("a"):rep(3000):gmatch(("a-"):rep(12).."b") do n = n + 1 end return n'},
  {name = "=balance", code = 'return ("("):rep(300000):find("%b()")'},
}
local r = tl.parallel(attacks, {timeout = 1})
for i, a in ipairs(attacks) do
  local x = r[i]
  local err = tostring(x.error)
  T.check(not x.ok and err:find("time limit exceeded", 1, true) and not err:find("abandoned", 1, true),
    a.name .. ": stopped by the time limit from inside the matcher: " .. err)
  T.check(x.finished - x.started < 2.5,
    string.format("%s: stopped within 2.5 s of its start (took %.2f s)", a.name, x.finished - x.started))
end

-- the same answers as Lua's own functions (this state has those)
local probe = [[
local out = {}
local function add(...)
  local t = table.pack(...)
  for i = 1, t.n do out[#out + 1] = math.type(t[i]) and ("#" .. t[i]) or tostring(t[i]) end
  out[#out + 1] = "|"
end
add(("hello world"):find("o w"))
add(("hello world"):find("o", -3))
add(string.find("a+b", "+", 1, true))
add(("key = val"):match("(%w+)%s*=%s*(%w+)"))
add(("key = val"):match("()=()"))
add(("  x y  "):gsub("^%s*(.-)%s*$", "[%1]"))
add(("abc"):gsub("", "-"))
add(("abc"):gsub("b*", "-"))
add(("THE (quick) fox"):gsub("%f[%a]%a+", function(w) return w:lower() end))
add(("$a $b $c"):gsub("%$(%w)", {a = 1, b = false}))
add(("x(a(b)c)y"):gsub("%b()", "", 1))
add(("abab"):match("(ab)%1"))
for a, b in ("k=v, x=y"):gmatch("(%w+)=(%w+)") do add(a, b) end
for w in ("one two three"):gmatch("%a+", 5) do add(w) end
add(pcall(string.find, "a", "(%1)"))
add(pcall(string.match, "a", "[a"))
add(pcall(string.gsub, "a", "a", "%2"))
add(pcall(string.match, ("a"):rep(300), ("a?"):rep(300)))
return table.concat(out, " ")
]]
local pr = tl.parallel({{code = probe}})
T.check(pr[1].ok, "probe task ran: " .. tostring(pr[1].error))
T.eq(pr[1].value, load(probe)(), "pattern results in a task")
T.finish()

--- tracelens.host_stretch — the longest host calls (python_function and
-- cpu_op events) inside stretches of a step in which the GPU has no work
-- (critical_path_md: a host-bound step), for the report's system section.
-- A call's time includes the calls nested in it; a wrapper (a call one of
-- whose direct sub-calls takes at least WRAPPER_SHARE of its time) is left
-- out for that sub-call, so a chain of wrappers is named once, by its
-- innermost call.
local M = {}

local CATS = { "python_function", "cpu_op" }
local WRAPPER_SHARE = 0.95

local function inside(ev, stretches)
  local a, d = ev.ts, ev.dur or 0
  if not a or d <= 0 then return false end
  for _, s in ipairs(stretches) do
    if a >= s[1] and a + d <= s[2] then return true end
  end
  return false
end

-- The calls inside the stretches, each with the largest duration of its direct sub-calls (same thread).
local function calls_in(trace, stretches)
  local calls = {}
  for _, cat in ipairs(CATS) do
    -- each stretch's events picked in C (a large trace has millions of host events)
    for _, st in ipairs(stretches) do
      for ev in trace:events({ cat = cat, within = st }) do
        if inside(ev, { st }) then
          calls[#calls + 1] = { name = ev.name, ts = ev.ts, us = ev.dur,
            thread = tostring(ev.pid) .. "/" .. tostring(ev.tid), child_us = 0 }
        end
      end
    end
  end
  table.sort(calls, function(x, y)
    if x.thread ~= y.thread then return x.thread < y.thread end
    if x.ts ~= y.ts then return x.ts < y.ts end
    return x.us > y.us
  end)
  local stack = {}
  for _, c in ipairs(calls) do
    local top = stack[#stack]
    while top and (top.thread ~= c.thread or c.ts >= top.ts + top.us) do
      stack[#stack] = nil
      top = stack[#stack]
    end
    if top then top.child_us = math.max(top.child_us, c.us) end
    stack[#stack + 1] = c
  end
  return calls
end

--- The n longest calls inside the stretches ({{from_us, to_us}, ...}),
--- wrappers left out, longest first: {{name =, us =}, ...}.
function M.longest(trace, stretches, n)
  local out = {}
  for _, c in ipairs(calls_in(trace, stretches)) do
    if c.child_us < WRAPPER_SHARE * c.us then out[#out + 1] = c end
  end
  table.sort(out, function(x, y)
    if x.us ~= y.us then return x.us > y.us end
    return x.ts < y.ts
  end)
  local top = {}
  for i = 1, math.min(n, #out) do top[i] = { name = out[i].name, us = out[i].us } end
  return top
end

return M

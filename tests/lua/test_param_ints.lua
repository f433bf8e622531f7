-- Numeric `param:` values are numbers in Lua: a text column named
-- "param: ..." whose every non-empty value is a plain integer ("1024",
-- "-3") reads as Lua integers through Table:get/row/rows/column/filter;
-- other param columns, other columns and the CSV text are unchanged.
local root = arg[1]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local trace = tl.load(root .. "/examples/demo_trace.json")
local g = trace:table("GEMM")
T.check(#g > 0, "the demo has GEMM rows")

-- every read path gives the same integer
local M1 = g:get(1, "param: M")
T.eq(math.type(M1), "integer", "get: param: M is an integer")
T.eq(M1, 1024, "get: its value")
T.eq(math.type(g:row(1)["param: N"]), "integer", "row: param: N is an integer")
T.eq(math.type(g:column("param: K")[1]), "integer", "column: param: K is an integer")
for i, r in g:rows() do
  T.eq(math.type(r["param: B"]), "integer", "rows: param: B of row " .. i)
end
local big = g:filter(function(r) return r["param: M"] >= 1024 end)
T.check(#big > 0, "filter: param values compare as numbers")

-- text params stay text
T.eq(g:get(1, "param: bias"), "False", "a boolean-like param stays text")
T.eq(g:get(1, "param: transpose"), "(True, False)", "a tuple param stays text")

-- the CSV keeps the reference's text form
local dir = T.tmpdir()
g:write_csv(dir .. "/gemm.csv")
local recs = T.csv_records(dir .. "/gemm.csv")
T.eq(recs[1]["param: M"], "1024", "CSV: param: M as text")
T.rmrf(dir)

-- the rule for a column: every non-empty value a plain integer
local function col(name, values)
  local n = #values
  local t = g:take({ 1, 1, 1, 1 }):select({ "name" })
  local v = setmetatable({}, { __len = function() return 4 end })
  for i = 1, n do v[i] = values[i] end
  return t:with_column(name, v):column(name)
end
local c = col("param: X", { "12", "-3", nil, "" })
T.eq(math.type(c[1]), "integer", "12")
T.eq(c[2], -3, "-3")
T.eq(c[3], nil, "a missing cell stays missing")
T.eq(c[4], "", "an empty cell stays empty")
c = col("param: X", { "12", "007" })
T.eq(c[1], "12", "a column with a leading-zero value stays text")
c = col("param: X", { "12", "1.5" })
T.eq(c[1], "12", "a column with a fraction stays text")
c = col("param: X", { "12", "-0" })
T.eq(c[1], "12", "-0 is not the reference's form")
c = col("param: X", { "9223372036854775807", "-9223372036854775808" })
T.eq(c[1], math.maxinteger, "the largest integer")
T.eq(c[2], math.mininteger, "the smallest integer")
c = col("param: X", { "9223372036854775808" })
T.eq(c[1], "9223372036854775808", "beyond 64 bits stays text")
c = col("param: X", { "1e3" })
T.eq(c[1], "1e3", "an exponent stays text")
c = col("param: X", { " 12" })
T.eq(c[1], " 12", "a space stays text")
c = col("paramX", { "12" })
T.eq(c[1], "12", "a column not named param: stays text")
c = col("param:X", { "12" })
T.eq(c[1], "12", "the prefix is \"param: \" with its space")

T.finish()

-- The comparative analysis (`run orchestrator.lua T1 --compare T2`), issue 11
-- item 8: a trace compared with itself shows the same names and numbers in
-- both columns (Top Bottleneck Category, Top Operations); trace 2's
-- categories carry their display names, not the manifest's lower-case ones;
-- a category only trace 2 has is listed under Top Operations.
--   1. a pair made here from examples/demo_trace.json: trace 1 with its
--      attention ops renamed (no SDPA categories), trace 2 the demo itself;
--   2. a shared trace compared with itself (skipped when absent).
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local tmp = T.tmpdir()
local demo = root .. "/examples/demo_trace.json"

local function analyse(t1, t2, name)
  local ok, code, _, err = T.run(string.format("cd %s && %s run %s %s --compare %s -q -o %s", T.q(tmp), T.q(bin),
    T.q(root .. "/lua/orchestrator.lua"), T.q(t1), T.q(t2), name))
  T.check(ok, name .. ": exit " .. tostring(code) .. ": " .. tostring(err))
  return T.read_file(tmp .. "/" .. name .. "/analysis.md") or ""
end

local function cells(line)
  local out = {}
  for c in line:gmatch("|([^|]*)") do out[#out + 1] = c:match("^%s*(.-)%s*$") end
  out[#out] = nil -- after the last bar
  return out
end

-- The Top Bottleneck Category cells of both traces.
local function bottleneck(text)
  local line = text:match("\n(| Top Bottleneck Category |[^\n]*)")
  if not line then return nil, nil end
  local c = cells(line)
  return c[2], c[3]
end

-- The Top Operations section: its text and the rows of its first table.
local function top_ops(text)
  local section = text:match("\n### Top Operations\n(.-)\n##") or ""
  local rows = {}
  for line in section:gmatch("[^\n]+") do
    if line:match("^| %d+ |") then rows[#rows + 1] = cells(line) end
  end
  return section, rows
end

local function check_self(text, what)
  local b1, b2 = bottleneck(text)
  T.check(b1 ~= nil and b1 == b2, what .. ": Top Bottleneck Category equal: " .. tostring(b1) .. " | " .. tostring(b2))
  local _, rows = top_ops(text)
  T.check(#rows > 0, what .. ": Top Operations rows")
  for _, r in ipairs(rows) do
    T.eq(r[3], r[4], what .. ": " .. r[2] .. ": Trace 1 and Trace 2 times")
    T.eq(r[7], "0.0", what .. ": " .. r[2] .. ": difference")
  end
end

-- 1. the synthetic pair
local src = assert(T.read_file(demo))
local renamed = src:gsub("aten::_scaled_dot_product_flash_attention", "my::attention")
  :gsub("aten::scaled_dot_product_attention", "my::attention")
  :gsub("aten::_flash_attention_forward", "my::attention")
  :gsub("aten::_flash_attention_backward", "my::attention_bwd")
  :gsub("ScaledDotProductFlashAttentionBackward0", "MyAttentionBackward0")
local t1 = tmp .. "/no_sdpa.json"
tl.fs.write_file(t1, renamed)

local demo_self = analyse(demo, demo, "demo_self")
check_self(demo_self, "demo with itself")

local pair = analyse(t1, demo, "pair")
local b1, b2 = bottleneck(pair)
T.eq(b2, b1, "pair: trace 2's top category under trace 1's name (both GEMM)")
local section, rows = top_ops(pair)
for _, r in ipairs(rows) do
  T.check(r[2] ~= "SDPA_fwd" and r[2] ~= "SDPA_bwd", "pair: trace 1 has no SDPA category: " .. r[2])
end
for _, name in ipairs({ "SDPA_fwd", "SDPA_bwd" }) do
  local line = section:match("\n(| " .. name .. " | — |[^\n]*)")
  T.check(line ~= nil, "pair: trace 2's " .. name .. " listed under Top Operations:\n" .. section)
  if line then
    local c = cells(line)
    T.check(tonumber(c[3]) and tonumber(c[3]) > 0, "pair: " .. name .. " trace 2 time: " .. line)
    T.eq(c[5], "+" .. c[3], "pair: " .. name .. " difference is its trace 2 time")
  end
end
T.check(not pair:find("| sdpa_", 1, true) and not pair:find("| gemm (", 1, true),
  "pair: no lower-case category names of trace 2")

-- 2. shared traces with themselves: bert-small ("GEMM (64.5%) | gemm (64.3%)"
-- in the issue) and Qwen, whose unlinked GPU work (30% of its GPU time) must
-- count in trace 2's column as in trace 1's
local bert = shared .. "/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz"
if T.file_exists(bert) then
  local text = analyse(bert, bert, "bert_self")
  check_self(text, "bert-small with itself")
  T.check(text:find("| Top Bottleneck Category | GEMM (", 1, true) ~= nil, "bert-small: GEMM in both columns")
  T.check(not text:find("only in Trace 2", 1, true), "bert-small: no category only in trace 2")
else
  print("skip: no " .. bert)
end
local qwen = shared .. "/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
if T.file_exists(qwen) then
  local text = analyse(qwen, qwen, "qwen_self")
  check_self(text, "Qwen with itself")
  for _, metric in ipairs({ "Total Time", "Compute %" }) do
    local line = text:match("\n(| " .. metric:gsub("%%", "%%%%") .. " |[^\n]*)")
    local c = line and cells(line) or {}
    T.check(c[2] ~= nil and c[2] == c[3], "Qwen with itself: " .. metric .. " equal: " .. tostring(line))
  end
else
  print("skip: no " .. qwen)
end

T.rmrf(tmp)
T.finish()

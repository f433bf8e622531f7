-- Statements inside analysis.md that must not contradict each other (issue 11
-- items 7 and 9):
--   1. an op named `execute` directly under `aten::_fused_adamw_` is reported
--      as the optimizer op (findings join, synthetic operations);
--   2. a Top Operations row without kernel time (a user rule's category) never
--      ranks above one with time (report_md, the bert golden inputs plus a
--      rule priority ranked first);
--   3. on the shared traces (skipped when absent): the icons mean the rank in
--      every section (🔴 P1, 🟡 P2, 🟢 after) and the legend says so; impact_score
--      is defined at its first use; no advice addressed to the tool's developers
--      ("Assign `…` to the … category"); no card says both "within the efficiency
--      expected" and "slower than expected"; every system card's Flagged table
--      flags something; on timesformer, the spatial TimesformerSelfAttention
--      fusion candidate is reported and the temporal one listed as not
--      reported, with its reason.
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local json = require "tracelens.json"
local F = require "tracelens.findings"
local report_md = require "tracelens.report_md"

local read = tl.fs.read_file

-- 1. `execute` under the fused optimizer ------------------------------------------------
do
  local chain = { "train.py(12): step", "torch/optim/adamw.py(80): step", "aten::_fused_adamw_", "execute",
    "void at::native::fused_adamw_kernel" }
  local ops = {
    { name = "execute", time_ms = 2.5, count = 10, percent_of_total = 40.0, call_chain = chain },
    { name = "aten::add", time_ms = 1.0, count = 4, percent_of_total = 16.0,
      call_chain = { "train.py(10): forward", "aten::add", "add_kernel" } },
  }
  local metrics = { operations = ops, category_findings = {
    { members = { { operation = "execute", time_ms = 2.5, estimate_method = "heuristic", percent_of_total = 40.0 } } },
    { members = { { operation = "aten::add", time_ms = 1.0, estimate_method = "heuristic", percent_of_total = 16.0 } } },
  } }
  local joined = F.join(metrics)
  local lead = joined[1][1].op
  T.eq(lead.name, "aten::_fused_adamw_", "execute is reported as the optimizer op that calls it")
  T.eq(lead.time_ms, 2.5, "the op's numbers are kept")
  T.eq(ops[1].name, "execute", "operations[] keeps the trace's name")
  T.eq(joined[2][1].op.name, "aten::add", "a namespaced op keeps its name")
  local callers = require("tracelens.prose").callers(lead)
  T.eq(callers[#callers], "torch/optim/adamw.py(80): step", "callers start above the optimizer op")
  T.eq(#require("tracelens.prose").same_layer_ops({ metrics = metrics }, lead), 0, "not its own neighbour")
end

-- 2. a row without time never ranks first ------------------------------------------------
local G = shared .. "/agent_golden/standalone/"
if T.dir_exists(G) then
  local manifest = json.decode(read(G .. "category_data/category_manifest.json"))
  local priority = json.decode(read(G .. "priority_data.json"))
  local list = json.arr({ json.obj("rank", 1, "category", "many_small_launches", "display_name", "many_small_launches",
    "impact_score", 50.0, "gpu_kernel_time_ms", json.null, "source", "rule") })
  for _, p in ipairs(priority.priorities) do
    p.rank = p.rank + 1
    list[#list + 1] = p
  end
  priority.priorities = list
  local s = report_md.render({ scope = "standalone", manifest = manifest, priority = priority,
    findings = { system = {}, compute = {} }, failed = {}, metrics = {}, model_info = {},
    arch = json.decode(read(root .. "/arch/MI300X.json")), platform = "MI300X", platform_note = "given" })
  local rows = {}
  for line in s:gmatch("[^\n]+") do
    if line:find("top-ops-row", 1, true) then rows[#rows + 1] = line end
  end
  T.eq(#rows, #list, "one Top Operations row per priority")
  T.check(rows[1] and not rows[1]:find("many_small_launches", 1, true) and rows[1]:match("^| 1 | "),
    "a row with time ranks first: " .. tostring(rows[1]))
  T.check(rows[#rows] and rows[#rows]:match("^| " .. #rows .. " | many_small_launches | — |"),
    "the row without time comes last, renumbered: " .. tostring(rows[#rows]))
else
  print("skip: no " .. G)
end

-- 3. the shared traces ---------------------------------------------------------------------
local TRACES = {
  timesformer = shared .. "/traces/h100/facebook_timesformer-base-finetuned-k400__1016002.json.gz",
  triton = shared .. "/traces/torch_compile_triton/trace.json.gz",
  owlv2 = shared .. "/traces/h100/google_owlv2-large-patch14-ensemble__1016001.json.gz",
}
local tmp = T.tmpdir()

local function analyse(name)
  local path = TRACES[name]
  if not T.file_exists(path) then
    print("skip: no " .. path)
    return nil
  end
  local out = tmp .. "/" .. name
  local ok, code, stdout, stderr = T.run(string.format("%s run orchestrator.lua %s -o %s -q", T.q(bin), T.q(path),
    T.q(out)))
  T.check(ok, name .. ": orchestrator exit " .. tostring(code) .. "\n" .. stdout .. stderr)
  return out, read(out .. "/analysis.md") or ""
end

-- The blocks of a document: heading line -> text up to the next heading of level 2-4.
local function blocks(s)
  local out, cur = {}, nil
  for line in (s .. "\n"):gmatch("(.-)\n") do
    if line:match("^#+ ") then
      cur = { head = line, body = "" }
      out[#out + 1] = cur
    elseif cur then
      cur.body = cur.body .. line .. "\n"
    end
  end
  return out
end

local function check_report(name, s)
  local legend = s:find("> **Legend:** in every section 🔴 marks P1, 🟡 P2 and 🟢 P3 onward", 1, true)
  T.check(legend ~= nil, name .. ": the icon legend")
  local first_card = s:find("\n### [^\n]* P1: ")
  T.check(legend and first_card and legend < first_card, name .. ": the legend comes before the first card")
  local def = s:find("impact_score: the estimated share of end-to-end GPU time", 1, true)
    or s:find("**impact_score:** the estimated share of end-to-end GPU time", 1, true)
  local first_use = s:find("impact_score", 1, true)
  T.check(def ~= nil and def - first_use < 200, name .. ": impact_score defined at its first use")
  -- icons by rank in every section
  local icons = { "🔴", "🟡" }
  for icon, n in s:gmatch("\n#+ (%S+) P(%d+): ") do
    T.eq(icon, icons[tonumber(n)] or "🟢", name .. ": P" .. n .. " icon is its rank")
  end
  T.check(not s:find("category so that analyzer", 1, true) and not s:find("Assign `", 1, true),
    name .. ": no advice addressed to the tool's developers")
  for _, b in ipairs(blocks(s)) do
    local text = b.head .. b.body
    T.check(not (text:find("within the efficiency expected", 1, true) and text:find("slower than expected", 1, true)),
      name .. ": 'within the efficiency expected' and 'slower than expected' in one card: " .. b.head)
    if b.body:find("| Flagged |", 1, true) then
      T.check(b.body:find("| true |", 1, true) ~= nil, name .. ": a system card flags something: " .. b.head)
    end
  end
end

local out, s = analyse("timesformer")
if out then
  check_report("timesformer", s)
  local kf = read(out .. "/system_findings/kernel_fusion_findings.md") or ""
  local line = kf:match("[^\n]*candidates? w[ae][sr]e? not reported:[^\n]*") or ""
  -- the spatial attention is reported (tests/lua/test_fusion_sequences.lua), the temporal one listed
  T.check(kf:find("### 🔴 P1: Unfused Attention", 1, true), "timesformer: the spatial attention is reported as P1")
  T.check(line:find("`TimesformerSelfAttention` (5 kernels, 12 of its 24 instances, 2.627 ms: under 2.0% of "
    .. "end-to-end time", 1, true), "timesformer: the temporal attention is listed with its reason: " .. line)
  T.check(line:find("under the 2.0% floor", 1, true), "timesformer: the floor is named")
  T.check(not s:find("Assign `aten::_softmax`", 1, true), "timesformer: no developer advice for aten::_softmax")
end
out, s = analyse("triton")
if out then check_report("torch_compile_triton", s) end
out, s = analyse("owlv2")
if out then
  check_report("owlv2", s)
  local kf = read(out .. "/system_findings/kernel_fusion_findings.md") or ""
  T.check(kf:find("### 🔴 P1: Unfused Attention", 1, true), "owlv2: the attention candidate is reported, icon by rank")
end

T.rmrf(tmp)
T.finish()

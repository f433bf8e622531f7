-- The compute-tier analyzers (agents/gemm.lua ... generic.lua) against the
-- findings-file contract (agents-and-report.md §2, §6.1):
--   1. the golden bert metrics (standalone and comparative) rendered by their
--      analyzer: structure, one card and one candidate block per finding in
--      rank order, markers equal to the metrics' numbers as written in the JSON
--      text, Data rows equal to members joined to operations (cells as written
--      in the JSON text), warning lines, no placeholders, Level 1;
--   2. synthetic metrics that drive each analyzer's rules (bound types,
--      patterns, paged attention, transposes, MoE stages, heuristic findings,
--      NO_DATA, ERROR);
--   3. every analyzer script run through tl.parallel on the agent-case traces,
--      its markers compared with the reference report's.
-- The expected values are read from the JSON text with a line reader of its
-- own (Python indent-2 layout), not through tracelens.json or the renderer.
local root, shared = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local json = require "tracelens.json"
local cjson = require "cjson"
local has_validate, validate = pcall(require, "tracelens.validate")

local DASH = "—"

local read = tl.fs.read_file

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local function lines_of(text)
  local out = {}
  for line in (text .. "\n"):gmatch("(.-)\r?\n") do out[#out + 1] = line end
  return out
end

-- JSON text reader --------------------------------------------------------------

-- A scalar token as written: strings unescaped, null as nil, numbers as text.
local function token(raw)
  raw = raw:gsub(",$", "")
  if raw == "null" then return nil end
  if raw:sub(1, 1) == '"' then return cjson.decode(raw) end
  return raw
end

-- The operations[] and category_findings[] of a metrics text: each a table of
-- key -> token (nested objects flattened as "efficiency.x", "classification.x";
-- members as a list of key -> token tables).
local function read_metrics_text(text)
  local out = { operations = {}, findings = {} }
  local section, cur, sub, member
  for _, line in ipairs(lines_of(text)) do
    local top = line:match('^  "([%w_]+)":')
    if top then
      section = (top == "operations" and "operations") or (top == "category_findings" and "findings") or nil
      cur, sub, member = nil, nil, nil
    elseif section and line == "    {" then
      cur = { members = {} }
      table.insert(out[section], cur)
      sub, member = nil, nil
    elseif cur then
      local k6, v6 = line:match('^      "([^"]+)": (.*)$')
      local k8, v8 = line:match('^        "([^"]+)": (.*)$')
      local k10, v10 = line:match('^          "([^"]+)": (.*)$')
      if k6 then
        sub = (v6 == "{") and k6 or nil
        if v6 ~= "{" and v6 ~= "[" then cur[k6] = token(v6) end
      elseif line == "        {" and section == "findings" then
        member = {}
        table.insert(cur.members, member)
      elseif k10 and member then
        member[k10] = token(v10)
      elseif k8 and sub then
        cur[sub .. "." .. k8] = token(v8)
      end
    end
  end
  return out
end

-- What a Data row must hold, from the JSON tokens (agents-and-report.md §2.4).
local function expected_row(op, scope, heuristic)
  local function t(k) return op[k] or DASH end
  local bound = op["efficiency.bound_type"]
  local bound_cell = (heuristic or not bound) and DASH or (bound .. "-bound")
  local kernel = op.kernel_name_trunc
  if kernel == nil or kernel == "" then kernel = DASH end
  local row = { op.name, op.args or "", op.launcher_path, kernel }
  if scope == "comparative" then
    for _, c in ipairs({ t("time_ms"), t("t2_time_ms"), t("count") .. " / " .. t("count_trace2"), t("difference_ms"),
      t("efficiency.flops_per_byte"), bound_cell }) do row[#row + 1] = c end
    return row
  end
  local eff = op["efficiency.efficiency_percent"]
  local eff_cell = DASH
  if eff and not heuristic then
    if bound == "compute" then eff_cell = eff .. "% of " .. op["efficiency.resolved_peak_maf"] .. " TFLOPS"
    elseif bound == "memory" then eff_cell = eff .. "% of " .. op["efficiency.resolved_peak_hbm_bw"] .. " TB/s"
    else eff_cell = eff .. "% of roofline" end
  end
  for _, c in ipairs({ t("time_ms"), t("percent_of_total"), t("count"), t("efficiency.flops_per_byte"), eff_cell,
    bound_cell }) do row[#row + 1] = c end
  return row
end

-- Members joined to operations: same name and time, and the same efficiency
-- (or, for heuristic members, E2E share); each operation used once.
local function join(m, ops, used)
  for i, op in ipairs(ops) do
    local same = m.estimate_method == "heuristic" and op.percent_of_total == m.percent_of_total
      or op["efficiency.efficiency_percent"] == m.efficiency_pct
    if not used[i] and op.name == m.operation and op.time_ms == m.time_ms and same then
      used[i] = true
      return op
    end
  end
end

-- Findings-file reader -----------------------------------------------------------

local function split_cells(line)
  local inner = line:match("^%s*|(.*)|%s*$")
  local cells = {}
  for c in (inner .. "|"):gmatch("(.-)|") do cells[#cells + 1] = c:match("^%s*(.-)%s*$") end
  return cells
end

local function parse_findings(text)
  local doc = { cards = {}, blocks = {}, lines = lines_of(text) }
  local block
  for i, line in ipairs(doc.lines) do
    local p, title = line:match("^### P(%d+): (.*)$")
    if p then doc.cards[#doc.cards + 1] = { rank = tonumber(p), title = title, line = i } end
    local tier, rank = line:match("^<!%-%- reasoning%-candidate tier=(%w+) rank=(%d+) %-%->$")
    if tier then
      block = { tier = tier, rank = tonumber(rank), line = i, labels = {}, rows = {} }
      doc.blocks[#doc.blocks + 1] = block
    elseif block then
      if not block.title and line:match("^#### ") then block.title = line:sub(6) end
      for _, label in ipairs({ "Identification", "Data", "Reasoning for Slowdown", "Resolution", "Impact estimate" }) do
        if line:sub(1, #label + 5) == "**" .. label .. ":**" then
          block.labels[#block.labels + 1] = label
          if label == "Identification" then block.identification = line end
          if label == "Data" then block.data_line = line end
        end
      end
      if line:match("^|") then
        if not block.header then block.header = split_cells(line)
        elseif not line:match("^| %-%-%-") then block.rows[#block.rows + 1] = split_cells(line) end
      end
    end
  end
  doc.p_items, doc.details = {}, {}
  for low, mid, high in text:gmatch("<!%-%- impact%-begin kind=p_item low=(%S+) mid=(%S+) high=(%S+) %-%->") do
    doc.p_items[#doc.p_items + 1] = { low, mid, high }
  end
  for low, high in text:gmatch("<!%-%- impact%-begin kind=detail_estimate low=(%S+) high=(%S+) %-%->") do
    doc.details[#doc.details + 1] = { low, high }
  end
  doc.warnings = {}
  for pct in text:gmatch("\n> %*%*Warning — estimated:%*%*[^\n]-%(([%d.]+)%%%)") do doc.warnings[#doc.warnings + 1] = pct end
  return doc
end

local STANDALONE = { "Operation", "Args", "Kernel Path", "Kernel Name", "Time (ms)", "%E2E", "Count", "FLOPS/Byte",
  "Efficiency", "Bound" }
local COMPARATIVE = { "Operation", "Args (T1)", "Kernel Path", "Kernel Name", "Trace 1 Time (ms)", "Trace 2 Time (ms)",
  "Count (T1/T2)", "Difference (ms)", "FLOPS/Byte (T1)", "Bound (T1)" }

-- Level 1 through the validator (when present), in an output-directory layout.
local function level1(what, cat, metrics_text, findings_text, scope)
  if not has_validate then return end
  local dir = T.tmpdir()
  os.execute("mkdir -p " .. T.q(dir .. "/category_data") .. " " .. T.q(dir .. "/category_findings"))
  write(dir .. "/category_data/" .. cat .. "_metrics.json", metrics_text)
  local path = dir .. "/category_findings/" .. cat .. "_findings.md"
  write(path, findings_text)
  local passed, errors = validate.validate_findings_file(path, "compute", scope)
  T.check(passed, what .. ": Level 1: " .. table.concat(errors or {}, "; "))
  T.rmrf(dir)
end

--- Every contract check of one findings file against its metrics text.
local function check_file(what, cat, metrics_text, findings_text, scope, extra_columns)
  local m = read_metrics_text(metrics_text)
  local doc = parse_findings(findings_text)
  local text = findings_text
  local rec, da = text:find("\n## Recommendations\n", 1, true), text:find("\n## Detailed Analysis\n", 1, true)
  T.check(rec and da and rec < da, what .. ": Recommendations before Detailed Analysis")
  T.eq(#doc.cards, #m.findings, what .. ": one card per finding")
  T.eq(#doc.blocks, #m.findings, what .. ": one candidate block per finding")
  T.eq(#doc.p_items, #m.findings, what .. ": one p_item marker per finding")
  T.eq(#doc.details, #m.findings, what .. ": one detail_estimate marker per finding")
  local heuristic_count, used = 0, {}
  for i, f in ipairs(m.findings) do
    local w = what .. " P" .. i
    local card, block = doc.cards[i] or {}, doc.blocks[i] or { labels = {}, rows = {} }
    T.eq(tostring(card.rank), f.rank, w .. ": card rank")
    T.eq(tostring(block.rank), f.rank, w .. ": block rank")
    T.eq(block.tier, "compute", w .. ": block tier")
    T.eq(block.title, card.title, w .. ": block title = card title")
    if f.library ~= "Unknown" then
      T.check(card.title and card.title:sub(-#f.library - 3) == " (" .. f.library .. ")", w .. ": library suffix")
    else
      T.check(card.title and not card.title:find("%(Unknown%)"), w .. ": no (Unknown) suffix")
    end
    local p, d = doc.p_items[i] or {}, doc.details[i] or {}
    T.eq(p[1], f.impact_score_low, w .. ": p_item low")
    T.eq(p[2], f.impact_score, w .. ": p_item mid")
    T.eq(p[3], f.impact_score_high, w .. ": p_item high")
    T.eq(d[1], f.impact_score_low, w .. ": detail low")
    T.eq(d[2], f.impact_score_high, w .. ": detail high")
    T.check(text:find("**Impact**: impact_score: " .. f.impact_score .. "\n", 1, true), w .. ": Impact line")
    T.eq(table.concat(block.labels, ","), "Identification,Data,Reasoning for Slowdown,Resolution,Impact estimate",
      w .. ": the five labels in order")
    T.eq(block.data_line, "**Data:**", w .. ": **Data:** alone on its line")
    T.check(block.identification and block.identification:find("%(source: `" .. cat .. "_metrics%.json` → .*%)$"),
      w .. ": Identification ends with the source parenthetical")
    local header = block.header or {}
    local want = scope == "comparative" and COMPARATIVE or STANDALONE
    for c = 1, #want do T.eq(header[c], want[c], w .. ": header column " .. c) end
    for c, name in ipairs(extra_columns or {}) do T.eq(header[#want + c], name, w .. ": extra column " .. name) end
    T.eq(#block.rows, #f.members, w .. ": one Data row per member")
    local heuristic = f.estimate_method == "heuristic"
    if heuristic then heuristic_count = heuristic_count + 1 end
    for r, member in ipairs(f.members) do
      local op = join(member, m.operations, used)
      T.check(op ~= nil, w .. ": member " .. r .. " joins an operation")
      if op then
        local exp, got = expected_row(op, scope, heuristic), block.rows[r] or {}
        for c = 1, #exp do T.eq(got[c], exp[c], w .. " row " .. r .. " column " .. want[c]) end
        if extra_columns and extra_columns[1] == "Sub-Category" then
          T.eq(got[#want + 1], op["classification.sub_category"] or DASH, w .. " row " .. r .. " Sub-Category")
        end
      end
    end
  end
  T.eq(#doc.warnings, heuristic_count, what .. ": one warning line per heuristic finding")
  local k = 0
  for _, f in ipairs(m.findings) do
    if f.estimate_method == "heuristic" then
      k = k + 1
      T.eq(doc.warnings[k], f.percent_of_total, what .. ": warning line carries percent_of_total")
    end
  end
  T.check(not text:find("<[A-Z][A-Za-z_ ]*>"), what .. ": no <Placeholder>")
  T.check(not text:find("%f[%w]X%.X%f[%W]") and not text:find("TODO", 1, true) and not text:find("{{", 1, true),
    what .. ": no X.X / TODO / {{ }}")
  T.check(not text:find("Status: ERROR", 1, true), what .. ": not an error file")
  level1(what, cat, metrics_text, findings_text, scope)
end

-- Running an analyzer on given metrics -------------------------------------------

local AGENT = { gemm = "gemm", groupedgemm_fwd = "gemm", sdpa_fwd = "sdpa", sdpa_bwd = "sdpa", elementwise = "elementwise",
  reduce = "reduce", norm_fwd = "norm", norm_bwd = "norm", conv_fwd = "convolution", conv_bwd = "convolution",
  moe_fused = "moe", moe_unfused = "moe", triton = "triton" }

local MI300X_META = json.encode(json.obj("platform", "MI300X", "peak_hbm_bw_tbs", 5.3, "max_achievable_tflops",
  json.obj("matrix_fp16", 654, "matrix_bf16", 708, "matrix_fp32", 163, "matrix_fp8", 1273)))

-- tracelens.analysis with run_category replaced (the rest of the module as it is)
local function stub_analysis(run_category)
  local real = require "tracelens.analysis"
  package.loaded["tracelens.analysis"] = setmetatable({ run_category = run_category }, { __index = real })
end

-- The analyzer's output for `metrics` (the numeric step replaced by a stub).
local function run_agent(agent, cat, display, metrics, metadata, ops, extra)
  stub_analysis(function() return metrics end)
  local chunk = assert(loadfile(root .. "/agents/" .. agent .. ".lua"))
  local ctx = { category = cat, display_name = display, scope = metrics.comparison_scope or "standalone",
    out_dir = "/nonexistent", ops = ops or {}, metadata = metadata or MI300X_META }
  for k, v in pairs(extra or {}) do ctx[k] = v end
  local ok, out = pcall(chunk, ctx)
  package.loaded["tracelens.analysis"] = nil
  T.check(ok, agent .. " on " .. cat .. ": " .. tostring(not ok and out or ""))
  return ok and out or { findings = "", metrics = "" }
end

-- 1. Golden metrics -------------------------------------------------------------------

local golden = shared .. "/agent_golden"
if T.dir_exists(golden) then
  local DISPLAY = { gemm = "GEMM", sdpa_fwd = "SDPA_fwd", elementwise = "elementwise", reduce = "reduce",
    norm_fwd = "NORM_fwd", other = "other" }
  for _, scope in ipairs({ "standalone", "comparative" }) do
    for cat, display in pairs(DISPLAY) do
      local text = read(golden .. "/" .. scope .. "/category_data/" .. cat .. "_metrics.json")
      local metrics = json.decode(text)
      local out = run_agent(AGENT[cat] or "generic", cat, display, metrics,
        read(golden .. "/" .. scope .. "/metadata/" .. cat .. "_metadata.json"))
      T.eq(out.metrics, json.encode(metrics), scope .. " " .. cat .. ": metrics returned as the analysis gave them")
      local what = "golden " .. scope .. " " .. cat
      check_file(what, cat, text, out.findings, scope, cat == "other" and { "Sub-Category" } or nil)
      if #metrics.category_findings == 0 then
        T.check(not out.findings:find("\n### ", 1, true) and not out.findings:find("reasoning-candidate", 1, true),
          what .. ": the empty variant has no card and no block")
      end
    end
  end
  -- spot values worked out by hand from gemm_metrics.json
  local out = run_agent("gemm", "gemm", "GEMM",
    json.decode(read(golden .. "/standalone/category_data/gemm_metrics.json")))
  T.check(out.findings:find("### P1: Memory-bound BF16 GEMM far below peak memory bandwidth (Tensile)\n", 1, true),
    "gemm title: bound + dtype + noun + band + library")
  T.check(out.findings:find("reach only 3.05–29.60% of the 5.3 TB/s peak, taking 0.175 ms (4.98% of end-to-end GPU "
    .. "time) over 26 calls.", 1, true), "gemm insight: efficiency range, summed time (0.086+0.034+0.029+0.026), "
    .. "summed share, summed calls")
else
  print("note: " .. golden .. " not found; golden checks skipped")
end

-- 2. Synthetic metrics driving the rules ------------------------------------------------

local function efficiency(bound, eff, extra)
  local e = json.obj("tflops_achieved", extra and extra.tflops or json.null, "tb_s_achieved", extra and extra.tbs or json.null,
    "efficiency_percent", eff == nil and json.null or eff, "bound_type", bound or json.null,
    "flops_per_byte", extra and extra.fpb or json.null, "compute_spec", extra and extra.spec or "matrix_bf16",
    "resolved_peak_maf", 708, "resolved_peak_hbm_bw", 5.3, "warning", json.null, "is_anomaly", extra and extra.anomaly or false)
  if extra and extra.spec == "matrix_fp32" then e.resolved_peak_maf = 163 end
  return e
end

-- One operation (keys in the metrics order).
local function op(t)
  local o = json.obj("name", t.name, "count", t.count or 10, "time_ms", t.time_ms, "percent_of_category", t.pct_cat or 50.0,
    "percent_of_total", t.pct, "efficiency", efficiency(t.bound, t.eff, t))
  if t.dims then o["Input Dims"], o["Input type"] = t.dims, t.types end
  o.args = t.args
  if t.t2 then o.t2_time_ms, o.count_trace2, o.difference_ms = t.t2, t.count2 or t.count or 10, t.diff end
  o.classification = t.classification
  o.library = t.library or json.null
  o.launcher_path = t.path or "model.py(12): forward"
  o.kernel_name = t.kernel or "kernel_a"
  o.kernel_name_trunc = t.kernel or "kernel_a"
  o.module_chain = json.arr(t.modules or {})
  o.call_chain = json.arr(t.calls or {})
  return o
end

-- A finding over operations, with the given scores.
local function finding(cat, ops, f)
  local members = json.arr()
  for _, o in ipairs(ops) do
    local e = o.efficiency
    local mem = json.obj("operation", o.name, "category", cat, "type", f.heuristic and "unmodeled_significant" or "kernel_tuning",
      "estimate_method", f.heuristic and "heuristic" or "quantified", "impact_score", f.mid, "impact_score_low", f.low,
      "impact_score_high", f.high, "efficiency_pct", f.heuristic and json.null or e.efficiency_percent,
      "bound_type", f.heuristic and json.null or e.bound_type, "library", o.library, "time_ms", o.time_ms)
    if f.heuristic then mem.percent_of_total = o.percent_of_total end
    members[#members + 1] = mem
  end
  local out = json.obj("bound_type", f.bound, "library", f.library or "Unknown", "eff_bucket", f.bucket or "0-30",
    "estimate_method", f.heuristic and "heuristic" or "quantified", "impact_score", f.mid, "impact_score_low", f.low,
    "impact_score_high", f.high)
  if f.heuristic then out.percent_of_total = f.pct end
  out.member_count = #ops
  out.members = members
  out.rank = f.rank or 1
  return out
end

local function metrics_of(cat, scope, ops, findings, cs)
  return json.obj("category", cat, "status", "OK", "comparison_scope", scope, "total_time_ms", 1.0,
    "percent_of_compute", 50.0, "operation_count", 20, "operations", json.arr(ops), "category_specific", cs or json.obj(),
    "impact_estimates", json.arr(), "category_findings", json.arr(findings))
end

-- Renders, runs the contract checks, and returns the findings text.
local function synthetic(what, agent, cat, display, metrics, extra_columns)
  local out = run_agent(agent, cat, display, metrics)
  check_file("synthetic " .. what, cat, json.encode(metrics), out.findings, metrics.comparison_scope, extra_columns)
  return out.findings
end

local function has(text, needle, what) T.check(text:find(needle, 1, true), what .. ": expected \"" .. needle .. "\"") end
local function lacks(text, needle, what) T.check(not text:find(needle, 1, true), what .. ": unexpected \"" .. needle .. "\"") end

do -- GEMM, compute-bound BF16: tile tuning, then FP8 (the platform has an FP8 peak)
  local o = op { name = "aten::mm", time_ms = 10.89, pct = 100.0, bound = "compute", eff = 4.46, fpb = 170.44, tflops = 31.55,
    dims = "((256, 131072), (131072, 512))", types = "('c10::BFloat16', 'c10::BFloat16')", args = "(256,131072) bf16<br>(131072,512) bf16",
    classification = json.obj("is_quantized", false, "gemm_type", "regular"), library = "Tensile", kernel = "Cijk_Ailk_Bljk_MT256" }
  local text = synthetic("gemm compute", "gemm", "gemm", "GEMM", metrics_of("gemm", "standalone", { o },
    { finding("gemm", { o }, { bound = "compute", library = "Tensile", low = 71.66, mid = 83.6, high = 95.54 }) }))
  has(text, "### P1: Compute-bound long-reduction BF16 GEMM far below the compute roofline (Tensile)", "gemm compute title")
  has(text, "**Action**: Profile the `Cijk_Ailk_Bljk_MT256` kernel of `aten::mm` for tile-size and wave-occupancy tuning. "
    .. "If the model tolerates it, run these operations in FP8 instead of BF16.", "gemm compute action")
  has(text, "(M=256, N=512, K=131072)", "gemm shape from Input Dims")
  has(text, "does not show how the long K dimension is split", "gemm long-K fallback")
  has(text, "does not show the kernel's tile size", "gemm tile fallback")
  -- without an FP8 peak there is no precision advice
  local out = run_agent("gemm", "gemm", "GEMM", metrics_of("gemm", "standalone", { o },
    { finding("gemm", { o }, { bound = "compute", library = "Tensile", low = 71.66, mid = 83.6, high = 95.54 }) }),
    json.encode(json.obj("max_achievable_tflops", json.obj("matrix_bf16", 708))))
  lacks(out.findings, "FP8", "gemm without an FP8 peak")
  -- the tile and the split of K the kernel's name states (the agent case gemm_01: 8 workgroups for its 256 x 512)
  local named = op { name = "aten::mm", time_ms = 10.89, pct = 100.0, bound = "compute", eff = 4.46, fpb = 170.44,
    tflops = 31.55, dims = "((256, 131072), (131072, 512))", types = "('c10::BFloat16', 'c10::BFloat16')",
    args = "(256,131072) bf16<br>(131072,512) bf16", library = "Tensile",
    classification = json.obj("is_quantized", false, "gemm_type", "regular"),
    kernel = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT256x128x64_MI16x16x1_SN_GSU2_LDSB1_AFC1" }
  text = synthetic("gemm named tile", "gemm", "gemm", "GEMM", metrics_of("gemm", "standalone", { named },
    { finding("gemm", { named }, { bound = "compute", library = "Tensile", low = 71.66, mid = 83.6, high = 95.54 }) }))
  has(text, "The kernel name states its tile, 256 x 128 with a K step of 64 (`MT256x128x64`), and a split of K in 2 "
    .. "parts: its 256 x 512 output makes 4 output tiles, 8 work-groups with the split of K.",
    "gemm: the tile from the kernel name (1 x 4 or 2 x 2 tiles of 256 x 128, each in 2 K parts)")
  lacks(text, "does not show the kernel's tile size", "gemm: the name states the tile")
  lacks(text, "does not show how the long K dimension is split", "gemm: the name states the split")
  -- with the device's 304 compute units: 8 items are 0.03 waves, the last 3% full (8/304)
  local gm = metrics_of("gemm", "standalone", { named },
    { finding("gemm", { named }, { bound = "compute", library = "Tensile", low = 71.66, mid = 83.6, high = 95.54 }) })
  out = run_agent("gemm", "gemm", "GEMM", gm, nil, nil, { num_cus = 304 })
  has(out.findings, "its 256 x 512 output makes 4 output tiles, 8 work-groups with the split of K, 0.03 waves on the 304 compute units the trace's "
    .. "device reports, the last one 3% full. A kernel profiler (Nsight Compute, rocprofv3) shows whether another "
    .. "tile shape would fill more compute units.", "gemm: a small last wave")
  -- Qwen's 8944 x 2816 on MI300X with MT128x224x64: 70 x 13 = 910 or 40 x 22 = 880 tiles on 304 CUs, 2.89 to 2.99
  -- waves, the last 272/304 = 89% to 302/304 = 99% full
  named.kernel_name = "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x224x64_MI16x16x1_SN_LDSB1_AFC1"
  named.kernel_name_trunc = named.kernel_name
  named["Input Dims"] = "((8944, 1024), (1024, 2816))"
  out = run_agent("gemm", "gemm", "GEMM", gm, nil, nil, { num_cus = 304 })
  has(out.findings, "its 8944 x 2816 output makes 880 to 910 tiles, 2.89 to 2.99 waves on the 304 compute units the "
    .. "trace's device reports, the last one 89% to 99% full: few units idle in the last wave, so a tile shape chosen "
    .. "to fill it gains little", "gemm: full last waves")
  -- a side that is not a multiple of 16: edge tiles partly empty, unless the named tile divides it (gpt_train's
  -- M=8184 = 33 x 248 under nvjet's 128x248 tile; 8190 is a multiple of neither 128 nor 248)
  named.kernel_name = "nvjet_sm90_tst_128x248_64x4_2x1_v_bz_coopA_NNT"
  named.kernel_name_trunc = named.kernel_name
  named["Input Dims"] = "((8184, 1024), (1024, 4096))"
  out = run_agent("gemm", "gemm", "GEMM", gm, nil, nil, { num_cus = 132 })
  lacks(out.findings, "not a multiple of 16", "gemm: M=8184 is 33 tiles of 248")
  named["Input Dims"] = "((8190, 1024), (1024, 4096))"
  out = run_agent("gemm", "gemm", "GEMM", gm, nil, nil, { num_cus = 132 })
  has(out.findings, "M=8190 of `aten::mm` is not a multiple of 16, so its edge tiles run partly empty.",
    "gemm: M=8190 fits no tile side")
end

do -- GEMM: 2000 tiny calls are batched upstream; memory-bound GEMMs sharing a layer go to fusion
  local tiny = op { name = "aten::bmm", count = 2000, time_ms = 4.0, pct = 40.0, bound = "memory", eff = 10.0, fpb = 5.0,
    dims = "((64, 8, 16), (64, 16, 16))", types = "('c10::BFloat16', 'c10::BFloat16')", args = "(64,8,16) bf16<br>(64,16,16) bf16" }
  local text = synthetic("gemm tiny", "gemm", "gemm", "GEMM", metrics_of("gemm", "standalone", { tiny },
    { finding("gemm", { tiny }, { bound = "memory", low = 1.0, mid = 2.0, high = 3.0 }) }))
  has(text, "Batch the 2000 small calls of `aten::bmm` upstream into fewer, larger calls.", "gemm tiny action")
  has(text, "tiny high-count", "gemm tiny title")
  local mods = { "Model", "Block", "MLP" }
  local a = op { name = "aten::addmm", time_ms = 0.5, pct = 5.0, bound = "memory", eff = 12.5, modules = mods, path = "linear.py(1): forward" }
  local b = op { name = "aten::mm", time_ms = 0.3, pct = 3.0, bound = "memory", eff = 20.0, modules = mods, path = "linear.py(1): forward" }
  text = synthetic("gemm chain", "gemm", "gemm", "GEMM", metrics_of("gemm", "standalone", { a, b },
    { finding("gemm", { a, b }, { bound = "memory", low = 0.6, mid = 0.7, high = 0.8 }) }))
  has(text, "Fuse `aten::addmm` with its neighbouring operations in `Block > MLP` (`torch.compile` fuses such "
    .. "chains); the kernel fusion analysis proposes no candidate that covers it.", "gemm chain action")
  has(text, "2 GEMM signatures (`aten::addmm` and `aten::mm`)", "gemm subject lists the names")
  -- a vendor library's memory-bound GEMM: more rows per call, not its kernel's loads (BERT's LM-head addmm); near
  -- the ridge (100 of 708 / 5.3 = 134 FLOP/B; Falconsai: 258 of 295): tiles, not bandwidth
  for _, c in ipairs({ { "vendor", 20.0, 12.5, "Raise the FLOPs per byte of `aten::addmm`: more rows per call" },
    { "near ridge", 100.0, 40.0, "for tile-size and wave-occupancy tuning" } }) do
    local g = op { name = "aten::addmm", time_ms = 0.5, pct = 5.0, bound = "memory", eff = c[3], fpb = c[2],
      library = "cuBLAS" }
    local tg = synthetic("gemm " .. c[1], "gemm", "gemm", "GEMM", metrics_of("gemm", "standalone", { g },
      { finding("gemm", { g }, { bound = "memory", library = "cuBLAS", low = 0.6, mid = 0.7, high = 0.8 }) }))
    has(tg, c[4], "gemm " .. c[1])
    lacks(tg, "Optimize the memory-access pattern", "gemm " .. c[1] .. ": not its loads")
  end
  has(text, "12.5–20.0%", "gemm efficiency range keeps Python's 20.0")
end

do -- elementwise: a copy_ into a contiguous tensor from a permuted one (Qwen's attention) is a layout change
  local dims = "((16, 16, 559, 64), (16, 16, 559, 64), ())"
  local cp = op { name = "aten::copy_", count = 72, time_ms = 2.77, pct = 8.0, bound = "memory", eff = 37.35,
    fpb = 0.25, dims = dims, types = "('c10::BFloat16', 'c10::BFloat16', 'Scalar')",
    args = "(16,16,559,64) bf16<br>(16,16,559,64) bf16" }
  local pw = op { name = "aten::pow", time_ms = 0.5, pct = 1.0, bound = "memory", eff = 82.41 }
  local ops = { columns = { "name", "Input Dims", "Input Strides" }, rows = {
    { name = "aten::copy_", ["Input Dims"] = dims,
      ["Input Strides"] = "((572416, 35776, 64, 1), (572416, 64, 1024, 1), ())" } } }
  local m = metrics_of("elementwise", "standalone", { cp, pw },
    { finding("elementwise", { cp }, { bound = "memory", low = 1, mid = 2, high = 3 }) })
  local out = run_agent("elementwise", "elementwise", "elementwise", m, nil, ops)
  check_file("synthetic elementwise layout copy", "elementwise", json.encode(m), out.findings, "standalone")
  has(out.findings, "`aten::copy_` copies between a contiguous 16×16×559×64 tensor and a strided one (strides "
    .. "(572416, 64, 1024, 1)): a layout change", "layout copy: said")
  has(out.findings, "Avoid the layout change of `aten::copy_`", "layout copy: advice")
  lacks(out.findings, "A simple copy should move data at more than", "layout copy: no plain-copy yardstick")
  -- the same copy between two contiguous tensors: a plain copy, judged as before
  ops.rows[1]["Input Strides"] = "((572416, 35776, 64, 1), (572416, 35776, 64, 1), ())"
  out = run_agent("elementwise", "elementwise", "elementwise", m, nil, ops)
  lacks(out.findings, "a layout change", "plain copy: no layout change")
  has(out.findings, "A simple copy should move data at more than 70% of peak bandwidth", "plain copy: the yardstick")
end

do -- SDPA: paged, memory-bound, KV write above 10% -> block size; three extra columns
  local kb = json.obj("has_paged_attention_kernel", true, "has_fwd_kernel", false, "has_reshape_cache", true,
    "kernels", json.arr({ json.obj("name", "reshape_and_cache_kernel", "mean_us", 30.0, "kernel_type", "reshape_cache", "percent", 30.0),
      json.obj("name", "kernel_paged_attention_2d", "mean_us", 70.0, "kernel_type", "paged_attention", "percent", 70.0) }))
  local wp = json.obj("n_q", 64, "n_kv", 4096, "h_q", 32, "h_kv", 8, "sum_ctx_tokens", 100, "sum_gen_tokens", 900,
    "ctx_ratio", 0.1, "workload_type", "decode_heavy", "attention_pattern", "GQA", "gqa_ratio", 4)
  local o = op { name = "vllm::unified_attention", time_ms = 2.0, pct = 20.0, bound = "memory", eff = 15.0,
    classification = json.obj("is_flash_attention", false, "is_paged_attention", true, "has_perf_model", true,
      "attention_type", "paged", "kernel_breakdown", kb, "workload_profile", wp) }
  local text = synthetic("sdpa paged", "sdpa", "sdpa_fwd", "SDPA_fwd", metrics_of("sdpa_fwd", "standalone", { o },
    { finding("sdpa_fwd", { o }, { bound = "memory", low = 2.0, mid = 2.5, high = 3.0 }) }),
    { "Breakdown Component", "Workload Type", "Attention Pattern" })
  has(text, "| paged_attention (70.0%) | decode_heavy | GQA |", "sdpa paged columns")
  has(text, "Optimize the memory-access pattern of the `kernel_paged_attention_2d` kernel of `vllm::unified_attention`.",
    "sdpa paged: the dominant component is tuned")
  has(text, "Tune the KV-cache block size (16, 32 or 64 tokens)", "sdpa KV block size action")
  lacks(text, "expected at its length", "sdpa paged: no sequence-length band")
  has(text, "The KV-cache write takes 30.0% of the op's kernel time.", "sdpa KV write share")
  has(text, "Per-request KV-cache hit rate not visible from trace data.", "sdpa paged fallback")
  has(text, "with 4 query heads per key/value head", "sdpa GQA ratio")
  -- unfused attention migrates to Flash Attention
  local u = op { name = "aten::_scaled_dot_product_attention_math", time_ms = 3.0, pct = 30.0, bound = "memory", eff = 8.0,
    classification = json.obj("is_flash_attention", false, "is_paged_attention", false, "has_perf_model", true,
      "attention_type", "standard") }
  text = synthetic("sdpa unfused", "sdpa", "sdpa_fwd", "SDPA_fwd", metrics_of("sdpa_fwd", "standalone", { u },
    { finding("sdpa_fwd", { u }, { bound = "memory", low = 5.0, mid = 6.0, high = 7.0 }) }))
  has(text, "with a fused Flash Attention kernel.", "sdpa unfused action")
  lacks(text, "fuse the SDPA", "sdpa never fuses SDPA")
  -- flash, in band: the title does not call it a bottleneck
  local f = op { name = "aten::_scaled_dot_product_flash_attention", time_ms = 3.0, pct = 30.0, bound = "compute", eff = 45.0,
    dims = "((1, 16, 2048, 128), (1, 16, 2048, 128), (1, 16, 2048, 128))",
    classification = json.obj("is_flash_attention", true, "is_paged_attention", false, "has_perf_model", true,
      "attention_type", "flash") }
  text = synthetic("sdpa in band", "sdpa", "sdpa_fwd", "SDPA_fwd", metrics_of("sdpa_fwd", "standalone", { f },
    { finding("sdpa_fwd", { f }, { bound = "compute", bucket = "30-60", low = 1.0, mid = 1.2, high = 1.4 }) }))
  has(text, "within the efficiency expected at its length", "sdpa in-band title")
  has(text, "usually reaches 40–60% of roofline", "sdpa band for N=2048")
  has(text, "Flash Attention is already in use, and its kernel is a library's: time the other fused attention "
    .. "backends for this shape", "sdpa flash action")
  lacks(text, "tile-size and wave-occupancy tuning", "sdpa flash: no tuning of a library kernel")
  has(text, "Within that band the trace shows no sign of a defect in this kernel; whether another attention backend "
    .. "does better at this shape must be measured.", "sdpa in band: no claim beyond the band")
  lacks(text, "typical for this sequence length", "sdpa in band: no 'typical' claim")
  -- ROCm's flash attention (AOTriton's attn_fwd beside a fill kernel): the metrics' library is the
  -- reference's "PyTorch Native", the card names AOTriton
  f.library = "PyTorch Native"
  f.kernel_details_summary = "[{'name': 'void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, "
    .. "std::array<char*, 1ul> >(int, at::native::FillFunctor<int>, std::array<char*, 1ul>)', 'stream': 0, 'count': 2}, "
    .. "{'name': 'attn_fwd', 'stream': 0, 'count': 1}]"
  local fd = finding("sdpa_fwd", { f }, { bound = "compute", bucket = "30-60", low = 1.0, mid = 1.2, high = 1.4 })
  fd.library = "PyTorch Native"
  text = synthetic("sdpa aotriton", "sdpa", "sdpa_fwd", "SDPA_fwd", metrics_of("sdpa_fwd", "standalone", { f }, { fd }))
  has(text, "within the efficiency expected at its length (PyTorch Native)", "sdpa AOTriton: the title keeps §6.8's")
  has(text, "The kernels are AOTriton's precompiled Triton attention kernels (PyTorch's fused attention on ROCm) "
    .. "(AOTriton). The library in the title, PyTorch Native, is that of a smaller kernel beside them.",
    "sdpa AOTriton: the Identification names it")
  lacks(text, "native kernels", "sdpa AOTriton: not the framework's native kernels")
end

do -- cuDNN attention (the H200 capture gpt_train): its kernels are Flash Attention kernels
  -- (..._sdpa_sm90_flash_fprop_... / _flash_bprop_...) though the op's name does not say flash
  local fwd_kernel = "Kernel 1: Memset (Device)<br>Kernel 2: cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_"
    .. "f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0"
  local c = op { name = "aten::_scaled_dot_product_cudnn_attention", time_ms = 0.982, pct = 1.4, bound = "compute",
    eff = 28.25, dims = "((8, 16, 1023, 64), (8, 16, 1023, 64), (8, 16, 1023, 64))", kernel = fwd_kernel,
    classification = json.obj("is_flash_attention", false, "is_paged_attention", false, "has_perf_model", true,
      "attention_type", "standard") }
  local text = synthetic("sdpa cudnn", "sdpa", "sdpa_fwd", "SDPA_fwd", metrics_of("sdpa_fwd", "standalone", { c },
    { finding("sdpa_fwd", { c }, { bound = "compute", low = 1.0, mid = 1.2, high = 1.4 }) }))
  has(text, "The implementation is Flash Attention, a fused kernel that keeps the attention scores on chip.",
    "sdpa cudnn: Flash Attention by its kernel names")
  lacks(text, "other than Flash Attention", "sdpa cudnn: not 'other than Flash Attention'")
  has(text, "Flash Attention signatures: 1.", "sdpa cudnn: the summary counts it")
  has(text, "Flash Attention is already in use", "sdpa cudnn: the flash action")
  -- its backward (SDPA_bwd): the recompute of the scores, counted in the FLOPs (perf_params flash_impl True)
  local b = op { name = "ScaledDotProductCudnnAttentionBackward0", time_ms = 3.148, pct = 4.5, bound = "compute",
    eff = 22.02, dims = "((8, 16, 1023, 64), (8, 16, 1023, 64), (8, 16, 1023, 64))",
    kernel = "Kernel 1: cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_1x4x1_cga1x1x1_kernel0_0",
    classification = json.obj("is_flash_attention", false, "is_paged_attention", false, "has_perf_model", true,
      "attention_type", "standard") }
  local function bwd_text(params, what)
    b.perf_params = params
    return synthetic(what, "sdpa", "sdpa_bwd", "SDPA_bwd", metrics_of("sdpa_bwd", "standalone", { b },
      { finding("sdpa_bwd", { b }, { bound = "compute", low = 1.0, mid = 1.2, high = 1.4 }) }))
  end
  text = bwd_text("{'B': 8, 'causal': True, 'flash_impl': True}", "sdpa bwd recompute counted")
  has(text, "Backward attention recomputes the scores (counted in its FLOPs) and runs more matrix products per token",
    "sdpa bwd: the recompute is in the FLOP count")
  text = bwd_text("{'B': 8, 'causal': True, 'flash_impl': False}", "sdpa bwd recompute not counted")
  has(text, "the FLOP count behind this efficiency leaves that recompute out, so the kernel does more work than the "
    .. "figure credits.", "sdpa bwd: a count without the recompute says so")
  lacks(text, "(counted in its FLOPs)", "sdpa bwd: no claim the count has it")
  -- an unfused backward reads the saved scores: no recompute claim
  b.kernel_name = "Kernel 1: softmax_backward_kernel<br>Kernel 2: Cijk_Alik_Bljk_BBS_BH"
  b.kernel_name_trunc = b.kernel_name
  b.name = "aten::_scaled_dot_product_attention_math_backward"
  text = bwd_text("{'B': 8, 'causal': True, 'flash_impl': False}", "sdpa bwd unfused")
  lacks(text, "recomputes the scores", "sdpa unfused bwd: no recompute")
  has(text, "Backward attention runs more matrix products per token than the forward pass", "sdpa unfused bwd")
end

do -- Triton: the bandwidth's byte basis (perf-model §9, the reference's rule): the trace does not say which
  -- arguments a kernel writes. The H200 capture compiled: a reduction that updates its first argument,
  -- (16,512,8192) bf16 = 16·512·8192·2 B = 128 MiB, in place; a pointwise kernel whose first argument is read only.
  local r = op { name = "triton_red_fused_gelu_gelu_backward_sum_view_1", time_ms = 0.325, count = 2, pct = 4.62,
    bound = "memory", eff = 34.48, tbs = 1.66, dims = "((16, 512, 8192), (8192, 8192), (1, 8192, 16), (), ())",
    types = "('c10::BFloat16', 'c10::BFloat16', 'float', 'Scalar', 'Scalar')",
    args = "(16,512,8192) bf16<br>(8192,8192) bf16<br>(1,8192,16) fp32",
    classification = json.obj("kernel_type", "reduction"), library = "Triton" }
  local text = synthetic("triton red bytes", "triton", "triton", "triton", metrics_of("triton", "standalone", { r },
    { finding("triton", { r }, { bound = "memory", library = "Triton", bucket = "30-60", low = 1, mid = 1.5, high = 2 }) }))
  has(text, "The bandwidth counts the bytes of every tensor argument of `triton_red_fused_gelu_gelu_backward_sum_view_1` "
    .. "once; the trace does not say which arguments a kernel writes, so if the kernel updates a buffer in place "
    .. "(Inductor passes such a buffer first, here (16,512,8192) bf16, 128 MiB), it moves that buffer's bytes once more "
    .. "than counted and its real bandwidth is higher.", "triton reduction: the byte basis")
  local p = op { name = "triton_poi_fused_gelu_view_3", time_ms = 0.195, count = 2, pct = 2.8, bound = "memory",
    eff = 45.0, dims = "((8192, 8192), (16, 512, 8192), ())", types = "('c10::BFloat16', 'c10::BFloat16', 'Scalar')",
    args = "(8192,8192) bf16<br>(16,512,8192) bf16", classification = json.obj("kernel_type", "pointwise"),
    library = "Triton" }
  text = synthetic("triton poi bytes", "triton", "triton", "triton", metrics_of("triton", "standalone", { p },
    { finding("triton", { p }, { bound = "memory", library = "Triton", bucket = "30-60", low = 1, mid = 1.5, high = 2 }) }))
  has(text, "once plus a second write of the first one ((8192,8192) bf16), as if the kernel updated it in place; the "
    .. "trace does not say which arguments a kernel writes, so if the first one is only read, the kernel moves fewer "
    .. "bytes than counted and its real bandwidth is lower.", "triton pointwise: the byte basis")
  -- a group of both kinds: the rule for each
  text = synthetic("triton mixed bytes", "triton", "triton", "triton", metrics_of("triton", "standalone", { r, p },
    { finding("triton", { r, p }, { bound = "memory", library = "Triton", bucket = "30-60", low = 1, mid = 1.5, high = 2 }) }))
  has(text, "The bandwidths count the bytes of every tensor argument once, plus a second write of the first one for the "
    .. "pointwise kernels, as if they updated it in place; the trace does not say which arguments a kernel writes, so a "
    .. "pointwise kernel whose first argument is only read moves fewer bytes than counted, and a reduction that updates "
    .. "a buffer in place (Inductor passes such buffers first) moves more.", "triton group: the byte basis of each kind")
end

do -- convolution: memory-bound with 25% transposes -> channels-last
  local o = op { name = "aten::convolution", time_ms = 1.0, pct = 10.0, bound = "memory", eff = 20.0, spec = "matrix_fp32",
    dims = "((8, 64, 56, 56), (64, 64, 1, 1))", types = "('float', 'float')" }
  local cs = json.obj("transpose_count", 3, "transpose_time_ms", 0.25, "transpose_overhead_percent", 25.0,
    "peak_maf_tflops", 708, "peak_hbm_bw_tbs", 5.3)
  local text = synthetic("conv transposes", "convolution", "conv_fwd", "CONV_fwd",
    metrics_of("conv_fwd", "standalone", { o }, { finding("conv_fwd", { o }, { bound = "memory", low = 1, mid = 1.5, high = 2 }) }, cs))
  has(text, "channels-last memory layout", "conv channels-last action")
  has(text, "Layout transposes take 25.0% of convolution time, a high share.", "conv transpose identification")
  has(text, "1×1 filters usually reach more than 60% of peak HBM bandwidth", "conv 1x1 expectation")
  has(text, "3 signatures, 0.25 ms, 25.0% of convolution time (high)", "conv summary")
  has(text, "The trace does not show this convolution's memory layout", "conv: no strides, no layout")
  -- no strides, but the kernel's name states its layout (the conv agent cases: MIOpen's igemm_fwd_gtcx_nhwc_...)
  local named_conv = op { name = "aten::convolution", time_ms = 1.0, pct = 10.0, bound = "memory", eff = 20.0,
    spec = "matrix_fp32", dims = "((8, 64, 56, 56), (64, 64, 1, 1))", types = "('float', 'float')",
    kernel = "igemm_fwd_gtcx_nhwc_fp32_bx0_ex0_bt128x128x32" }
  text = synthetic("conv kernel layout", "convolution", "conv_fwd", "CONV_fwd", metrics_of("conv_fwd", "standalone",
    { named_conv }, { finding("conv_fwd", { named_conv }, { bound = "memory", low = 1, mid = 1.5, high = 2 }) }, cs))
  has(text, "The trace records no Input Strides for `aten::convolution`, but its kernel's name says it computes on "
    .. "channels-last (NHWC) data (`igemm_fwd_gtcx_nhwc_fp32_bx0_ex0_bt128x128x32`)", "conv: the layout from the kernel")
  -- the input's layout from its Input Strides (Falconsai: NCHW, (150528, 50176, 224, 1)), and channels-last
  for _, c in ipairs({ { "((200704, 3136, 56, 1), (64, 64, 1, 1))", "channels-first (NCHW: Input Strides (200704, "
    .. "3136, 56, 1))" }, { "((200704, 1, 3584, 64), (64, 1, 64, 64))", "channels-last (NHWC: Input Strides (200704, "
    .. "1, 3584, 64))" } }) do
    local ops = { columns = { "name", "Input Dims", "Input Strides" }, rows = {
      { name = "aten::convolution", ["Input Dims"] = "((8, 64, 56, 56), (64, 64, 1, 1))", ["Input Strides"] = c[1] } } }
    local out = run_agent("convolution", "conv_fwd", "CONV_fwd", metrics_of("conv_fwd", "standalone", { o },
      { finding("conv_fwd", { o }, { bound = "memory", low = 1, mid = 1.5, high = 2 }) }, cs), nil, ops)
    has(out.findings, "`aten::convolution`'s input is " .. c[2], "conv layout from strides")
  end
  -- a patch embedding (Falconsai's: 16x16 filter, stride 16, no padding, 4 x 3 x 224 x 224 input, 768 filters): one
  -- (4 x 14 x 14 = 784) x (3 x 16 x 16 = 768) by 768 x 768 matrix product, 2 x 784 x 768 x 768 = 0.92 GFLOP;
  -- 1.0 ms over 10 calls = 100.0 µs per call. Stride 1: no such note.
  local pe = op { name = "aten::convolution", time_ms = 1.0, pct = 10.0, bound = "memory", eff = 20.0,
    dims = "((4, 3, 224, 224), (768, 3, 16, 16), (768,), (), (), (), (), (), ())",
    types = "('c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16', 'ScalarList', 'ScalarList', 'ScalarList', 'Scalar', "
      .. "'ScalarList', 'Scalar')" }
  for _, c in ipairs({ { "'[16, 16]'", true }, { "'[1, 1]'", false } }) do
    local ops = { columns = { "name", "Input Dims", "Concrete Inputs" }, rows = { { name = "aten::convolution",
      ["Input Dims"] = pe["Input Dims"],
      ["Concrete Inputs"] = "('', '', '', " .. c[1] .. ", '[0, 0]', '[1, 1]', 'False', '[0, 0]', '1')" } } }
    local out = run_agent("convolution", "conv_fwd", "CONV_fwd", metrics_of("conv_fwd", "standalone", { pe },
      { finding("conv_fwd", { pe }, { bound = "memory", low = 1, mid = 1.5, high = 2 }) }, cs), nil, ops)
    local note = "`aten::convolution` has a stride equal to its 16x16 filter and no padding or dilation: a patch "
      .. "embedding, one matrix product of the 784 x 768 patches by the 768 x 768 flattened filters (0.92 GFLOP). "
      .. "Written as a GEMM (the input reshaped into patches, then `torch.nn.functional.linear` with the weight "
      .. "flattened to 768 x 768) it runs on the GEMM library's kernels instead of a convolution kernel; time it "
      .. "against this convolution's 100.0 µs per call."
    if c[2] then has(out.findings, note, "conv patch embedding: the GEMM it is")
    else lacks(out.findings, "patch embedding", "conv stride 1: no patch note") end
  end
  -- depthwise, compute-bound
  local d = op { name = "aten::convolution", time_ms = 1.0, pct = 10.0, bound = "compute", eff = 5.0, spec = "matrix_fp32",
    dims = "((8, 64, 56, 56), (64, 1, 3, 3))", types = "('float', 'float')" }
  text = synthetic("conv depthwise", "convolution", "conv_fwd", "CONV_fwd",
    metrics_of("conv_fwd", "standalone", { d }, { finding("conv_fwd", { d }, { bound = "compute", low = 1, mid = 1.5, high = 2 }) }))
  has(text, "depthwise convolution", "conv depthwise class")
  has(text, "its reduction is only 9 long (1 input channel × 3×3 filter)", "conv implicit-GEMM K = 1·3·3")
  has(text, "for tile-size and wave-occupancy tuning", "conv compute action")
  -- the backward pass of a depthwise convolution: the filter from D[2] (grad_output leads), and no forward
  -- implicit-GEMM reduction (its gradients reduce over other dimensions)
  local b = op { name = "aten::convolution_backward", time_ms = 1.0, pct = 10.0, bound = "compute", eff = 5.0,
    spec = "matrix_fp32", dims = "((8, 64, 56, 56), (8, 64, 56, 56), (64, 1, 3, 3), (), (), (), (), (), (), (), ())",
    types = "('float', 'float', 'float')" }
  text = synthetic("conv depthwise backward", "convolution", "conv_bwd", "CONV_bwd",
    metrics_of("conv_bwd", "standalone", { b }, { finding("conv_bwd", { b }, { bound = "compute", low = 1, mid = 1.5, high = 2 }) }))
  has(text, "(3×3 filter, 64→64 channels, 56×56 input, FP32)", "conv backward: filter and channels from input and weight")
  has(text, "depthwise convolution", "conv backward: depthwise from the weight")
  lacks(text, "its reduction is only", "conv backward: no forward implicit-GEMM reduction")
end

do -- convolution: channels-last recovers only the conversion kernels inside the finding (Falconsai's patch
  -- embedding on an H100, from its unified_perf_summary.csv row: 129.6 µs of kernels, of which the
  -- cutlass fprop kernel 98.176, nchwToNhwc 10.4 + 10.464 and nhwcToNchw 2.208 = 23.072 µs (17.8%);
  -- end-to-end GPU time 7.559844 ms (gpu_timeline.csv), so channels-last recovers 23.072 / 7559.844 = 0.31%,
  -- against an impact_score of 1.49 for the op's whole efficiency gap)
  local function entry(name, us)
    return string.format("{'name': '%s', 'stream': 7, 'count': 1, 'total_duration_us': np.float64(%s), "
      .. "'mean_duration_us': np.float64(%s)}", name, us, us)
  end
  local FPROP = "cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8"
  local function kd(list)
    local parts = {}
    for i, e in ipairs(list) do parts[i] = entry(e[1], e[2]) end
    return "[" .. table.concat(parts, ", ") .. "]"
  end
  local falcon = { { "Memset (Device)", 2.112 },
    { "void cudnn::engines_precompiled::nhwcToNchwKernel<__nv_bfloat16, __nv_bfloat16, float, true, false, "
      .. "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nhwc2nchw_params_t<float>, __nv_bfloat16 const*, "
      .. "__nv_bfloat16*)", 2.208 },
    { "Memset (Device)", 2.272 },
    { "void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<at::native::CUDAFunctor_add<"
      .. "c10::BFloat16> >(at::TensorIteratorBase&)::{lambda(int)#1}>(int)", 3.968 },
    { "void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, false, true, "
      .. "(cudnnKernelDataType_t)0>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, __nv_bfloat16 const*, "
      .. "__nv_bfloat16*)", 10.4 },
    { "void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, __nv_bfloat16, float, false, true, "
      .. "(cudnnKernelDataType_t)1>(cudnn::engines_precompiled::nchw2nhwc_params_t<float>, __nv_bfloat16 const*, "
      .. "__nv_bfloat16*)", 10.464 },
    { "void cutlass__5x_cudnn::Kernel<" .. FPROP .. ">(" .. FPROP .. "::Params)", 98.176 } }
  local DIMS = "((4, 3, 224, 224), (768, 3, 16, 16), (768,), (), (), (), (), (), ())"
  local function conv(bound, eff, fpb)
    local o = op { name = "aten::convolution", count = 1, time_ms = 0.13, pct = 1.71, bound = bound, eff = eff, fpb = fpb,
      dims = DIMS, types = "('c10::BFloat16', 'c10::BFloat16', 'c10::BFloat16')", library = "cuDNN",
      kernel = "Memset (Device)<br>void cutlass__5x_cudnn::Kernel<" .. FPROP .. ">(" .. FPROP .. "::Params)" }
    o.efficiency.resolved_peak_maf, o.efficiency.resolved_peak_hbm_bw = 989.4, 3.35 -- H100: ridge 295 FLOP/B
    return o
  end
  local cs = json.obj("transpose_count", 0, "transpose_time_ms", 0.0, "transpose_overhead_percent", 0.0,
    "layout_kernel_time_ms", 0.023, "layout_kernel_percent", 17.8, "peak_maf_tflops", 989.4, "peak_hbm_bw_tbs", 3.35)
  local meta = json.encode(json.obj("platform", "H100", "peak_hbm_bw_tbs", 3.35, "max_achievable_tflops",
    json.obj("matrix_bf16", 989.4), "gpu_utilization", json.obj("total_time_ms", 7.559844)))
  local function render(o, kernels, what)
    local ops = { columns = { "name", "Input Dims", "Input Strides", "kernel_details_summary" }, rows = {
      { name = "aten::convolution", ["Input Dims"] = DIMS, kernel_details_summary = kd(kernels),
        ["Input Strides"] = "((150528, 50176, 224, 1), (768, 256, 16, 1), (1,), (), (), (), (), (), ())" } } }
    local m = metrics_of("conv_fwd", "standalone", { o }, { finding("conv_fwd", { o },
      { bound = o.efficiency.bound_type, library = "cuDNN", low = 1.28, mid = 1.49, high = 1.71 }) }, cs)
    local out = run_agent("convolution", "conv_fwd", "CONV_fwd", m, meta, ops)
    check_file("synthetic " .. what, "conv_fwd", json.encode(m), out.findings, "standalone")
    return out.findings, out.findings:match("%*%*Action%*%*: ([^\n]*)") or ""
  end
  -- memory-bound at 257.81 of 295 FLOP/B: the convolution kernel's tiles first, channels-last with its bound
  local text, action = render(conv("memory", 0.83, 257.81), falcon, "conv falconsai")
  T.check(action:find("^Profile `" .. FPROP .. "`, the convolution kernel of `aten::convolution` %(98%.18 of its "
    .. "129%.6 µs of kernel time%), for tile%-size and wave%-occupancy tuning%.") ~= nil,
    "conv falconsai: the action starts on the convolution kernel, got: " .. action)
  has(action, "`torch.backends.cudnn.benchmark = True`", "conv falconsai: cuDNN's algorithm choice")
  has(action, "removes only the NCHW/NHWC conversion kernels inside it: at most 0.023 ms, 0.31% of end-to-end GPU "
    .. "time, not the efficiency gap the impact_score measures.", "conv falconsai: what channels-last recovers")
  lacks(action, "Switch the model", "conv falconsai: channels-last is not the whole advice")
  has(text, "Of the 129.6 µs its kernels run, `" .. FPROP .. "` takes 98.18 µs and the NCHW/NHWC conversion kernels "
    .. "23.07 µs (17.8%): the gap lies mostly in the convolution kernel", "conv falconsai: where the kernel time goes")
  has(text, "The kernel name states its tile, 256 x 64 with a K step of 32 (`256x64_32x4`)", "conv falconsai: tile note")
  -- far below the ridge (50 of 295 FLOP/B): memory access of the convolution kernel, not tiles
  _, action = render(conv("memory", 0.83, 50.0), falcon, "conv memory far from ridge")
  T.check(action:find("^Optimize the memory%-access pattern of `" .. FPROP .. "`") ~= nil,
    "conv far from ridge: memory access, got: " .. action)
  -- conversions that are most of the op's kernel time: channels-last leads (2.112 + 2.208 + 2.272 + 3.968 + 10.4
  -- + 10.464 + 10 = 41.424 µs, conversions 23.072: 55.7%)
  local mostly = {}
  for i, e in ipairs(falcon) do mostly[i] = e end
  mostly[#mostly] = { falcon[#falcon][1], 10 }
  _, action = render(conv("memory", 0.83, 257.81), mostly, "conv mostly conversions")
  T.check(action:find("^Switching the model to the channels%-last memory layout") ~= nil,
    "conv mostly conversions: channels-last first, got: " .. action)
  -- an op without conversion kernels of its own: no channels-last advice, whatever the category's share
  local none = { falcon[1], falcon[4], falcon[7] }
  _, action = render(conv("memory", 0.83, 257.81), none, "conv no own conversions")
  lacks(action, "channels-last", "conv without conversions of its own")
  has(action, "cuDNN chose that kernel: with `torch.backends.cudnn.benchmark = True`", "conv without conversions: "
    .. "the library's choice, no conversions named")
end

do -- MoE: unfused stages -> fused kernel; memory-bound fused -> more tokens; NO_DATA note
  local o = op { name = "aiter::ck_moe_stage1", time_ms = 1.0, pct = 10.0, bound = "memory", eff = 20.0,
    dims = "((16, 4096), (64, 22016, 4096))", types = "('c10::BFloat16', 'c10::BFloat16')" }
  local text = synthetic("moe unfused", "moe", "moe_unfused", "MoE_unfused", metrics_of("moe_unfused", "standalone", { o },
    { finding("moe_unfused", { o }, { bound = "memory", library = "AITER", low = 1, mid = 1.5, high = 2 }) }))
  has(text, "to a fused MoE expert kernel.", "moe unfused action")
  has(text, "TB/s, FLOPS/Byte, and efficiency are uniform-routing approximations.", "moe uniform-routing note")
  has(text, "64 experts, 16 tokens, hidden size 4096", "moe shapes")
  text = synthetic("moe fused", "moe", "moe_fused", "MoE_fused", metrics_of("moe_fused", "standalone", { o },
    { finding("moe_fused", { o }, { bound = "memory", library = "AITER", low = 1, mid = 1.5, high = 2 }) }))
  has(text, "Route more tokens to each expert per call", "moe fused memory action")
  local fp4 = op { name = "aiter::fused_moe", time_ms = 1.0, pct = 10.0, bound = "compute", eff = 20.0, spec = "matrix_fp4" }
  text = synthetic("moe fp4", "moe", "moe_fused", "MoE_fused", metrics_of("moe_fused", "standalone", { fp4 },
    { finding("moe_fused", { fp4 }, { bound = "compute", low = 1, mid = 1.5, high = 2 }) }))
  lacks(text, "instead of FP4", "moe never narrows below FP4")
  local out = run_agent("moe", "moe_fused", "MoE_fused", json.obj("category", "moe_fused", "status", "NO_DATA",
    "comparison_scope", "standalone", "message", "No MoE operations detected in this trace (moe_fused bucket)",
    "total_time_ms", 0, "percent_of_compute", 0, "operation_count", 0, "operations", json.arr(), "category_specific", json.obj()))
  has(out.findings, "No MoE operations found in trace - model does not use Mixture of Experts", "moe NO_DATA note")
end

do -- triton, reduce, norm, elementwise rules
  local t = op { name = "triton_red_fused_add_native_layer_norm_0", time_ms = 1.0, pct = 10.0, bound = "memory", eff = 12.0,
    classification = json.obj("kernel_type", "reduction"), library = "Triton" }
  local text = synthetic("triton", "triton", "triton", "triton", metrics_of("triton", "standalone", { t },
    { finding("triton", { t }, { bound = "memory", library = "Triton", low = 1, mid = 1.5, high = 2 }) }))
  has(text, "dedicated library normalization or reduction kernel", "triton weak fused norm action")
  has(text, "fuses `add_native_layer_norm`", "triton fused ops from the name")
  local s = op { name = "aten::_softmax", time_ms = 1.0, pct = 10.0, bound = "memory", eff = 12.0,
    modules = { "Model", "SelfAttention", "Dropout" } }
  text = synthetic("reduce softmax", "reduce", "reduce", "reduce", metrics_of("reduce", "standalone", { s },
    { finding("reduce", { s }, { bound = "memory", low = 1, mid = 1.5, high = 2 }) }))
  has(text, "Softmax dominates this group.", "reduce softmax identification")
  has(text, "Fuse `aten::_softmax` with its neighbouring operations", "reduce softmax-in-attention action")
  local bn = op { name = "aten::batch_norm", time_ms = 1.0, pct = 10.0, bound = "memory", eff = 12.0,
    dims = "((8, 64, 56, 56), (64,), (64,))", types = "('float', 'float', 'float')" }
  text = synthetic("norm batchnorm", "norm", "norm_fwd", "NORM_fwd", metrics_of("norm_fwd", "standalone", { bn },
    { finding("norm_fwd", { bn }, { bound = "memory", low = 1, mid = 1.5, high = 2 }) }))
  has(text, "channels-last memory layout", "norm BatchNorm action")
  has(text, "The variant is BatchNorm", "norm variant")
  local e = op { name = "aten::pow", time_ms = 1.0, pct = 10.0, bound = "compute", eff = 12.0 }
  text = synthetic("elementwise compute", "elementwise", "elementwise", "elementwise", metrics_of("elementwise", "standalone",
    { e }, { finding("elementwise", { e }, { bound = "compute", low = 1, mid = 1.5, high = 2 }) }))
  has(text, "is really elementwise", "elementwise compute action")
  has(text, "`aten::pow` math op", "elementwise class in the noun")
  -- a launch-bound add (Qwen MI300X vs H100: 0.223 ms over 49 calls, 4.55 µs each, on one 16×559×1 FP32 tensor):
  -- its input read and an output as large written, 2 × 16 × 559 × 4 = 71552 bytes, take 71552 / 5.3e6 = 0.0135 µs
  -- at 5.3 TB/s, under a tenth of the call: no memory-access advice, fewer launches instead
  local tiny = op { name = "aten::add", count = 49, time_ms = 0.223, pct = 0.67, bound = "memory", eff = 36.63,
    dims = "((16, 559, 1), (), ())", types = "('float', 'double', 'Scalar')" }
  text = synthetic("elementwise launch-bound", "elementwise", "elementwise", "elementwise", metrics_of("elementwise",
    "standalone", { tiny }, { finding("elementwise", { tiny }, { bound = "memory", low = 0.6, mid = 0.7, high = 0.8 }) }))
  lacks(text, "Optimize the memory-access pattern", "launch-bound add: no memory-access advice")
  has(text, "**Action**: Do not tune the memory access of `aten::add` (one 16×559×1 FP32 tensor): each call lasts 4.6 µs, "
    .. "while reading its inputs and writing its output at the 5.3 TB/s peak takes about 0.01 µs, so launch and ramp-up "
    .. "take nearly all of its time and only fewer launches shorten it. Fuse it into a neighbouring kernel or batch its "
    .. "calls.", "launch-bound add: fewer launches")
  -- the standalone Qwen MI300X add (two 16×559×1024 BF16 tensors, 0.689 ms over 48 calls: 14.4 µs each, not short)
  local big = op { name = "aten::add", count = 48, time_ms = 0.689, pct = 2.08, bound = "memory", eff = 72.29,
    dims = "((16, 559, 1024), (16, 559, 1024), ())", types = "('c10::BFloat16', 'c10::BFloat16', 'Scalar')" }
  text = synthetic("elementwise memory", "elementwise", "elementwise", "elementwise", metrics_of("elementwise",
    "standalone", { big }, { finding("elementwise", { big }, { bound = "memory", low = 0.6, mid = 0.7, high = 0.8 }) }))
  has(text, "Optimize the memory-access pattern", "a 14.4 µs add of 18 MB tensors keeps the memory-access advice")
  lacks(text, "Do not tune", "a 14.4 µs add: not launch-bound")
end

do -- generic: heuristic miscategorized op, skipped communication, anomaly, collectives
  local moe = op { name = "vllm::rocm_aiter_fused_moe", count = 1, time_ms = 0.28, pct = 100.0, library = "AITER",
    kernel = "aiter_fused_moe_kernel_bf16", classification = json.obj("sub_category", "miscellaneous") }
  local anomalous = op { name = "aten::index_select", count = 3, time_ms = 0.2, pct = 5.0, bound = "memory", eff = 150.0,
    anomaly = true, classification = json.obj("sub_category", "miscellaneous") }
  local cs = json.obj("communication_count", 0, "graph_count", 0, "miscellaneous_count", 2, "peak_maf_tflops", 708,
    "peak_hbm_bw_tbs", 5.3, "communication_ops_skipped", json.obj("count", 2, "op_names", json.arr({ "nccl:all_reduce", "c10d::broadcast_" }),
      "message", "Communication kernels detected."))
  local text = synthetic("generic heuristic", "generic", "other", "other", metrics_of("other", "standalone", { moe, anomalous }, {
    finding("other", { moe }, { heuristic = true, bound = "unmodeled", library = "AITER", bucket = "unknown", pct = 100.0,
      low = 15.0, mid = 30.0, high = 45.0, rank = 1 }),
    finding("other", { anomalous }, { heuristic = true, bound = "unmodeled", bucket = "unknown", pct = 5.0,
      low = 0.75, mid = 1.5, high = 2.25, rank = 2 }) }, cs), { "Sub-Category" })
  has(text, "Treat `vllm::rocm_aiter_fused_moe` as MoE work: the trace gives no input shapes for it (record them with "
    .. "the profiler's `record_shapes=True`): with them, time a MoE kernel of the same shape", "generic reroute, no shapes")
  -- with shapes: timed as they are; a graph replay's synthetic op: its capture traces give them
  local shaped = op { name = "vllm::rocm_aiter_fused_moe", count = 1, time_ms = 0.28, pct = 100.0, library = "AITER",
    kernel = "aiter_fused_moe_kernel_bf16", classification = json.obj("sub_category", "miscellaneous"),
    dims = "((64, 4096), (8, 4096, 14336))", types = "('c10::BFloat16', 'c10::BFloat16')" }
  local graph = op { name = "hipGraphLaunch->fused_moe_kernel (Synthetic Op)", count = 1, time_ms = 0.2, pct = 50.0,
    kernel = "fused_moe_kernel", classification = json.obj("sub_category", "miscellaneous") }
  local unlinked = op { name = "fused_moe_kernel (no launching op)", count = 1, time_ms = 0.2, pct = 50.0,
    kernel = "fused_moe_kernel", classification = json.obj("sub_category", "miscellaneous") }
  for _, case in ipairs({ { shaped, "Treat `vllm::rocm_aiter_fused_moe` as MoE work: time a MoE kernel of the same shape "
      .. "in isolation" }, { graph, "as MoE work: the trace gives no input shapes for it (a graph replay records none; "
      .. "for a vLLM or SGLang trace, `--inference --capture_folder` with the graph's capture traces gives them, for a "
      .. "graph your own code captures, a profile of the same step run eagerly): with them, time" },
      { unlinked, "the trace gives no input shapes for it (no op of the trace launches it, so none is known)" } }) do
    local t2 = synthetic("generic reroute", "generic", "other", "other", metrics_of("other", "standalone", { case[1] }, {
      finding("other", { case[1] }, { heuristic = true, bound = "unmodeled", library = "AITER", bucket = "unknown",
        pct = 50.0, low = 15.0, mid = 30.0, high = 45.0, rank = 1 }) }, cs), { "Sub-Category" })
    has(t2, case[2], "generic reroute: " .. case[1].name)
  end
  -- a perf model without a peak for its compute spec (vLLM's MXFP4 MoE GEMMs on MI300X: `matrix_fp4`): no
  -- roofline, but the model's figures, not "no FLOPs or byte count is modelled"
  local fp4 = op { name = "pseudo_op::moe_triton_unfused_down", count = 24, time_ms = 3.762, pct = 35.02, fpb = 16.12,
    tflops = 15.68, tbs = 0.97, spec = "matrix_fp4", kernel = "_matmul_ogs_NNT_bf16xbf16xmxfp4_16x128x256x1",
    classification = json.obj("sub_category", "miscellaneous") }
  local t4 = synthetic("generic no peak", "generic", "other", "other", metrics_of("other", "standalone", { fp4 }, {
    finding("other", { fp4 }, { heuristic = true, bound = "unmodeled", bucket = "unknown", pct = 35.02, low = 10.0,
      mid = 20.0, high = 30.0, rank = 1 }) }, cs), { "Sub-Category" })
  has(t4, "takes 35.02% of GPU time with no roofline", "no peak: title")
  has(t4, "has a performance model but no roofline (the arch file has no peak for its compute spec `matrix_fp4`), "
    .. "yet takes", "no peak: insight")
  has(t4, "Its performance model gives 16.12 FLOPs per byte (15.68 TFLOPS and 0.97 TB/s achieved), but the arch file "
    .. "has no peak for its compute spec `matrix_fp4`, so no efficiency is computed", "no peak: reasoning")
  has(t4, "> **Warning — estimated:** No roofline covers this operation: the arch file has no peak for its compute spec "
    .. "`matrix_fp4`.", "no peak: warning")
  lacks(t4, "No FLOPs or byte count is modelled", "no peak: the model is there")
  lacks(t4, "no performance model", "no peak: the model is there")
  -- no arch file at all (vLLM's unnamed MI300X): a BF16 GEMM at 31.45 FLOP/B is below every shipped file's BF16
  -- ridge (the lowest given here: MI210's 181 TFLOPS over 1,600 GB/s, 113 FLOP/B), so memory-bound on any of them;
  -- an MXFP4 GEMM is not judged (a GPU without an FP4 peak runs it in another format)
  local ridges = json.encode({ matrix_bf16 = { ridge = 181 * 1000 / 1600, name = "MI210" },
    matrix_fp4 = { ridge = 1125, name = "B200" } })
  local gq = op { name = "vllm::rocm_unquantized_gemm", count = 96, time_ms = 1.231, pct = 11.5, fpb = 31.45,
    tflops = 20.0, tbs = 0.64, spec = "matrix_bf16", kernel = "wvSplitK_hf_" }
  local no_arch = run_agent("generic", "other", "other", metrics_of("other", "standalone", { gq }, {
    finding("other", { gq }, { heuristic = true, bound = "unmodeled", bucket = "unknown", pct = 11.5, low = 3.0,
      mid = 5.0, high = 7.0, rank = 1 }) }, cs), "{}", nil, { shipped_ridges = ridges })
  has(no_arch.findings, "Its 31.45 FLOP/B is below the ridge point of every shipped arch file with a matrix_bf16 peak "
    .. "(the lowest, MI210's, is about 113 FLOP/B): whichever of those GPUs this is, the op is memory-bound",
    "no arch: below every BF16 ridge")
  has(no_arch.findings, "move fewer bytes", "no arch: the memory-bound action")
  fp4.efficiency.compute_spec = "matrix_fp4"
  local no_arch4 = run_agent("generic", "other", "other", metrics_of("other", "standalone", { fp4 }, {
    finding("other", { fp4 }, { heuristic = true, bound = "unmodeled", bucket = "unknown", pct = 35.02, low = 10.0,
      mid = 20.0, high = 30.0, rank = 1 }) }, cs), "{}", nil, { shipped_ridges = ridges })
  lacks(no_arch4.findings, "ridge point", "no arch: no verdict on an FP4 op")
  has(no_arch4.findings, "with hardware counters to learn whether it is compute-bound or memory-bound",
    "no arch, FP4: profile for the bound")
  has(text, "## Communication Kernels (Skipped)", "generic skipped section")
  has(text, "`nccl:all_reduce` and `c10d::broadcast_`", "generic skipped names")
  has(text, "[ANOMALY] - verify measurement", "generic anomaly")
  has(text, "Sub-category is heuristic — verify against op semantics before acting on it.", "generic fallback")
  T.check(text:find("## Communication Kernels (Skipped)", 1, true) < text:find("## Recommendations", 1, true),
    "generic skipped section before the cards")
  local c = op { name = "custom::all_gather", time_ms = 1.0, pct = 10.0, bound = "memory", eff = 20.0,
    classification = json.obj("sub_category", "communication") }
  text = synthetic("generic collective", "generic", "customcollective", "CustomCollective",
    metrics_of("customcollective", "standalone", { c }, { finding("customcollective", { c }, { bound = "memory", low = 1, mid = 1.5, high = 2 }) }),
    { "Sub-Category" })
  has(text, "beside independent compute", "generic collective action")
  lacks(text, "Communication Kernels (Skipped)", "no skipped section outside other")
  local out = run_agent("generic", "other", "other", metrics_of("other", "standalone", {}, {}))
  has(out.findings, "No uncategorized operations found in trace", "generic missing note")
end

do -- comparative: times and gaps, never the efficiency ratio; count mismatch explained
  local o = op { name = "aten::bmm", count = 2, time_ms = 0.18, pct = 10.0, bound = "memory", eff = 44.44, fpb = 51.2,
    t2 = 0.08, count2 = 4, diff = -0.1 }
  local text = synthetic("comparative", "gemm", "gemm", "GEMM", metrics_of("gemm", "comparative", { o },
    { finding("gemm", { o }, { bound = "memory", bucket = "all", low = 26.79, mid = 31.25, high = 35.72 }) }))
  has(text, "### P1: Memory-bound BF16 GEMM slower in Trace 1 than in Trace 2\n", "comparative title")
  has(text, "takes 0.18 ms in Trace 1 against 0.08 ms in Trace 2 over 2 calls, so Trace 1 is 125.0% slower.",
    "comparative insight: (0.18-0.08)/0.08")
  has(text, "The absolute gap is 0.1 ms.", "comparative gap")
  has(text, "Its 2 calls in Trace 1 align with 4 regions of Trace 2 (TraceDiff's lowest common ancestors, the Count "
    .. "column's second figure): the Trace 2 time covers those regions, not a call-by-call match.",
    "comparative count mismatch: count_trace2 counts aligned regions, not calls")
  lacks(text, "call counts differ", "no claim about Trace 2's calls")
  lacks(text, "under a tenth", "a 2.25x gap is not questioned")
  -- a tenfold gap: the alignment is to be checked
  local x = op { name = "aten::mm", count = 2, time_ms = 1.0, pct = 10.0, bound = "memory", eff = 44.44, fpb = 51.2,
    t2 = 0.05, count2 = 2, diff = -0.95 }
  local text2 = synthetic("comparative", "gemm", "gemm", "GEMM", metrics_of("gemm", "comparative", { x },
    { finding("gemm", { x }, { bound = "memory", bucket = "all", low = 26.79, mid = 31.25, high = 35.72 }) }))
  has(text2, "Trace 2 takes under a tenth of Trace 1's time: before reading the gap as slower kernels, check that "
    .. "the region of Trace 2 TraceDiff aligned it with runs the same work", "comparative: a 20x gap is questioned")
  has(text, "| 2 / 4 | -0.1 |", "comparative count and difference cells")
  lacks(text, "44.44", "comparative prose has no efficiency ratio")
  lacks(text, "FP8", "comparative gives no precision advice")
  lacks(text, "HBM bandwidth (", "comparative: no hardware sentence without trace 2's arch")
  -- trace 2's GPU has more HBM bandwidth (H100 3.35 against MI300X 5.3 TB/s: 1.58 times); a member at
  -- 3.08 TB/s is 92% of trace 1's peak, one at 1.0 TB/s is not near it
  local h100 = json.encode(json.obj("platform", "H100", "peak_hbm_bw_tbs", 3.35, "max_achievable_tflops",
    json.obj("matrix_bf16", 600)))
  local near = op { name = "aten::add", count = 48, time_ms = 0.85, pct = 5.0, bound = "memory", eff = 48.0, tbs = 3.08,
    t2 = 0.6, count2 = 48, diff = -0.25 }
  local far = op { name = "aten::mul", count = 48, time_ms = 0.5, pct = 3.0, bound = "memory", eff = 30.0, tbs = 1.0,
    t2 = 0.3, count2 = 48, diff = -0.2 }
  local cm = metrics_of("elementwise", "comparative", { near, far },
    { finding("elementwise", { near, far }, { bound = "memory", bucket = "all", low = 2.0, mid = 3.0, high = 4.0 }) })
  local hw = run_agent("elementwise", "elementwise", "elementwise", cm, h100, nil,
    { trace2_arch = json.encode({ name = "MI300X", mem_bw_gbps = 5300 }) })
  has(hw.findings, "Trace 2's GPU (MI300X) has 1.58 times Trace 1's HBM bandwidth (5.30 against 3.35 TB/s, the arch "
    .. "files' figures), so memory-bound work can run up to that much faster there with no change to it; one member "
    .. "already reaches 80% or more of Trace 1's peak (`aten::add`", "comparative: trace 2's bandwidth")
  has(hw.findings, "at 3.08 TB/s, 92%), where tuning cannot close the gap.", "comparative: the member near the peak")
  lacks(hw.findings, "`aten::mul` at 1", "comparative: a member far from the peak is not listed")
  -- the same GPU on both sides: nothing to say
  hw = run_agent("elementwise", "elementwise", "elementwise", cm, h100, nil,
    { trace2_arch = json.encode({ name = "H100", mem_bw_gbps = 3350 }) })
  lacks(hw.findings, "HBM bandwidth (", "comparative: the same bandwidth, no sentence")
end

do -- comparative: TraceDiff's alignment against trace 2's own calls of the same signature
  -- (tracelens.analysis trace2_side; docs/compat.md "Comparative: the same
  -- signature in Trace 2"). The rows are HTA's sampled ranks' aten::mm of
  -- M=8192, N=8192, K=512: 2 calls, 2503 µs in trace 1; TraceDiff aligned them
  -- with 20 µs of trace 2 work; trace 2 runs the same 2 calls for 2611 µs.
  local analysis = require "tracelens.analysis"
  local KT = "Kernel Time (µs)_sum"
  local function row(t)
    local r = { name = "aten::mm", ["Input Dims"] = "((8192, 512), (512, 8192))", ["Input type"] = "('float', 'float')",
      operation_count = 2, [KT] = 2503.0, lca_count_trace2 = 2, lca_total_kernel_time_trace2_us = 20.0,
      ["delta_us (trace2 - trace1)"] = 20.0 - 2503.0, ["speedup (trace2/trace1)"] = 20.0 / 2503.0,
      trace2_same_signature_count = 2, trace2_same_signature_kernel_time_us = 2611.0,
      trace2_same_name_count = 5, trace2_same_name_kernel_time_us = 3000.0 }
    for k, v in pairs(t or {}) do r[k] = v end
    for k, v in pairs(r) do if v == false then r[k] = nil end end
    return r
  end
  local cols = {}
  for k in pairs(row()) do cols[k] = true end
  local meta = { gpu_utilization = { total_time_ms = 100.0 } }
  local function one(t) return analysis.operations({ row(t) }, cols, meta, {}, "comparative")[1] end
  -- 1. the alignment faces the calls with 20 µs: compared with trace 2's own calls, not slower
  local o = one()
  T.eq(o.trace2_basis, "same_signature", "same signature: basis")
  T.eq(o.t2_time_ms, 2.611, "same signature: trace 2 time")
  T.eq(o.count_trace2, 2, "same signature: trace 2 calls")
  T.eq(o.difference_ms, 0.108, "same signature: difference 2.611 - 2.503")
  T.eq(o.t2_aligned_ms, 0.02, "same signature: what TraceDiff aligned")
  T.eq(o.efficiency.efficiency_percent, 104.31, "same signature: 100 x 2611 / 2503")
  T.eq(#analysis.impact_estimates({ o }, "gemm", 100.0, "comparative"), 0, "same signature: not slower, no estimate")
  T.eq(o.t2_other_shapes, nil, "same signature: no tenfold gap to question")
  -- 2. four calls in trace 2 for 2610 µs: 1305 µs for trace 1's two; the
  -- direct gap (1198) is under half the aligned one (2483)
  o = one { trace2_same_signature_count = 4, trace2_same_signature_kernel_time_us = 2610.0 }
  T.eq(o.trace2_basis, "same_signature", "scaled: basis")
  T.eq(o.t2_time_ms, 1.305, "scaled: 2610 x 2 / 4")
  T.eq(o.count_trace2, 4, "scaled: trace 2's own call count")
  T.eq(o.efficiency.efficiency_percent, 52.14, "scaled: 100 x 1305 / 2503")
  -- 3. the alignment agrees with trace 2's calls (gaps 503 and 453 µs): TraceDiff's figures, as the reference
  o = one { lca_total_kernel_time_trace2_us = 2000.0, ["delta_us (trace2 - trace1)"] = -503.0,
    trace2_same_signature_kernel_time_us = 2050.0 }
  T.eq(o.trace2_basis, nil, "consistent alignment: basis kept")
  T.eq(o.t2_time_ms, 2.0, "consistent alignment: the aligned time")
  T.eq(o.efficiency.efficiency_percent, 79.9, "consistent alignment: 100 x 2000 / 2503")
  -- 4. no trace 2 work aligned, the signature runs in trace 2: compared with it
  o = one { lca_count_trace2 = 0, lca_total_kernel_time_trace2_us = 0.0, ["delta_us (trace2 - trace1)"] = -2503.0 }
  T.eq(o.trace2_basis, "same_signature", "no aligned work: basis")
  T.eq(o.no_trace2_counterpart, nil, "no aligned work, same signature in trace 2: compared")
  T.eq(o.t2_aligned_ms, json.null, "no aligned work: nothing aligned")
  -- 5. neither: not compared
  o = one { lca_count_trace2 = 0, lca_total_kernel_time_trace2_us = 0.0, ["delta_us (trace2 - trace1)"] = -2503.0,
    trace2_same_signature_count = false, trace2_same_signature_kernel_time_us = false }
  T.eq(o.no_trace2_counterpart, true, "no counterpart at all: flagged")
  T.eq(o.efficiency.efficiency_percent, json.null, "no counterpart at all: no efficiency")
  -- 6. a tenfold gap on the aligned figure (0.2 against 2.503 ms), the
  -- signature absent from trace 2: what trace 2 runs under other shapes
  o = one { lca_total_kernel_time_trace2_us = 200.0, ["delta_us (trace2 - trace1)"] = -2303.0,
    trace2_same_signature_count = false, trace2_same_signature_kernel_time_us = false }
  T.eq(o.trace2_basis, nil, "tenfold gap: the aligned figure")
  T.eq(o.t2_time_ms, 0.2, "tenfold gap: trace 2 time")
  T.eq(o.t2_other_shapes.count, 5, "tenfold gap: trace 2's calls under other shapes")
  T.eq(o.t2_other_shapes.time_ms, 3.0, "tenfold gap: their time")
  -- a ninefold one is not questioned
  o = one { lca_total_kernel_time_trace2_us = 280.0, ["delta_us (trace2 - trace1)"] = -2223.0,
    trace2_same_signature_count = false, trace2_same_signature_kernel_time_us = false }
  T.eq(o.t2_other_shapes, nil, "ninefold gap: no other shapes")

  -- the prose of a re-based member, and of a tenfold gap with other shapes in trace 2
  local s = op { name = "aten::cat", count = 10, time_ms = 5.15, pct = 10.0, bound = "memory", eff = 83.75, fpb = 1.0,
    t2 = 4.313, count2 = 36, diff = -0.837 }
  s.trace2_basis, s.t2_same_signature_ms, s.t2_aligned_ms = "same_signature", 15.526, 1.136
  local text = synthetic("comparative same signature", "gemm", "gemm", "GEMM", metrics_of("gemm", "comparative", { s },
    { finding("gemm", { s }, { bound = "memory", bucket = "all", low = 26.79, mid = 31.25, high = 35.72 }) }))
  has(text, "The Trace 2 time is that of its own calls with the same name and shapes (36 calls, 15.526 ms; 4.313 ms "
    .. "for as many calls as Trace 1's 10): the Trace 2 regions TraceDiff aligns with these calls hold 1.136 ms of "
    .. "GPU work, which would make the gap more than twice what it is against Trace 2's own calls.",
    "same signature: what the Trace 2 time is")
  lacks(text, "regions of Trace 2 (TraceDiff's lowest common ancestors", "same signature: no aligned-regions sentence")
  local x = op { name = "aten::mm", count = 2, time_ms = 1.0, pct = 10.0, bound = "memory", eff = 5.0, fpb = 51.2,
    t2 = 0.05, count2 = 2, diff = -0.95 }
  x.t2_other_shapes = json.obj("count", 3, "time_ms", 7.5)
  text = synthetic("comparative other shapes", "gemm", "gemm", "GEMM", metrics_of("gemm", "comparative", { x },
    { finding("gemm", { x }, { bound = "memory", bucket = "all", low = 26.79, mid = 31.25, high = 35.72 }) }))
  has(text, "Under other shapes, Trace 2 runs `aten::mm` 3 times for 7.5 ms.", "tenfold gap: trace 2's other shapes")
end

do -- convolution: the NCHW/NHWC conversion kernels inside the convolutions are layout time
  -- (Falconsai's patch embedding: 23.07 of 129.6 µs in cuDNN's nchwToNhwc / nhwcToNchw kernels)
  local categories = require "tracelens.categories"
  local function entry(name, us)
    return string.format("{'name': '%s', 'stream': 7, 'count': 1, 'total_duration_us': %s, 'mean_duration_us': %s}",
      name, us, us)
  end
  local kd = "[" .. table.concat({ entry("Memset (Device)", 2.112),
    entry("void cudnn::engines_precompiled::nhwcToNchwKernel<__nv_bfloat16, float>(float const*)", 10.5),
    entry("void cudnn::engines_precompiled::nchwToNhwcKernel<__nv_bfloat16, float>(float const*)", 12.57),
    entry("cutlass__5x_cudnn::Kernel<cutlass_tensorop_bf16_s16816fprop_optimized>(Params)", 104.418) }, ", ") .. "]"
  local rows = { { name = "aten::convolution", ["Kernel Time (µs)_sum"] = 129.6, kernel_details_summary = kd },
    { name = "aten::transpose", ["Kernel Time (µs)_sum"] = 0.0 } }
  local cs = categories.config("conv_fwd").category_specific(rows, {}, {})
  T.close(cs.layout_kernel_time_ms, 0.023, "conv: layout conversion kernels, 10.5 + 12.57 µs", 0, 1e-9)
  T.close(cs.layout_kernel_percent, 17.8, "conv: 23.07 of 129.6 µs", 0, 1e-9)
  T.eq(cs.transpose_overhead_percent, 0, "conv: no time in ops named transpose")
  T.eq(require("tracelens.analysis").kernel_library("aten::convolution", kd), "cuDNN", "conv: the cuDNN kernels' library")
  -- OWLv2's aten::addmm on an H100: a CUTLASS kernel of cuBLASLt and its split-K reduction, not rocBLAS's
  T.eq(require("tracelens.analysis").kernel_library("aten::addmm", "[" .. table.concat({
    entry("void cutlass::Kernel2<cutlass_80_tensorop_s16816gemm_bf16_64x64_64x5_tn_align8>(Params)", 20.1),
    entry("void cublasLt::splitKreduce_kernel<32, 16, int, float, __nv_bfloat16, float>"
      .. "(cublasLt::cublasSplitKParams<float>)", 2.3) }, ", ") .. "]"), "cuBLAS", "addmm: cuBLASLt's split-K GEMM")
  -- an older cuBLAS's reduction (HTA's trace_filter, A100): still not rocBLAS
  T.eq(require("tracelens.analysis").kernel_library("aten::addmm", "[" .. entry("void splitKreduce_kernel<float, "
    .. "float, float, float, true, false, false>(cublasSplitKParams<float>, float const*)", 3.1) .. "]"), "cuBLAS",
    "addmm: cuBLAS's split-K reduction")
  -- kernels without a launching op (the MI210 gpu_only_trace): MIOpen's
  -- implicit-GEMM convolutions and its layout conversions are convolution work
  local prepare = require "tracelens.prepare"
  for name, want in pairs({
    ["igemm_fwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x256x32_wt16x64x4_ws1x1_wr1x2"] = "CONV_fwd",
    ["igemm_bwd_gtcx2_nhwc_bf16_bx0_ex1_bt32x128x32_wt16x64x4_ws1x1_wr1x1"] = "CONV_bwd",
    ["igemm_wrw_gtcx2_nhwc_bf16_bx0_ex1_bt256x128x16_wt32x32x8_ws2x1_wr2x2"] = "CONV_bwd",
    ["batched_transpose_16x64_pack_1x4_ediv_1x2_half"] = "CONV_fwd",
    ["Cijk_Ailk_Bjlk_BBS_BH_Bias_HAS_SAV_UserArgs_MT128x64x32"] = "GEMM" }) do
    T.eq(prepare.unlinked_category(name, "kernel"), want, "unlinked category of " .. name)
  end
end

do -- every analyzer: no data, error
  for _, agent in ipairs({ "gemm", "sdpa", "elementwise", "reduce", "norm", "convolution", "moe", "triton", "generic" }) do
    local out = run_agent(agent, "x_cat", "X", json.obj("category", "x_cat", "status", "ERROR", "error", "boom",
      "comparison_scope", "standalone"))
    has(out.findings, "Status: ERROR", agent .. " error file")
    has(out.findings, "boom", agent .. " error text")
    lacks(out.findings, "### P", agent .. " error file has no card")
    out = run_agent(agent, "x_cat", "X", metrics_of("x_cat", "standalone", {}, {}))
    T.check(out.findings:find("No [%w ]+ operations found in trace"), agent .. " missing-data note")
    lacks(out.findings, "### P", agent .. " no-data file has no card")
  end
  -- a raising numeric step becomes an ERROR metrics object and file
  stub_analysis(function() error("exploded") end)
  local out = assert(loadfile(root .. "/agents/gemm.lua"))({ category = "gemm", display_name = "GEMM", scope = "standalone" })
  package.loaded["tracelens.analysis"] = nil
  has(out.findings, "Status: ERROR", "raising analysis -> error file")
  T.eq(json.decode(out.metrics).status, "ERROR", "raising analysis -> ERROR metrics")
end

-- 3. The analyzers through tl.parallel on the agent-case traces ------------------------

local cases = shared .. "/agent_cases/standalone"
local ok_prepare, prepare = pcall(require, "tracelens.prepare")
local categories = require "tracelens.categories"
if T.dir_exists(cases) and ok_prepare then
  for _, dir in ipairs(T.glob(cases .. "/*")) do
    local name = dir:match("([^/]+)$")
    local trace = tl.load(dir .. "/trace.json", { include_call_stack = true })
    local sheets = trace:report { platform = "MI300X", group_by_num_kernels = true, include_call_stack = true,
      enable_pseudo_ops = true }
    local plat = trace:platform { platform = "MI300X" }
    local out_dir = T.tmpdir()
    local prep = prepare.run { out_dir = out_dir, trace_path = dir .. "/trace.json", platform = "MI300X",
      arch = json.decode(read(plat.path)), scope = "standalone", sheets = sheets }
    local tasks = {}
    for i, c in ipairs(prep.compute) do
      tasks[i] = { script = root .. "/agents/" .. categories.agent(c.name) .. ".lua", name = c.name,
        args = { { category = c.name, display_name = c.display, scope = "standalone", out_dir = out_dir, ops = c.ops,
          metadata = c.metadata_text } } }
    end
    local results = tl.parallel(tasks)
    -- the reference report's compute markers, in order
    local ref = read(dir .. "/ref/analysis.md") or ""
    local ref_markers = {}
    for cat, low, mid, high in ref:gmatch("kind=p_item category=(%S+) low=(%S+) mid=(%S+) high=(%S+) %-%->") do
      ref_markers[#ref_markers + 1] = { cat, low, mid, high }
    end
    local k = 0
    for i, r in ipairs(results) do
      local cat = prep.compute[i].name
      T.check(r.ok, name .. " " .. cat .. ": " .. tostring(r.error))
      if r.ok then
        write(out_dir .. "/category_data/" .. cat .. "_metrics.json", r.value.metrics)
        check_file(name .. " " .. cat, cat, r.value.metrics, r.value.findings, "standalone",
          categories.agent(cat) == "generic" and { "Sub-Category" } or nil)
        for low, mid, high in r.value.findings:gmatch("kind=p_item low=(%S+) mid=(%S+) high=(%S+) %-%->") do
          k = k + 1
          local want = ref_markers[k] or {}
          T.eq(cat .. " " .. low .. " " .. mid .. " " .. high, table.concat(want, " "), name .. ": marker equals the reference's")
        end
      end
    end
    T.eq(k, #ref_markers, name .. ": as many compute findings as the reference")
    T.rmrf(out_dir)
  end
else
  print("note: agent cases or tracelens.prepare not available; the live analyzer runs are skipped")
end

T.finish()

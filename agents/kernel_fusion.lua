-- agents/kernel_fusion.lua — the kernel-fusion analyzer (experimental;
-- agents-and-report.md §3.3, validated as tier `fusion`).
--
-- ctx = {scope, out_dir, manifest = <category_manifest.json text>,
--        candidates = <fusion_candidates.json text>, metrics = <kernel_fusion_metrics.json text>,
--        unified = <unified_perf_summary Table or array of rows> (the "Perf model" column),
--        kernel_facts = <JSON text: each candidate kernel's stream and launching op, by gpu_op_uid>}
-- returns {findings = <system_findings/kernel_fusion_findings.md text>}
--
-- The candidate list is impact_estimates[] (already gated and sorted by the
-- numeric step), joined to fusion_candidates.json on base_name. Decision 1
-- (set aside containers and independent GEMMs), Decision 2 (pattern name) and
-- Decision 3 (action) are the rules of tracelens.fusion_rules. Cards are
-- numbered by impact_score, highest first; the icon is the rank (🔴 P1, 🟡 P2,
-- 🟢 after), as in every section of analysis.md; the confidence is in words.
local sf = require "tracelens.system_findings"
local rules = require "tracelens.fusion_rules"
local F = require "tracelens.findings"
local json = require "tracelens.json"
local md = require "tracelens.md"
local py = require "tracelens.py"
local prose = require "tracelens.prose"
local tl = require "tracelens"

local ctx = ...

local TITLE = "# Kernel Fusion Analysis Summary (Experimental)"
local NO_OPPORTUNITY = TITLE .. "\n\nNo kernel fusion opportunities detected.\n"
local KERNEL_NAME_CHARS = 70

local comparative = ctx.scope == "comparative"
local manifest = sf.decode(ctx.manifest) or {}
local metrics, metrics_error = sf.decode(ctx.metrics)
local candidates = sf.decode(ctx.candidates) or {}
local baseline_ms = sf.value((manifest.gpu_utilization or {}).total_time_ms)
-- tracelens.fusion.kernel_facts: stream and launching op of each candidate kernel
local kernel_facts = sf.decode(ctx.kernel_facts) or {}

local function num(v) return sf.present(v) and json.number_text(v) or "—" end

-- "Yes"/"No": whether the fusion estimator found a perf model (Data Moved)
-- for the kernel, with its own lookup (analysis-layer.md §10 step 6, §6.8
-- shape_aware_lookup); "—" when the perf summary is not available.
local lookups = require "tracelens.fusion.lookup"
local lookup = ctx.unified and lookups.perf_lookup(ctx.unified)

local function perf_model(name, input_dims)
  if not lookup then return "—" end
  return lookups.shape_aware_lookup(lookup, name, input_dims)["Data Moved (MB)"] ~= nil and "Yes" or "No"
end

-- Candidates ------------------------------------------------------------------

-- The trace-1 kernels of a candidate (comparative candidates keep kernels_trace1).
local choose = require "tracelens.fusion.choose"
local function kernels_of(c) return choose.kernels_of(c, comparative) end

local function instances(n)
  n = math.tointeger(n) or n
  return tostring(n) .. (n == 1 and " instance" or " instances")
end

-- "12 instances", or, when the module's other instances launch another
-- kernel sequence (base_instance_count: each sequence is a candidate of its
-- own), "12 of its 24 instances" and, with `why`, "(the other 12 launch a
-- different kernel sequence)".
local function instances_of(n, of, why)
  n, of = math.tointeger(n) or n, math.tointeger(of) or of
  if type(of) ~= "number" or type(n) ~= "number" or of <= n then return instances(n) end
  local text = string.format("%s of its %s instances", tostring(n), tostring(of))
  if not why then return text end
  local rest = math.tointeger(of - n) or (of - n)
  return string.format("%s (the other %s launch%s a different kernel sequence)", text, tostring(rest),
    rest == 1 and "es" or "")
end

local function heading(f)
  return string.format("%s (%s ms, %s)", md.text(f.pattern.name), num(f.estimate.time_ms),
    instances(f.estimate.instance_count))
end

-- The kernels counted by what they do (rules.kernel_label: the words of the
-- kernel table's Type column too): "1 Fill, 3 BatchNorm".
local function composition_text(c) return md.text(rules.label_counts(kernels_of(c))) end

-- The view of a candidate the fusion rules read: its trace-1 kernels and the kernel facts.
local function view_of(c)
  return { base_name = c.base_name, module_name = c.module_name, kernels = kernels_of(c), facts = kernel_facts }
end

-- The function name of a kernel, without its namespaces, template arguments
-- and parameters: `void at::native::(anonymous namespace)::layer_norm_grad_input_kernel_vectorized<float>(…)`
-- -> layer_norm_grad_input_kernel_vectorized.
local function function_name(name)
  local s = tostring(name):gsub("%(anonymous namespace%)::", ""):gsub("^void ", "")
  s = s:match("^[^<(]*") or s
  return s:match("([^:]+)$") or s
end

local function kernel_names(ks)
  local out = {}
  for i, k in ipairs(ks) do out[i] = md.code(function_name(rules.kernel_name(k))) end
  return table.concat(out, " and ")
end

local function sum_us(ks)
  local t = 0
  for _, k in ipairs(ks) do t = t + (tonumber(k.dur_us) or 0) end
  return t
end

-- a duration given in µs: "306.1 µs", or "10.745 ms" from 1 ms on
local function us(x)
  if x >= 1000 then return string.format("%.3f ms", x / 1000) end
  return string.format("%.1f µs", x)
end

local function impact_line(e)
  if comparative then return "**Impact**: impact_score: " .. num(e.impact_score) end
  return string.format("**Impact**: impact_score: %s (perf-model coverage %s/%s kernels)", num(e.impact_score),
    num(e.modeled_kernel_count), num(e.kernel_count))
end

local function insight(f)
  local c, e = f.candidate, f.estimate
  local where = md.code(rules.module_label(c))
  local parent = rules.parent_module(c)
  if parent then where = where .. " (inside " .. md.code(parent) .. ")" end
  local count = #kernels_of(c)
  local text = string.format("%s launches %d separate GPU kernels per instance (%s) over %s, with no fused kernel "
    .. "in its subtree", where, count, composition_text(c), instances_of(e.instance_count, c.base_instance_count, true))
  local p = f.pattern
  local r = p.roles
  if p.kind == "norm_passes" then
    -- two passes over the data (statistics, then applying them) and small kernels on per-channel data
    local second = p.backward and "reads them again to compute the input gradient" or "reads it again to normalize it"
    text = text .. string.format(". %s %s the whole input%s, and %s %s", kernel_names(r.stats),
      #r.stats == 1 and "reads" or "read", p.backward and " and output gradient to reduce them" or " to compute its "
      .. "statistics", kernel_names(r.apply), second)
    if #r.extra == 1 then
      text = text .. string.format("; the other kernel (%s) takes %s of the first instance's %s",
        md.text(rules.kernel_label(r.extra[1])), us(sum_us(r.extra)), us(sum_us(kernels_of(c))))
    elseif #r.extra > 1 then
      text = text .. string.format("; the other %d kernels (%s) take %s of the first instance's %s", #r.extra,
        md.text(rules.label_counts(r.extra)), us(sum_us(r.extra)), us(sum_us(kernels_of(c))))
    end
    text = text .. ". The second pass needs results over the whole input from the first, so the two stay two passes "
      .. "over memory unless a kernel keeps the data on chip between them."
  elseif p.kind == "norm_backward" then
    local parts = {}
    if #r.input_grad > 0 then parts[#parts + 1] = kernel_names(r.input_grad) .. " computes the input gradient" end
    if #r.weight_grad > 0 then
      parts[#parts + 1] = kernel_names(r.weight_grad) .. " reduces the weight and bias (γ/β) gradients over the batch"
    end
    text = text .. ". In this backward, " .. table.concat(parts, " and ")
    if #r.accumulate > 0 then
      local op = (rules.fact(view_of(c), r.accumulate[1]) or {}).op or "aten::add_"
      text = text .. string.format("; the %s, launched by %s in the autograd node but outside its %s "
        .. "backward function, is autograd adding that input gradient to the gradient the input already has from its "
        .. "other consumers, so the input gradient is written to memory and read back by the add.",
        #r.accumulate == 1 and "add" or (#r.accumulate .. " adds"), md.code(op), p.norm)
    else
      text = text .. "."
    end
  else
    text = text .. ", so each intermediate result one of them passes to the next makes a round trip through memory "
      .. "(the trace records no tensor identities: that they pass results on is read from the module)."
  end
  if comparative then
    local n2 = c.kernel_count_trace2
    text = text .. string.format(" Trace 2 runs the same module with %s kernel%s.", num(n2), n2 == 1 and "" or "s")
  end
  return text
end

local function card(n, f)
  local word, reason = rules.confidence(view_of(f.candidate), f.estimate.confidence)
  local action = rules.action(f.candidate, f.pattern)
  if comparative then action = action .. " Trace 2 shows that a fused path exists for this module." end
  return table.concat({
    string.format("### %s P%d: %s", rules.icon_at(n), n, heading(f)), "",
    "**Insight**: " .. insight(f), "",
    "**Action**: " .. action, "",
    F.p_item_marker(f.estimate),
    impact_line(f.estimate),
    "<!-- impact-end -->", "",
    "**Confidence**: " .. word .. " — " .. reason,
  }, "\n")
end

-- Detailed Analysis -------------------------------------------------------------

-- A kernel name cut to KERNEL_NAME_CHARS characters, as a code span in a
-- table cell: every name shows as written, template arguments included
-- (inline text would turn `<BF16>`, which reads as an HTML tag, into an
-- entity and leave `<BF16, 128>` as it is).
local function short_name(name)
  if utf8.len(name) and utf8.len(name) > KERNEL_NAME_CHARS then
    name = name:sub(1, utf8.offset(name, KERNEL_NAME_CHARS + 1) - 1) .. "..."
  end
  return md.code(name, true)
end

local function duration(k)
  local d = tonumber(k.dur_us) or 0
  return string.format("%.1f", d)
end

local function kernel_table(kernels, with_model, input_dims)
  local lines
  if with_model then
    lines = { "| Kernel | Type | Duration (us) | Perf model |", "|--------|------|--------------|------------|" }
  else
    lines = { "| Kernel | Type | Duration (us) |", "|--------|------|--------------|" }
  end
  for _, k in ipairs(kernels) do
    local name = rules.kernel_name(k)
    local cells = { short_name(name), md.cell(rules.kernel_label(k)), duration(k) }
    if with_model then cells[4] = perf_model(name, input_dims) end
    lines[#lines + 1] = "| " .. table.concat(cells, " | ") .. " |"
  end
  return table.concat(lines, "\n")
end

-- ", all on GPU stream 7," when the kernel facts give the kernels' one stream
local function stream_text(c)
  local streams = rules.streams(view_of(c))
  if #streams ~= 1 then return "" end
  return ", all on GPU stream " .. md.text(tostring(streams[1])) .. ","
end

local function identification(f)
  local c = f.candidate
  local text = string.format("%s was surfaced because it launches %d kernels per instance (%s)%s with no fused "
    .. "kernel among them. The pattern reads as %s from the kernel composition and the module name.",
    md.code(rules.module_label(c)), #kernels_of(c), composition_text(c), stream_text(c), md.text(f.pattern.name))
  if comparative then
    return text .. " (source: `fusion_candidates.json` → `module_name`, `kernel_count_trace1`, "
      .. "`kernel_count_trace2`, `kernels_trace1[]`, `kernels_trace2[]`)"
  end
  return text .. " (source: `fusion_candidates.json` → `module_name`, `has_fused_kernel`, `kernels[]`)"
end

-- The table lists the first instance's kernels and durations: said, with the
-- mean of all instances when there are several (the instances of one module
-- can differ in shape: ResNet's first BatchNorm takes 306 µs, the mean 66 µs).
local function first_instance_note(f)
  local e, ks = f.estimate, f.candidate.kernels or {}
  local n = tonumber(e.instance_count)
  if not n or n <= 1 or not sf.present(e.time_ms) then return nil end
  return string.format("Durations are the first instance's (%s in all); the %s instances average %s each (%s ms "
    .. "in all).", us(sum_us(ks)), tostring(math.tointeger(n) or n), us(sf.value(e.time_ms) * 1000 / n),
    num(e.time_ms))
end

local function data_section(f)
  local c = f.candidate
  if comparative then
    return table.concat({ "**Trace1 kernels:**", "", kernel_table(c.kernels_trace1 or {}, false), "",
      "**Trace2 kernels:**", "", kernel_table(c.kernels_trace2 or {}, false) }, "\n")
  end
  local note = first_instance_note(f)
  local tbl = kernel_table(c.kernels or {}, true, c.input_dims)
  return note and (tbl .. "\n\n" .. note) or tbl
end

-- The estimate's bound and fusion type in words ("compute-bound, with
-- matrix kernels"), not the fields' enum values (matrix_compute, memory_bound).
local FUSION_TYPE_WORDS = { matrix_compute = "matrix kernels (GEMM or convolution) with their epilogue",
  memory_bound = "no matrix kernels (element-wise, normalization and reduction kernels)" }
-- The kind of kernels in words. The estimator goes by the classifier's types:
-- a candidate whose matrix work has no type (AITER's ck_moe_stage GEMMs) is
-- "memory_bound" to it, which is no "no matrix kernels".
local function kind_words(e, c)
  local untyped = rules.untyped_matrix_count({ kernels = kernels_of(c) })
  if e.fusion_type == "memory_bound" and untyped > 0 then
    return string.format("no kernel typed as a GEMM or convolution (the kernel classifier gives %s no type)",
      untyped == 1 and "its MoE GEMM kernel" or ("its " .. untyped .. " MoE GEMM kernels"))
  end
  -- a GEMM known by its name only (rules.name_gemm) without a matrix perf model
  local named = 0
  for _, k in ipairs(kernels_of(c)) do
    if rules.name_gemm(k) then named = named + 1 end
  end
  if e.fusion_type == "memory_bound" and named > 0 then
    return string.format("no kernel typed as a GEMM or convolution (the kernel classifier gives %s no type)",
      named == 1 and "its GEMM kernel" or ("its " .. named .. " GEMM kernels"))
  end
  return FUSION_TYPE_WORDS[e.fusion_type] or (sf.present(e.fusion_type) and tostring(e.fusion_type)) or nil
end

-- bound_type is the estimator's class (matrix kernels: compute, else
-- memory), not a roofline verdict on the kernels: said as the estimate's
local function pattern_words(e, c)
  local bound = sf.present(e.bound_type) and ("the estimate treats it as " .. tostring(e.bound_type) .. "-bound")
    or "no bound is estimated"
  local kind = kind_words(e, c)
  return kind and (kind .. "; " .. bound) or bound
end

-- The Type cell of the impact summary: the kind of kernels alone.
local function type_words(e, c) return kind_words(e, c) or "unknown" end

local function coverage(e)
  local modeled, total = sf.value(e.modeled_kernel_count), sf.value(e.kernel_count)
  local text = string.format("- Coverage: %s of %s kernels modelled", num(e.modeled_kernel_count), num(e.kernel_count))
  if e.estimation == "partial" and total > modeled then
    local k = math.tointeger(total - modeled) or (total - modeled)
    text = text .. string.format(" (%s kernel%s use%s measured trace time)", tostring(k), k == 1 and "" or "s",
      k == 1 and "s" or "")
  end
  return text
end

local function block(n, f)
  local e = f.estimate
  local word, reason = rules.confidence(view_of(f.candidate), e.confidence)
  local estimate = {
    F.detail_marker(e),
    "- Low end impact_score: " .. num(e.impact_score_low),
    "- High end impact_score: " .. num(e.impact_score_high),
  }
  if not comparative then estimate[#estimate + 1] = coverage(e) end
  estimate[#estimate + 1] = "- Fusion pattern: " .. pattern_words(e, f.candidate)
  estimate[#estimate + 1] = "- Confidence: " .. word .. " — " .. reason
  estimate[#estimate + 1] = "<!-- impact-end -->"
  return table.concat({
    "<!-- reasoning-candidate tier=fusion rank=" .. n .. " -->",
    "#### " .. heading(f), "",
    "**Identification:** " .. identification(f), "",
    "**Data:**", "",
    data_section(f), "",
    "**Impact estimate:**",
    table.concat(estimate, "\n"),
  }, "\n")
end

-- Impact Summary -------------------------------------------------------------------

local function savings(score)
  return json.number_text(py.round(sf.value(score) * baseline_ms / 100, 3))
end

local function impact_summary(findings)
  local lines = { "| Recommendation | Type | Estimated Savings (ms) | Estimated Improvement (E2E %) | Confidence |",
    "|----------------|------|------------------------|-------------------------------|------------|" }
  for n, f in ipairs(findings) do
    local e = f.estimate
    local word = rules.confidence(f.candidate, e.confidence)
    lines[#lines + 1] = string.format("| P%d: %s | %s | %s | %s%% | %s |", n, md.cell(f.pattern.name),
      type_words(e, f.candidate), prose.range(savings(e.impact_score_low), savings(e.impact_score_high)),
      prose.range(num(e.impact_score_low), num(e.impact_score_high)), word)
  end
  return table.concat(lines, "\n")
end

-- The document -----------------------------------------------------------------------

local function methodology()
  if comparative then
    return "> **Methodology:** impact_score is the measured time gap between Trace 1 and Trace 2 for the same "
      .. "module, as a share of Trace 1's end-to-end time. No roofline model is used."
  end
  return "> **Methodology:** impact_score projects the share of end-to-end time recoverable by replacing a "
    .. "candidate's kernels with one fused kernel, estimated on the roofline with 85% overlap of memory and compute. "
    .. "Kernels without a perf model keep their measured time. Candidates with fewer than 75% of kernels modelled "
    .. "(50% below five kernels) are not reported."
end

local function set_aside_text(rejected)
  if #rejected == 0 then return nil end
  local parts = {}
  for i, r in ipairs(rejected) do parts[i] = md.code(r.name) .. " (" .. r.reason .. ")" end
  return string.format("%d candidate%s set aside by the fusion rules: %s.", #rejected,
    #rejected == 1 and " was" or "s were", table.concat(parts, "; "))
end

-- The estimates dropped because a reported candidate holds their kernels
-- (kernel_fusion_metrics.json dropped_overlapping; tracelens.fusion.overlap).
local function overlap_text(dropped)
  if #dropped == 0 then return nil end
  local parts = {}
  for i, d in ipairs(dropped) do
    local kept = md.code(rules.module_label({ base_name = d.kept_operation }))
    local how = d.relation == "nested"
        and string.format("every one of these kernels is part of %s, %s kernels per instance", kept, num(d.kept_kernel_count))
      or string.format("%s of these %s kernel launches are part of %s", num(d.shared_gpu_events), num(d.gpu_events), kept)
    local name = md.code(rules.module_label({ base_name = d.operation }))
    if d.source == "sibling_sequence" then name = "the operations directly under " .. name end
    parts[i] = string.format("%s (%s kernels, %s; %s)", name, num(d.kernel_count), instances(d.instance_count), how)
  end
  return string.format("%d overlapping candidate%s not reported separately, so no kernel time is counted twice: %s.",
    #dropped, #dropped == 1 and " is" or "s are", table.concat(parts, "; "))
end

-- The candidates the numeric step left out before or at estimation
-- (ctx.not_estimated, from tracelens.fusion.metrics), each with its reason.
local not_estimated = sf.decode(ctx.not_estimated) or {}

local function not_estimated_text()
  if #not_estimated == 0 then return nil end
  local parts = {}
  for i, d in ipairs(not_estimated) do
    local name = md.code(rules.module_label({ base_name = d.operation, module_name = d.module_name }))
    parts[i] = string.format("%s (%s kernels, %s, %s ms: %s)", name, num(d.kernel_count),
      instances_of(d.instance_count, d.base_instance_count), num(d.time_ms), md.text(tostring(d.reason)))
  end
  local text = string.format("%d candidate%s not reported: %s.", #not_estimated,
    #not_estimated == 1 and " was" or "s were", table.concat(parts, "; "))
  for _, d in ipairs(not_estimated) do
    if sf.present(d.base_instance_count) then
      return text .. " A module whose instances launch different kernel sequences is one candidate per sequence."
    end
  end
  return text
end

-- the estimates the rules keep (impact order) and those they set aside
local function choose_candidates() return choose.choose(metrics, candidates, comparative, kernel_facts) end

local function module_types(findings)
  local seen, n = {}, 0
  for _, f in ipairs(findings) do
    local m = rules.module_label(f.candidate)
    if not seen[m] then
      seen[m] = true
      n = n + 1
    end
  end
  return n
end

local function error_document()
  local why = metrics and tostring(metrics.error or "unknown error") or ("kernel_fusion_metrics.json " .. metrics_error)
  return table.concat({ TITLE, "", "Status: ERROR", "", "The kernel fusion analysis failed: " .. md.text(why), "",
    "## Recommendations", "", "## Detailed Analysis", "" }, "\n")
end

local function document()
  if not metrics or metrics.status == "ERROR" then return error_document() end
  local findings, rejected = {}, {}
  if metrics.status ~= "NO_DATA" then findings, rejected = choose_candidates() end
  if #findings == 0 then
    local why = {}
    for _, text in ipairs({ set_aside_text(rejected) or false, not_estimated_text() or false }) do
      if text then why[#why + 1] = text end
    end
    if #why == 0 then return NO_OPPORTUNITY end
    return NO_OPPORTUNITY .. "\n" .. table.concat(why, "\n\n") .. "\n"
  end
  local out = { TITLE, "", "## Overview", "",
    string.format("Found %d kernel fusion opportunit%s across %d module type%s.", #findings,
      #findings == 1 and "y" or "ies", module_types(findings), module_types(findings) == 1 and "" or "s"), "",
    methodology(), "" }
  for _, text in ipairs({ set_aside_text(rejected) or false, overlap_text(metrics.dropped_overlapping or {}) or false,
      not_estimated_text() or false }) do
    if text then
      out[#out + 1] = text
      out[#out + 1] = ""
    end
  end
  out[#out + 1] = "## Recommendations"
  out[#out + 1] = ""
  for n, f in ipairs(findings) do
    out[#out + 1] = card(n, f)
    out[#out + 1] = ""
  end
  out[#out + 1] = "## Detailed Analysis"
  out[#out + 1] = ""
  for n, f in ipairs(findings) do
    out[#out + 1] = block(n, f)
    out[#out + 1] = ""
  end
  out[#out + 1] = "## Impact Summary"
  out[#out + 1] = ""
  out[#out + 1] = impact_summary(findings)
  out[#out + 1] = ""
  return table.concat(out, "\n")
end

return { findings = document() }

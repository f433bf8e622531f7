-- tracelens.report_md — the final analysis.md (agents-and-report.md §5).
--
-- render(inp) -> markdown text, where
--   inp = {scope = "standalone"|"comparative",
--          manifest = <decoded category_manifest.json>, priority = <decoded priority_data.json>,
--          findings = {system = {cpu_idle=, multi_kernel=, kernel_fusion=}, compute = {<cat> = text}},
--          failed = {{category=, tier = "System"|"Compute Kernel", error=}},
--          metrics = {<cat> = decoded metrics}, model_info = {model=, architecture=, scale=, precision=},
--          arch = {name=, mem_bw_gbps=, max_achievable_tflops={...}}, platform = "MI300X",
--          platform_note = <how the platform was chosen, or nil>,
--          no_arch_note = <the sentence of a run without an arch file (no roofline), or nil>,
--          platform2 = <trace 2 platform, comparative>,
--          trace2_names = <comparative: {<enhanced category> = display name} of trace 2>,
--          warnings = <list of notes from the run, shown under ## Warnings, or nil>,
--          rules = <the user rules that ran: {{name=, path=}}, listed in the Appendix>,
--          no_rules = <true when rules were turned off>,
--          inference = <--inference: tracelens.inference.data's result, rendered as ## Inference>,
--          ranks = <--ranks: tracelens.ranks_md's input, rendered as ## Multi-rank>}
--
-- Sections, in order: title, Executive Summary (+ `{{PERF_PLOT}}`), Warnings
-- (only when needed), Multi-rank (--ranks), Compute Kernel Optimizations, Kernel Fusion
-- Opportunities (Experimental), System-Level Optimizations, Detailed
-- Analysis, Appendix. Cards and Detailed Analysis blocks come from the
-- findings files (tracelens.findings_doc); numbers in markers come from
-- priority_data.json verbatim. Rules: docs/analyzers.md, "System analyzers
-- and the report". Every name from the trace or the run (model, platforms,
-- categories, operations, errors) goes through tracelens.md; the card and
-- block text of the findings files was escaped by their writers.
local json = require "tracelens.json"
local py = require "tracelens.py"
local doc = require "tracelens.findings_doc"
local sf = require "tracelens.system_findings"
local findings = require "tracelens.findings"
local md = require "tracelens.md"
local fusion_rules = require "tracelens.fusion_rules"
local own_fusion_md = require "tracelens.fusion.own_md"

local M = {}

local UNKNOWN = "Cannot be inferred from trace"
local IDLE_THRESHOLD_PCT = 15
local NEGLIGIBLE_PCT = 1.0
local ICONS = { "🔴", "🟡" }
local OTHER_ICON = "🟢"
-- The icons mean one thing in every section: the finding's rank there.
local LEGEND = {
  "> **Legend:** in every section 🔴 marks P1, 🟡 P2 and 🟢 P3 onward, ranked by impact_score (system-level "
    .. "findings have none and keep a fixed order: host synchronization and idle time, then communication and "
    .. "memory copies); the icon is a rank, not a severity or a confidence (each card states its confidence).",
  "> **impact_score:** the estimated share of end-to-end GPU time, in percent, that acting on a finding could recover.",
}
local NO_COMPUTE = "✅ No compute kernel optimization opportunities identified. All categories are within target "
  .. "performance bounds."
local SYSTEM_NOTE = sf.NOTE
local COMPARATIVE_NOTE = "> **Comparative Note:** System-level analysis is performed on the primary trace (Trace 1) "
  .. "only. Cross-trace system-level comparison is not yet supported."
local FUSION_NOTE_HEAD = "> **Note:** Kernel fusion analysis is experimental. impact_score projections estimate the "
  .. "recoverable fraction of E2E with 85% memory/compute pipeline overlap. Kernels without perf models use their "
  .. "measured trace time as-is."
local FUSION_NOTE_COVERAGE = " Candidates where fewer than 75% of kernels have perf models (50% for candidates of"
  .. " fewer than five kernels) are not reported."
local FUSION_NOTE_TAIL = " Actual recoverable time depends on implementation feasibility and interaction effects."
local FUSION_NOTE_COMPARATIVE = "> **Note:** Kernel fusion analysis is experimental."

-- Helpers ------------------------------------------------------------------------

local present = json.present

local function num(v)
  if not present(v) then return "null" end
  if type(v) == "number" then return json.number_text(v) end
  return tostring(v)
end

local cell, text = md.cell, md.text

-- A number for a table cell: verbatim, or — when absent.
local function cell_num(v)
  if not present(v) then return "—" end
  return num(v)
end

local function round_text(x, n) return json.number_text(py.round((tonumber(x) or 0) + 0.0, n)) end

-- Milliseconds: 2 decimals from 1 ms up, else 3, always shown ("0.80 ms" is
-- "0.800 ms", so the figures of one table read at one precision).
-- `x` rounded to `decimals`, every decimal shown.
local function fixed_text(x, decimals)
  local t = round_text(x, decimals)
  local have = #(t:match("%.(%d+)$") or "")
  if t:match("^-?%d+%.?%d*$") and have < decimals then t = (have == 0 and t .. "." or t) .. string.rep("0", decimals - have) end
  return t
end

-- `scale` (default x): the figure whose size sets the precision, so that the
-- figures of one row share it ("1.26 ms | 0.80 ms").
local function ms_text(x, scale)
  x = tonumber(x) or 0
  return fixed_text(x, math.abs(tonumber(scale) or x) >= 1 and 2 or 3) .. " ms"
end

-- Percentages to 2 decimals; a non-zero share too small for that keeps two
-- significant digits (0.00023%), so a little idle time does not read as none.
local function pct_text(x)
  if type(x) == "number" and x ~= 0 and math.abs(x) < 0.005 then
    local decimals = 1 - math.floor(math.log(math.abs(x), 10))
    return string.format("%." .. decimals .. "f", x) .. "%"
  end
  return fixed_text(x, 2) .. "%"
end

-- A difference with its sign; one that shows as zero ("0.0", "-0.0") has
-- none, so "+0.0" never stands next to "0.0".
local function signed(x, text)
  if not text:match("[1-9]") then return (text:gsub("^[-+]", "")) end
  if x > 0 then return "+" .. text end
  return text
end

local function icon_at(i) return ICONS[i] or OTHER_ICON end

local function append(dst, src)
  for _, l in ipairs(src) do dst[#dst + 1] = l end
  return dst
end

local function add(out, ...)
  for i = 1, select("#", ...) do out[#out + 1] = (select(i, ...)) end
end

local function is_comparative(inp) return inp.scope == "comparative" end

local function failed_set(inp)
  local set = {}
  for _, f in ipairs(inp.failed or {}) do set[f.category] = true end
  return set
end

-- The findings document of a category, or nil when missing or failed.
local function findings_of(inp, group, name)
  local text = ((inp.findings or {})[group] or {})[name]
  if type(text) ~= "string" or failed_set(inp)[name] then return nil end
  local d = doc.parse(text)
  if d.failed then return nil end
  return d
end

local function utilization(inp) return (inp.manifest or {}).gpu_utilization or {} end

local function compute_categories(inp) return sf.categories(inp.manifest, "compute_kernel") end

local function display_name(inp, name)
  for _, c in ipairs((inp.manifest or {}).categories or {}) do
    if c.name == name then return c.display_name or name end
  end
  return name
end

local function computation_ms(g)
  return (tonumber(g.total_time_ms) or 0) * (tonumber(g.computation_time_percent) or 0) / 100
end

-- The whole that "% of compute time" shares are of: the GPU's computation time
-- (the reference's), or the compute categories' kernel time when that is
-- larger (kernels overlapping on several streams count once in the first, once
-- each in the second), so no category's share can pass 100% and the shares
-- add up to at most 100% (docs/compat.md, "Shares").
local function compute_whole(inp)
  local sum = 0
  for _, c in ipairs(compute_categories(inp)) do sum = sum + sf.value(c.gpu_kernel_time_ms) end
  return math.max(sum, computation_ms(utilization(inp)))
end

-- The compute category with the most kernel time (ties: manifest order).
local function top_category(inp)
  local best
  for _, c in ipairs(compute_categories(inp)) do
    if not best or sf.value(c.gpu_kernel_time_ms) > sf.value(best.gpu_kernel_time_ms) then best = c end
  end
  return best
end

local function share_text(t, denominator)
  if denominator <= 0 then return "0.0%" end
  return round_text(t / denominator * 100, 1) .. "%"
end

local function top_bottleneck(inp)
  local c = top_category(inp)
  if not c then return "None" end
  return cell(c.display_name or c.name) .. " (" .. share_text(sf.value(c.gpu_kernel_time_ms), compute_whole(inp)) .. ")"
end

local function model_name(inp)
  local m = (inp.model_info or {}).model
  if type(m) ~= "string" or m == "" or m == UNKNOWN then return "Workload" end
  return m
end

local function platform_of(inp)
  return inp.platform or (inp.manifest or {}).platform or (inp.arch or {}).name or "Unknown platform"
end

-- Cards of every tier ---------------------------------------------------------

local P_ITEM = "^<!%-%-%s*impact%-begin.-kind=p_item.-%-%->%s*$"

local function compute_marker(f) return findings.p_item_marker(f, f.category) end

-- A compute card whose findings file is missing or has no card for it: the
-- numbers of the finding only.
local function fallback_compute_card(inp, f)
  local display = text(display_name(inp, f.category))
  local body = {
    string.format("**Insight**: The %s analysis gave no recommendation text for this finding. It covers %s "
      .. "operation(s), %s-bound, estimated by the %s method.", display, num(f.member_count), num(f.bound_type),
      num(f.estimate_method)), "",
    string.format("**Action**: Rerun the %s analysis to get a recommendation for these operations.", display), "",
    compute_marker(f), "**Impact**: impact_score: " .. num(f.impact_score), "<!-- impact-end -->",
  }
  local title = display .. " operations below their roofline"
  if present(f.library) and f.library ~= "Unknown" then title = title .. " (" .. text(f.library) .. ")" end
  return { title = title, body = body }
end

local function fallback_compute_block(inp, f)
  local rows = { "| Operation | Time (ms) | impact_score |", "|-----------|-----------|--------------|" }
  for _, m in ipairs(f.members or {}) do
    rows[#rows + 1] = string.format("| %s | %s | %s |", cell(m.operation or "—"), cell_num(m.time_ms),
      cell_num(m.impact_score))
  end
  return {
    string.format("**Identification:** The %s findings file has no detailed block for this finding, so only its "
      .. "members are listed. (source: `priority_data.json` → `findings[].members`)",
      text(display_name(inp, f.category))), "",
    "**Data:**", "", table.concat(rows, "\n"), "",
    "**Reasoning for Slowdown:** Not available from the category analysis.", "",
    "**Resolution:** Rerun the category analysis.", "",
    "**Impact estimate:**",
    findings.detail_marker(f),
    "- Low end impact_score: " .. num(f.impact_score_low),
    "- High end impact_score: " .. num(f.impact_score_high),
    "<!-- impact-end -->",
  }
end

-- A line of a user rule's card or block: the rule's own text, which must not
-- change the report's structure around it (md.foreign_line: no heading, no
-- raw HTML, no marker); its impact markers are the report's, made from the
-- finding.
local IMPACT_END = "^<!%-%-%s*impact%-end%s*%-%->%s*$"
local DETAIL_MARKER = "^<!%-%-%s*impact%-begin.-kind=detail_estimate.-%-%->%s*$"
local function rule_line(line, f)
  if line:find(IMPACT_END) then return "<!-- impact-end -->" end
  if line:find(DETAIL_MARKER) then return findings.detail_marker(f) end
  return md.foreign_line(line)
end

local function rule_names(inp)
  local set = {}
  for _, r in ipairs(inp.rules or {}) do set[r.name] = true end
  return set
end

-- One entry per priority_data.findings[] entry, in order:
-- {title=, card = {lines}, block = {lines}, category=}.
local function compute_items(inp)
  local items = {}
  local rules = rule_names(inp)
  for i, f in ipairs((inp.priority or {}).findings or {}) do
    local d = findings_of(inp, "compute", f.category)
    local rank = math.tointeger(f.category_rank) or i
    local card = d and doc.card(d, rank)
    local block = d and doc.block(d, "compute", rank)
    local item = { category = f.category, finding = f }
    local rule = rules[f.category]
    if card then
      item.title = rule and md.foreign_inline(card.title) or card.title
      item.card = {}
      for _, line in ipairs(card.body) do
        item.card[#item.card + 1] = line:find(P_ITEM) and compute_marker(f) or rule and rule_line(line, f) or line
      end
    else
      local fb = fallback_compute_card(inp, f)
      item.title, item.card = fb.title, fb.body
    end
    if block and rule then
      item.block = {}
      for _, line in ipairs(block.body) do item.block[#item.block + 1] = rule_line(line, f) end
    else
      item.block = block and block.body or fallback_compute_block(inp, f)
    end
    items[#items + 1] = item
  end
  return items
end

-- Fusion cards, in the findings file's order (impact_score, highest first).
local TIME_SUFFIX = "%s*%([%d%.]+ ms, %d+ instances?%)$"

local function fusion_items(inp)
  local d = findings_of(inp, "system", "kernel_fusion")
  if not d then return {} end
  local items = {}
  for i, c in ipairs(d.cards) do
    local block = doc.block(d, "fusion", c.p) or doc.block(d, "fusion", i)
    items[#items + 1] = {
      title = (c.title:gsub(TIME_SUFFIX, "")),
      block_title = block and block.title or c.title,
      card = c.body, block = block and block.body or { "**Impact estimate:** " .. sf.NOT_QUANTIFIABLE },
    }
  end
  return items
end

-- System cards: the CPU/idle cards first, then the multi-kernel cards (each
-- file is in severity order already). A CPU/idle host-synchronization card
-- is dropped when the multi-kernel analysis has a device-to-host copy card:
-- the two describe the same mechanism (host reads of device values).
local function system_items(inp)
  local items, has_d2h = {}, false
  local mk = findings_of(inp, "system", "multi_kernel")
  for _, c in ipairs(mk and mk.cards or {}) do has_d2h = has_d2h or c.title == sf.TITLE.d2h_memcpy end
  for _, name in ipairs({ "cpu_idle", "multi_kernel" }) do
    local d = findings_of(inp, "system", name)
    for i, c in ipairs(d and d.cards or {}) do
      if not (name == "cpu_idle" and has_d2h and (c.title == sf.TITLE.host_sync or c.title == sf.TITLE.host_sync_queued))
      then
        local block = doc.block(d, "system", c.p) or doc.block(d, "system", i)
        items[#items + 1] = { title = c.title, card = c.body, source = name,
          block = block and block.body or { "**Impact estimate:** " .. sf.NOT_QUANTIFIABLE } }
      end
    end
  end
  return items
end

-- Analysis coverage ------------------------------------------------------------------
--
-- The share of GPU kernel time in compute categories an analyzer examined:
-- not "other" (operations that fit no category), not a failed analysis, not
-- kernel time outside every category (kernels without a launching op are in
-- their categories, tracelens.prepare "Unlinked GPU work"). The
-- whole is the larger of the categories' kernel time and the GPU's busy time.
-- The "within target" verdict needs at least half of it analysed
-- (docs/analysis.md, "Analysis coverage").
local MIN_COVERAGE = 0.5
-- The reference's unqualified verdict ("All categories are within target
-- performance bounds") only when the analyzers saw all but a sliver of it.
local FULL_COVERAGE = 0.95

-- The fusion candidate an operation is left to, as shown (a Python frame as
-- module name: its function, "…/modeling_qwen2.py(68): apply_rotary_pos_emb"),
-- or nil.
local function candidate_label(op)
  local f = type(op.fusion_candidate_name) == "string" and op.fusion_candidate_name or ""
  f = f:match("%(%d+%): ([%w_.]+)$") or f
  return f ~= "" and f or nil
end

-- The largest operations of the `other` category (up to two, each at least a
-- tenth of it), so a reader knows what the unanalysed time is: " (mostly
-- aten::_softmax, 262.42 ms, inside the fusion candidate Owlv2Attention)".
local function other_ops_text(inp, category_ms)
  local m = (inp.metrics or {}).other
  local by_name, ops = {}, {}
  -- the metrics list one row per (name, arguments): add them up per name
  for _, op in ipairs((m and m.operations) or {}) do
    local ms = tonumber(op.time_ms)
    -- a memory copy is not in the category's kernel time (tracelens.analysis is_copy_row): not one of its parts
    if ms and type(op.name) == "string" and op.memory_copy ~= true then
      local o = by_name[op.name]
      if not o then
        o = { name = op.name, ms = 0, top = 0 }
        by_name[op.name] = o
        ops[#ops + 1] = o
      end
      o.ms = o.ms + ms
      if ms > o.top then
        o.top = ms
        o.fusion = candidate_label(op)
      end
    end
  end
  local big = {}
  for _, o in ipairs(ops) do
    if category_ms > 0 and o.ms >= 0.1 * category_ms then big[#big + 1] = o end
  end
  table.sort(big, function(a, b) return a.ms > b.ms end)
  if #big == 0 then return "" end
  local parts, total = {}, 0
  for i = 1, math.min(2, #big) do
    local o = big[i]
    total = total + o.ms
    parts[#parts + 1] = md.code(o.name) .. " " .. ms_text(o.ms)
      .. (o.fusion and (", inside the fusion candidate " .. md.code(o.fusion)) or "")
  end
  return string.format(" (%s%s)", total >= 0.5 * category_ms and "mostly " or "largest: ", table.concat(parts, "; "))
end

-- What the cards of the `other` category do with it: judge the largest
-- operations by time share (standalone: heuristic findings), or compare with
-- trace 2 those that run slower in trace 1 (comparative: no heuristics).
local function other_cards_text(inp, cards)
  if cards == 0 then return "" end
  local the = cards == 1 and "the card" or ("the " .. cards .. " cards")
  if is_comparative(inp) then
    return string.format(", of which %s below cover%s the operations that run slower in Trace 1 than in Trace 2",
      the, cards == 1 and "s" or "")
  end
  return string.format(", of which %s below judge%s %s by %s share of GPU time alone", the, cards == 1 and "s" or "",
    cards == 1 and "one" or "the largest", cards == 1 and "its" or "their")
end

-- The kernel time of a category's operations left to a fusion candidate (tracelens.analysis fusion_flagged: no
-- compute card judges them; memory copies are not in the category's kernel time).
local function fusion_left_ms(inp, category)
  local m, ms = (inp.metrics or {})[category], 0
  for _, op in ipairs(type(m) == "table" and m.operations or {}) do
    if op.fusion_flagged == true and op.memory_copy ~= true and tonumber(op.time_ms) then
      ms = ms + tonumber(op.time_ms)
    end
  end
  return ms
end

local function coverage(inp)
  local failed = failed_set(inp)
  local sum, analysed, missed, fusion_left = 0, 0, {}, 0
  for _, c in ipairs(compute_categories(inp)) do
    local t = sf.value(c.gpu_kernel_time_ms)
    sum = sum + t
    if c.name == "other" then
      -- the generic analyzer's cards judge its largest operations by time share alone
      local cards = 0
      for _, f in ipairs((inp.priority or {}).findings or {}) do
        if f.category == "other" then cards = cards + 1 end
      end
      missed[#missed + 1] = { name = c.display_name or c.name, ms = t, why = "operations that fit no category "
        .. "with an analyzer" .. other_ops_text(inp, t) .. other_cards_text(inp, cards) }
    elseif failed[c.name] then
      missed[#missed + 1] = { name = c.display_name or c.name, ms = t, why = "its analysis failed" }
    else
      analysed = analysed + t
      fusion_left = fusion_left + math.min(t, fusion_left_ms(inp, c.name))
    end
  end
  local busy = computation_ms(utilization(inp))
  -- kernels without a launching op are in the categories (tracelens.prepare);
  -- what is left is busy time in no category (shown from 0.01 ms)
  if busy - sum >= 0.005 then
    missed[#missed + 1] = { ms = busy - sum, why = "GPU kernel time in no category" }
  end
  local whole = math.max(sum, busy)
  -- fusion_left: the analysed categories' kernel time left to fusion candidates, which their analyzers did not judge
  return { analysed = analysed, whole = whole, share = whole > 0 and analysed / whole or 0, missed = missed,
    fusion_left = fusion_left }
end

-- Comparative mode: how the operations of trace 1 were compared
-- (tracelens.analysis). Those with no counterpart in trace 2
-- (no_trace2_counterpart) are not compared, so no finding covers them; those
-- compared with trace 2's own calls of their signature (trace2_basis
-- "same_signature") are not compared where TraceDiff aligns them. Says how
-- many of each, how much time, and what it mostly is.
local function comparative_ops(inp, pick)
  local n, total, by_name, names = 0, 0, {}, {}
  local cats = {}
  for k in pairs(inp.metrics or {}) do cats[#cats + 1] = k end
  table.sort(cats) -- one order of the sums, run after run
  for _, k in ipairs(cats) do
    local m = inp.metrics[k]
    for _, op in ipairs(type(m) == "table" and m.operations or {}) do
      local ms = tonumber(op.time_ms)
      if pick(op) and ms and type(op.name) == "string" then
        n, total = n + 1, total + ms
        if not by_name[op.name] then
          by_name[op.name] = 0
          names[#names + 1] = op.name
        end
        by_name[op.name] = by_name[op.name] + ms
      end
    end
  end
  table.sort(names, function(a, b)
    if by_name[a] ~= by_name[b] then return by_name[a] > by_name[b] end
    return a < b
  end)
  local top = {}
  for i = 1, math.min(2, #names) do top[i] = md.code(names[i]) .. " " .. ms_text(by_name[names[i]]) end
  return n, total, table.concat(top, "; ")
end

local function uncompared_text(inp, whole)
  if not is_comparative(inp) then return "" end
  local out = ""
  local n, total, top = comparative_ops(inp, function(op) return op.no_trace2_counterpart == true end)
  if n > 0 then
    out = string.format(" Not compared: %d operation %s of Trace 1 (%s, %s) %s no counterpart in Trace 2 (TraceDiff "
      .. "aligns %s with no Trace 2 GPU work, and Trace 2 runs no call with the same name and shapes), so no "
      .. "finding covers %s (largest: %s).", n, n == 1 and "signature" or "signatures", ms_text(total),
      share_text(total, whole), n == 1 and "has" or "have", n == 1 and "it" or "them", n == 1 and "it" or "them", top)
  end
  n, total, top = comparative_ops(inp, function(op) return op.trace2_basis == "same_signature" end)
  if n > 0 then
    out = out .. string.format(" Compared call for call: %d operation %s of Trace 1 (%s, %s) %s compared with "
      .. "Trace 2's own calls of the same name and shapes: the Trace 2 work TraceDiff aligns with %s is none, or "
      .. "makes the gap more than twice as large (largest: %s).", n, n == 1 and "signature" or "signatures",
      ms_text(total), share_text(total, whole), n == 1 and "is" or "are", n == 1 and "it" or "them", top)
  end
  return out
end

local function coverage_line(inp)
  local cv = coverage(inp)
  if cv.whole <= 0 then return "**Analysis coverage**: the trace has no GPU kernel time to analyse." end
  local s
  if cv.analysed <= 0 then
    s = string.format("**Analysis coverage**: the per-category analyzers covered none of the %s of GPU kernel time.",
      ms_text(cv.whole))
  else
    s = string.format("**Analysis coverage**: the per-category analyzers covered %s of GPU kernel time (%s of %s).",
      share_text(cv.analysed, cv.whole), ms_text(cv.analysed), ms_text(cv.whole))
    if (cv.fusion_left or 0) > 0 then
      -- the ops a fusion candidate covers get no category card (OWLv2: the attention bmm GEMMs)
      s = s .. string.format(" Of that, %s (%s) is left to the kernel fusion analysis, so the category analyzers "
        .. "judged %s.", ms_text(cv.fusion_left), share_text(cv.fusion_left, cv.whole),
        share_text(cv.analysed - cv.fusion_left, cv.whole))
    end
  end
  local parts = {}
  for _, m in ipairs(cv.missed) do
    if m.ms > 0 then
      parts[#parts + 1] = string.format("%s%s (%s)%s", m.name and (text(m.name) .. ", ") or "", ms_text(m.ms),
        share_text(m.ms, cv.whole), m.name and (": " .. m.why) or (" of " .. m.why))
    end
  end
  if #parts > 0 then s = s .. " Not analysed: " .. table.concat(parts, "; ") .. "." end
  return s .. uncompared_text(inp, cv.whole)
end

-- The line of a Compute section without findings: the clean verdict only
-- when at least half of the GPU kernel time was analysed.
-- Below this share of the trace's time in computation, kernel findings are
-- measured against an end-to-end time the GPU mostly idles through: no
-- finding reaching the threshold says nothing about the kernels then.
local MIN_COMPUTE_SHARE = 25

-- Comparative: the regions TraceDiff aligns whose Trace 1 side holds several
-- operations, each compared with the region's whole Trace 2 time
-- (tracelens.shared_regions), and which run slower in Trace 1 by at least
-- the reporting threshold's share of end-to-end time (an impact_score of
-- 0.5): no operation's finding can show their gap.
local MIN_GAP_SHARE = 0.5

local function hidden_gaps(inp)
  local total = tonumber(utilization(inp).total_time_ms) or 0
  local out = {}
  if not is_comparative(inp) or total <= 0 then return out end
  for _, r in ipairs(inp.shared_regions or {}) do
    if r.gap_us / 1000 / total * 100 >= MIN_GAP_SHARE then out[#out + 1] = r end
  end
  return out
end

-- The fusion card (its P number) whose text names the region's module, or nil.
local function fusion_card_of(inp, name)
  local label = md.code(fusion_rules.module_label({ module_name = name }))
  for i, item in ipairs(fusion_items(inp)) do
    for _, l in ipairs(item.card or {}) do
      if l:find(label, 1, true) then return i end
    end
  end
end

local MAX_REGION_OPS = 4

-- One region whose gap no operation shows, in two sentences.
local function hidden_gap_text(inp, r)
  local names = {}
  for i = 1, math.min(MAX_REGION_OPS, #r.ops) do names[i] = md.code(r.ops[i].name) end
  if #r.ops > MAX_REGION_OPS then names[#names + 1] = string.format("%d more", #r.ops - MAX_REGION_OPS) end
  local t1, t2 = r.t1_us / 1000, r.t2_us / 1000
  local other = r.t1_us - r.own_us
  -- an operation longer than the region's Trace 2 time shows its excess over it, no more
  local hidden = r.ops[1].us <= r.t2_us and "none can show as slower on its own"
    or "each shows at most its own excess over that time"
  local s = string.format("TraceDiff aligns %s of the two traces as one region, which holds %d operation %s of "
    .. "Trace 1 (%s)%s, and each of them is compared with the region's whole Trace 2 time (%s), so %s. The region "
    .. "as a whole takes %s in Trace 1 against %s in Trace 2, so Trace 1 is %s (%.1f%%) slower there",
    md.code(tostring(r.name or "?")), #r.ops, #r.ops == 1 and "signature" or "signatures", table.concat(names, ", "),
    other >= 1 and string.format(" and %s of other kernel time", ms_text(other / 1000)) or "", ms_text(t2, t1),
    hidden, ms_text(t1, t1), ms_text(t2, t1), ms_text(t1 - t2, t1), (t1 - t2) / t2 * 100)
  local p = fusion_card_of(inp, r.name)
  if p then s = s .. string.format(" (Kernel Fusion Opportunities, P%d, compares it as a whole)", p) end
  return s .. "."
end

-- The Compute section's line without findings when such regions exist.
local function hidden_gaps_verdict(inp, gaps)
  local parts = { "No compute kernel finding reaches the reporting threshold, but that does not mean that every "
    .. "category keeps up with Trace 2." }
  for _, r in ipairs(gaps) do parts[#parts + 1] = hidden_gap_text(inp, r) end
  return table.concat(parts, " ")
end

-- The verdict when the analysed categories left some of their operations to fusion candidates: its coverage is
-- what the category analyzers judged (OWLv2 H100: 289.17 ms analysed, of which the attention bmm GEMMs' 229.33 ms
-- are left to Owlv2Attention, so 59.84 ms, 10.8% of 552.19 ms, were judged).
local function fusion_left_verdict(cv)
  local judged = math.max(0, cv.analysed - cv.fusion_left)
  local share = judged / cv.whole
  local split = string.format("%s of GPU kernel time (%s of %s); of the %s in the analysed categories, %s (%s) is "
    .. "left to the kernel fusion analysis", share_text(judged, cv.whole), fixed_text(judged, 2),
    ms_text(cv.whole), share_text(cv.analysed, cv.whole), ms_text(cv.fusion_left), share_text(cv.fusion_left, cv.whole))
  if share >= MIN_COVERAGE then
    return string.format("✅ No compute kernel optimization opportunities identified in the operations the category "
      .. "analyzers judged: %s, and the rest was not analysed (see Analysis coverage in the Executive Summary).", split)
  end
  return string.format("⚠️ No compute kernel optimization opportunities identified in the operations the category "
    .. "analyzers judged, but they cover only %s, and the rest was not analysed (see Analysis coverage in the Executive "
    .. "Summary), so this is no verdict on the rest.", split)
end

local function no_compute_verdict(inp)
  local gaps = hidden_gaps(inp)
  if #gaps > 0 then return hidden_gaps_verdict(inp, gaps) end
  local cv = coverage(inp)
  local g = utilization(inp)
  local compute_pct = tonumber(g.computation_time_percent)
  if not is_comparative(inp) and cv.whole > 0 and cv.share >= MIN_COVERAGE and compute_pct
    and compute_pct < MIN_COMPUTE_SHARE then
    return string.format("No compute kernel finding reaches the reporting threshold, but that is no verdict on the "
      .. "kernels: the GPU computes for only %s of the %s GPU span, and each kernel's impact_score is its recoverable "
      .. "share of that end-to-end time. The idle time (System-Level Optimizations) is the larger cost here; read "
      .. "the category findings files for the kernels' own efficiency.", pct_text(compute_pct),
      ms_text(tonumber(g.total_time_ms) or 0))
  end
  if cv.whole > 0 and cv.fusion_left > 0 and cv.analysed > 0 then return fusion_left_verdict(cv) end
  if cv.whole > 0 and cv.share >= FULL_COVERAGE then return NO_COMPUTE end
  if cv.whole > 0 and cv.share >= MIN_COVERAGE then
    return string.format("✅ No compute kernel optimization opportunities identified in the analysed categories "
      .. "(%s of GPU kernel time); the rest was not analysed (see Analysis coverage in the Executive Summary).",
      share_text(cv.analysed, cv.whole))
  end
  if cv.whole <= 0 then
    return "No compute kernel optimization opportunities identified: the trace has no GPU kernel time to analyse."
  end
  if cv.analysed <= 0 then
    return "⚠️ No compute kernel optimization opportunities identified, because none of the GPU kernel time was "
      .. "analysed (see Analysis coverage in the Executive Summary)."
  end
  return string.format("⚠️ No compute kernel optimization opportunities identified in the analysed categories, "
    .. "but they cover only %s of GPU kernel time, so this is no verdict on the rest (see Analysis coverage in "
    .. "the Executive Summary).", share_text(cv.analysed, cv.whole))
end

-- The operations left to the kernel fusion analysis (tracelens.analysis
-- fusion_flagged: a fusion candidate covers their kernels, so no compute card
-- judges them): " 3 operation signatures (… of kernel time) get no card here: …", or "".
local function fusion_left_text(inp)
  local ms, n, names, seen = 0, 0, {}, {}
  for _, m in pairs(inp.metrics or {}) do
    for _, op in ipairs(type(m) == "table" and m.operations or {}) do
      if op.fusion_flagged == true and tonumber(op.time_ms) then
        ms, n = ms + tonumber(op.time_ms), n + 1
        local c = candidate_label(op)
        if c and not seen[c] then
          seen[c] = true
          names[#names + 1] = md.code(c)
        end
      end
    end
  end
  if n == 0 or ms <= 0 then return "" end
  table.sort(names)
  return string.format(" %d operation %s (%s of kernel time) %s no card here: %s covered by the kernel fusion "
    .. "analysis (%s; Kernel Fusion Opportunities).", n, n == 1 and "signature" or "signatures", ms_text(ms),
    n == 1 and "gets" or "get", n == 1 and "it is" or "they are", table.concat(names, ", "))
end

local function no_compute_line(inp)
  local line = no_compute_verdict(inp)
  if line:find("the trace has no GPU kernel time", 1, true) then return line end
  return line .. fusion_left_text(inp)
end

-- Title and Executive Summary ------------------------------------------------------

local function title(inp)
  if is_comparative(inp) then
    return "# " .. text(model_name(inp)) .. " - Comparative Analysis: " .. text(platform_of(inp)) .. " vs "
      .. md.heading(inp.platform2 or "Trace 2")
  end
  return "# " .. text(model_name(inp)) .. " - " .. text(platform_of(inp)) .. " Standalone Analysis"
end

-- Comparative: when both GPUs are idle for most of their span, the spans
-- compare the hosts' pace of issuing work more than the GPUs (bert H100 vs
-- MI300X: 92% and 89% idle; the GPUs compute 0.307 against 0.388 ms while
-- the spans say trace 2 is faster). One sentence, or nil.
local BOTH_IDLE_PCT = 50

local function both_idle_sentence(g1, g2, t1, t2)
  local i1, i2 = sf.value(g1.idle_time_percent), sf.value(g2.idle_time_percent)
  if i1 <= BOTH_IDLE_PCT or i2 <= BOTH_IDLE_PCT then return nil end
  local c1 = t1 * sf.value(g1.computation_time_percent) / 100
  local c2 = t2 * sf.value(g2.computation_time_percent) / 100
  return string.format("Both GPUs are idle for most of their span (%s and %s), so that difference is mostly the "
    .. "hosts' pace of issuing work, not the GPUs' speed: the GPUs compute for %s (Trace 1) against %s (Trace 2).",
    pct_text(i1), pct_text(i2), ms_text(c1, math.max(c1, c2)), ms_text(c2, math.max(c1, c2)))
end

local function overview(inp, items)
  local g = utilization(inp)
  local s = {}
  local model = model_name(inp)
  s[#s + 1] = string.format("This analysis covers %s of GPU time%s on %s.", ms_text(g.total_time_ms),
    model ~= "Workload" and (" of the " .. text(model) .. " workload") or "", text(platform_of(inp)))
  s[#s + 1] = string.format("Computation takes %s of that time, the GPU is idle for %s, exposed communication takes "
    .. "%s and exposed memory copies take %s.", pct_text(g.computation_time_percent), pct_text(g.idle_time_percent),
    pct_text(g.exposed_comm_time_percent), pct_text(g.exposed_memcpy_time_percent))
  -- the span's idle share misses the stretches of a step before and after any GPU work runs
  local cp = inp.critical_path
  local no_gpu, share = require("tracelens.critical_path_md").no_gpu(cp)
  if no_gpu then
    s[#s + 1] = string.format("Besides, %s (the step the Critical Path section analyses) has no GPU work at all "
      .. "for %s of its %s (%s).",
      text(cp.name or ("ProfilerStep#" .. tostring(cp.step))), ms_text(no_gpu / 1000), ms_text(cp.wall_us / 1000),
      pct_text(share * 100))
  end
  if is_comparative(inp) then
    local g2 = (inp.manifest or {}).trace2_gpu_utilization or {}
    local t1 = sf.value(g.total_time_ms)
    local t2 = sf.value(g2.total_time_ms)
    if t1 > 0 and t2 > 0 and t1 ~= t2 then
      -- a trace 2 with no GPU name is called "Trace 2" already: not "Trace 2 (Trace 2)"
      local p2 = inp.platform2 and inp.platform2 ~= "Trace 2" and (" (" .. text(inp.platform2) .. ")") or ""
      s[#s + 1] = string.format("Trace 2%s is %s%% %s than Trace 1: %s against %s.", p2,
        round_text(math.abs(t1 - t2) / t1 * 100, 1), t2 < t1 and "faster" or "slower",
        ms_text(t2, math.max(t1, t2)), ms_text(t1, math.max(t1, t2)))
      s[#s + 1] = both_idle_sentence(g, g2, t1, t2)
    end
  end
  local top = top_category(inp)
  if top then
    s[#s + 1] = string.format("The largest compute category is %s with %s ms, %s of compute time.",
      text(top.display_name or top.name), num(top.gpu_kernel_time_ms),
      share_text(sf.value(top.gpu_kernel_time_ms), compute_whole(inp)))
  end
  local f1 = items.compute[1]
  if f1 then
    -- a rule's findings judge operations their own categories count too (docs/rules.md): the same
    -- operation and GPU time can be in a category's finding and a rule's, so they are counted apart
    local rules, from_rules = rule_names(inp), 0
    for _, item in ipairs(items.compute) do
      if rules[item.category] then from_rules = from_rules + 1 end
    end
    local own = #items.compute - from_rules
    local count = string.format("The per-category analysis gives %d compute finding%s", own, own == 1 and "" or "s")
    if from_rules > 0 then
      count = count .. string.format(", and the rules %d more about operations that are also in their own "
        .. "categories (so a rule's finding can count the same GPU time as a category's)", from_rules)
    end
    s[#s + 1] = string.format("%s. The largest, in %s, has an "
      .. "impact_score of %s (impact_score: the estimated share of end-to-end GPU time, in percent, that acting on "
      .. "a finding could recover).", count, text(display_name(inp, f1.category)), num(f1.finding.impact_score))
  else
    local compute_pct = tonumber(g.computation_time_percent)
    if compute_pct and compute_pct < MIN_COMPUTE_SHARE then
      -- the scores are shares of a span the GPU mostly idles through: no verdict on the kernels
      s[#s + 1] = string.format("No compute kernel finding reaches the reporting threshold, but the GPU computes for "
        .. "only %s of the span and each impact_score is a share of the whole span, so this says little about the "
        .. "kernels themselves.", pct_text(compute_pct))
    else
      s[#s + 1] = "No compute kernel finding reaches the reporting threshold."
    end
  end
  if #items.fusion > 0 then
    -- the first card is the largest (the fusion cards are in impact order)
    local mid
    for _, line in ipairs(items.fusion[1].card) do mid = mid or (line:match(P_ITEM) and line:match("mid=([%d.]+)")) end
    s[#s + 1] = string.format("The kernel fusion analysis reports %d candidate%s%s.", #items.fusion,
      #items.fusion == 1 and "" or "s", mid and string.format("; the largest, %s, has an impact_score of %s%s",
        items.fusion[1].title:gsub("^P%d+:%s*", ""), mid, f1 and "" or " (impact_score: the estimated share of "
          .. "end-to-end GPU time, in percent, that acting on a finding could recover)") or "")
  elseif is_comparative(inp) then
    s[#s + 1] = own_fusion_md.summary(inp.own_fusion)
  else
    s[#s + 1] = "No kernel fusion opportunity was found."
  end
  if require("tracelens.critical_path_md").host_bound(cp) then
    -- the step's host-only time (said above) outweighs every card: no "no bottleneck" verdict
    s[#s + 1] = string.format("At the system level the step is host-bound: its time without GPU work is at least "
      .. "half of it%s (System-Level Optimizations).", #items.system > 0 and string.format("; the top system card "
      .. "is: %s", items.system[1].title) or ", and no system-level card is flagged within the GPU span")
  elseif #items.system > 0 then
    s[#s + 1] = string.format("At the system level the top issue is: %s.", items.system[1].title)
  else
    s[#s + 1] = "No system-level bottleneck is flagged."
  end
  return table.concat(s, " ")
end

local function standalone_metrics(inp)
  local g = utilization(inp)
  return {
    "| Metric | Value |",
    "|--------|-------|",
    "| Total Time | " .. ms_text(g.total_time_ms) .. " |",
    "| Compute % | " .. pct_text(g.computation_time_percent) .. " |",
    "| Idle % | " .. pct_text(g.idle_time_percent) .. " |",
    "| Exposed Communication % | " .. pct_text(g.exposed_comm_time_percent) .. " |",
    "| Top Bottleneck Category | " .. top_bottleneck(inp) .. " |",
  }
end

local function category_entry(inp, name)
  for _, c in ipairs((inp.manifest or {}).categories or {}) do
    if c.name == name then return c end
  end
  return {}
end

-- Trace 2's categories from trace2_ops_summary_by_category, in its order:
-- {name = <enhanced name>, display = <display name>, time = <ms>}. The times
-- are rounded to 3 decimals as trace 1's gpu_kernel_time_ms are, and a
-- category is shown under the name trace 1 gives it (else trace 2's own), so
-- a trace compared with itself shows the same names and numbers in both columns.
local function trace2_categories(inp)
  local out = {}
  for _, r in ipairs((inp.manifest or {}).trace2_ops_summary_by_category or {}) do
    local raw = tostring(r["op category"])
    local name = raw:gsub("[ /]", "_"):lower() -- the enhanced name (a display name in older records)
    local c1 = category_entry(inp, name)
    out[#out + 1] = { name = name, time = py.round(sf.value(r.total_direct_kernel_time_ms) + 0.0, 3),
      display = c1.display_name or (inp.trace2_names or {})[name] or raw }
  end
  return out
end

-- The whole that trace 2's shares are of, as compute_whole for trace 1.
local function compute_whole2(inp)
  local sum = 0
  for _, c in ipairs(trace2_categories(inp)) do sum = sum + c.time end
  return math.max(sum, computation_ms((inp.manifest or {}).trace2_gpu_utilization or {}))
end

-- Trace 2's largest category (ties: the first listed, as top_category).
local function trace2_top(inp)
  local best
  for _, c in ipairs(trace2_categories(inp)) do
    if not best or c.time > best.time then best = c end
  end
  if not best then return "None" end
  return cell(best.display) .. " (" .. share_text(best.time, compute_whole2(inp)) .. ")"
end

local function comparative_metrics(inp)
  local g1, g2 = utilization(inp), (inp.manifest or {}).trace2_gpu_utilization or {}
  local t1, t2 = sf.value(g1.total_time_ms), sf.value(g2.total_time_ms)
  local function diff_pct(key)
    local d = sf.value(g2[key]) - sf.value(g1[key])
    return signed(d, pct_text(d))
  end
  local dt = t2 - t1
  local rel = t1 > 0 and dt / t1 * 100 or 0
  return {
    string.format("| Metric | Trace 1 - (%s) | Trace 2 - (%s) | Difference |", cell(platform_of(inp)),
      cell(inp.platform2 or "Trace 2")),
    "|--------|------------|------------|------------|",
    string.format("| Total Time | %s | %s | %s (%s) |", ms_text(t1, math.max(t1, t2)), ms_text(t2, math.max(t1, t2)),
      signed(dt, ms_text(dt, math.max(t1, t2))),
      signed(rel, round_text(rel, 1) .. "%")),
    string.format("| Compute %% | %s | %s | %s |", pct_text(g1.computation_time_percent),
      pct_text(g2.computation_time_percent), diff_pct("computation_time_percent")),
    string.format("| Idle %% | %s | %s | %s |", pct_text(g1.idle_time_percent), pct_text(g2.idle_time_percent),
      diff_pct("idle_time_percent")),
    string.format("| Exposed Communication %% | %s | %s | %s |", pct_text(g1.exposed_comm_time_percent),
      pct_text(g2.exposed_comm_time_percent), diff_pct("exposed_comm_time_percent")),
    string.format("| Top Bottleneck Category | %s | %s | — |", top_bottleneck(inp), trace2_top(inp)),
  }
end

local function executive_summary(inp, items)
  local out = { "## Executive Summary", "", overview(inp, items), "" }
  if type(inp.no_arch_note) == "string" and inp.no_arch_note ~= "" then
    add(out, "> **Note:** " .. text(inp.no_arch_note), "")
  end
  add(out, coverage_line(inp), "")
  local unlinked = inp.manifest and inp.manifest.unlinked_gpu -- tracelens.prepare, "Unlinked GPU work"
  if type(unlinked) == "table" and type(unlinked.summary) == "string" then
    add(out, "**Unlinked GPU work**: " .. text(unlinked.summary), "")
  end
  append(out, is_comparative(inp) and comparative_metrics(inp) or standalone_metrics(inp))
  add(out, "", "{{PERF_PLOT}}", "")
  return out
end

-- Warnings ------------------------------------------------------------------------

local function high_variance_rows(inp)
  local rows = {}
  for _, c in ipairs(compute_categories(inp)) do
    local m = (inp.metrics or {})[c.name]
    for _, op in ipairs(type(m) == "table" and m.operations or {}) do
      if op.high_variance == true then
        rows[#rows + 1] = string.format("| %s | %s | %s | %s |", cell(op.name), cell(c.display_name or c.name),
          cell_num(op.cov), cell_num(op.time_ms))
      end
    end
  end
  return rows
end

-- The warnings and failures of the trace health check (tracelens.health),
-- one line each, and the notes that change how the figures were obtained.
local REPORTED_NOTES = { linked_by_correlation = true }
local LEVEL_WORD = { fail = "failed", warn = "warning", note = "note" }

-- Comparative: the checks of both traces (inp.health2: trace 2's), each row
-- led by the trace it is about.
local function health_rows(inp)
  local rows = {}
  local function add_rows(checks, who)
    for _, c in ipairs(checks or {}) do
      if c.level == "warn" or c.level == "fail" or (c.level == "note" and REPORTED_NOTES[c.id]) then
        rows[#rows + 1] = string.format("- %s**%s** (%s): %s.%s", who, text(c.title), LEVEL_WORD[c.level],
          text(c.detail), c.fix and (" To fix: " .. md.prose(c.fix) .. ".") or "")
      end
    end
  end
  if not is_comparative(inp) then
    add_rows(inp.health, "")
    return rows
  end
  add_rows(inp.health, "Trace 1 (" .. text(inp.platform or "Trace 1") .. "): ")
  add_rows(inp.health2, "Trace 2 (" .. text(inp.platform2 or "Trace 2") .. "): ")
  return rows
end

local function warnings(inp)
  local failed, variance, notes = inp.failed or {}, high_variance_rows(inp), inp.warnings or {}
  local health = health_rows(inp)
  if #failed == 0 and #variance == 0 and #notes == 0 and #health == 0 then return {} end
  local out = { "## Warnings", "" }
  if #health > 0 then
    add(out, is_comparative(inp) and "**Trace health** (`tracelens check TRACE` gives the full list for each "
      .. "trace): what in each trace limits what the analysis below can say." or "**Trace health** (`tracelens "
      .. "check` gives the full list): what in this trace limits what the analysis below can say.", "")
    append(out, health)
    out[#out + 1] = ""
  end
  if #failed > 0 then
    add(out, "The following analyses failed:", "", "| Analysis | Tier | Error Summary |", "|----------|------|---------------|")
    for _, f in ipairs(failed) do
      out[#out + 1] = string.format("| %s | %s | %s |", cell(display_name(inp, f.category)), f.tier or "Compute Kernel",
        cell(f.error or "unknown error"))
    end
    add(out, "", "Their findings are excluded from the recommendations below.", "")
  end
  if #variance > 0 then
    add(out, "**Data Quality:** These operations vary strongly between calls (coefficient of variation above 1.0), "
      .. "which is likely a profiler artifact. Treat their reported times with caution.", "",
      "| Operation | Category | CoV | Reported Time (ms) |", "|-----------|----------|-----|--------------------|")
    append(out, variance)
    out[#out + 1] = ""
  end
  if #notes > 0 then
    add(out, "Notes from the analysis run:", "")
    for _, n in ipairs(notes) do out[#out + 1] = "- " .. text(n) end
    out[#out + 1] = ""
  end
  return out
end

-- Compute Kernel Optimizations ------------------------------------------------------

-- Trace 2's kernel time of a category (matched on the enhanced name, or on the
-- display name case-insensitively: a user rule's category).
local function trace2_time(inp, category, display)
  for _, c in ipairs(trace2_categories(inp)) do
    if c.name == category or c.display:lower() == tostring(display):lower() then return c.time end
  end
end

-- A priority's kernel time: its category's (manifest), else the priority's
-- own; for a user rule (no manifest entry) the kernel time of the operations
-- it selected (its metrics' total_time_ms) and their count, with rule = true:
-- those operations are also in their own categories, so the row's share is
-- not part of the column's 100%.
local function row_time(inp, p)
  local entry = category_entry(inp, p.category)
  local t = entry.gpu_kernel_time_ms
  if not present(t) then t = p.gpu_kernel_time_ms end
  if present(t) or entry.name then return t, entry.ops_count, false end
  local m = (inp.metrics or {})[p.category]
  if type(m) == "table" and type(m.total_time_ms) == "number" and m.total_time_ms > 0 then
    return m.total_time_ms, #(m.operations or {}), true
  end
  return nil, entry.ops_count, false
end

local function top_ops_row(inp, p)
  local entry = category_entry(inp, p.category)
  local t, ops, rule = row_time(inp, p)
  local share = rule and "—" or share_text(sf.value(t), compute_whole(inp))
  local marker = string.format(" <!-- top-ops-row low=%s high=%s -->", num(p.impact_score_low), num(p.impact_score_high))
  local display = cell(p.display_name or entry.display_name or p.category)
  if is_comparative(inp) then
    local t2 = trace2_time(inp, p.category, display)
    local diff = present(t2) and signed(t2 - sf.value(t), round_text(t2 - sf.value(t), 3)) or "—"
    return string.format("| %s | %s | %s | %s | %s | %s | %s |%s", num(p.rank), display, cell_num(t),
      present(t2) and round_text(t2, 3) or "—", share, cell_num(ops), diff, marker)
  end
  return string.format("| %s | %s | %s | %s | %s |%s", num(p.rank), display, cell_num(t), share,
    cell_num(ops), marker)
end

-- The priorities in row order: a category without kernel time (a user
-- rule's, absent from the manifest) never ranks above one with time; when
-- one is moved, the ranks are renumbered by position.
local function top_ops_order(inp)
  local timed, untimed, moved = {}, {}, false
  for _, p in ipairs((inp.priority or {}).priorities or {}) do
    local t = row_time(inp, p)
    if present(t) then
      timed[#timed + 1] = p
      moved = moved or #untimed > 0
    else
      untimed[#untimed + 1] = p
    end
  end
  if not moved then return (inp.priority or {}).priorities or {} end
  local out = {}
  for _, list in ipairs({ timed, untimed }) do
    for _, p in ipairs(list) do
      local copy = json.obj()
      for _, k in ipairs(json.keys(p)) do copy[k] = p[k] end
      copy.rank = #out + 1
      out[#out + 1] = copy
    end
  end
  return out
end

-- The compute categories only trace 2 has, in a table of their own under Top
-- Operations (the table above has one row per trace 1 priority, R4).
local function trace2_only(inp)
  local rows = {}
  for _, c in ipairs(trace2_categories(inp)) do
    if not category_entry(inp, c.name).name then
      rows[#rows + 1] = string.format("| %s | — | %s | %s | %s |", cell(c.display), round_text(c.time, 3),
        share_text(c.time, compute_whole2(inp)), signed(c.time, round_text(c.time, 3)))
    end
  end
  if #rows == 0 then return {} end
  local out = { "Categories only in Trace 2:", "",
    "| Category | Trace 1 Time (ms) | Trace 2 Time (ms) | % of Trace 2 Compute Time | Difference (ms) |",
    "|----------|-------------------|-------------------|---------------------------|-----------------|" }
  append(out, rows)
  add(out, "")
  return out
end

-- The compute categories with kernel time that the table leaves out (it
-- has one row per priority, R4), in one sentence: those whose findings are
-- all estimates (their cards follow), the quantified ones ranked past the
-- table's first six, and the rest together (under the fallback threshold,
-- without a finding). Nothing when the table lists every category.
local function top_ops_omitted(inp)
  local priority = require "tracelens.priority"
  local listed, quantified, estimated = {}, {}, {}
  for _, p in ipairs((inp.priority or {}).priorities or {}) do listed[p.category] = true end
  for _, f in ipairs((inp.priority or {}).findings or {}) do
    if priority.estimated(f) then estimated[f.category] = true else quantified[f.category] = true end
  end
  local left = {}
  for _, c in ipairs(compute_categories(inp)) do
    local t = sf.value(c.gpu_kernel_time_ms)
    if not listed[c.name] and t > 0 then left[#left + 1] = { c = c, t = t } end
  end
  if #left == 0 then return {} end
  left = require("tracelens.analysis").stable_sort_desc(left, "t")
  local whole = compute_whole(inp)
  local est, past, rest, rest_ms = {}, {}, 0, 0
  for _, e in ipairs(left) do
    local text = string.format("%s (%s ms, %s)", cell(e.c.display_name or e.c.name), round_text(e.t, 3),
      share_text(e.t, whole))
    if quantified[e.c.name] then past[#past + 1] = text
    elseif estimated[e.c.name] then est[#est + 1] = text
    else rest, rest_ms = rest + 1, rest_ms + e.t end
  end
  local list = require("tracelens.prose").list
  local parts = {}
  if #est > 0 then
    parts[#parts + 1] = list(est) .. (#est == 1 and ", whose findings are" or ", whose findings are all")
      .. " estimates without a performance model (in the cards below)"
  end
  if #past > 0 then
    parts[#parts + 1] = string.format("%s, ranked by impact after the table's first %d", list(past),
      priority.MAX_RECOMMENDATIONS)
  end
  if rest > 0 then
    parts[#parts + 1] = string.format("%d more without a finding, %s ms together, each under %s%% of compute time",
      rest, round_text(rest_ms, 3), string.format("%g", priority.FALLBACK_SHARE * 100))
  end
  return { "Not in this table: " .. table.concat(parts, "; ") .. ".", "" }
end

local function top_operations(inp)
  local out = { "### Top Operations", "", "<!-- impact-begin kind=top_ops -->" }
  if is_comparative(inp) then
    add(out, "| Rank | Category | Trace 1 Time (ms) | Trace 2 Time (ms) | % of Compute Time | Ops | Difference (ms) |",
      "|------|----------|-------------------|-------------------|-------------------|-----|-----------------|")
  else
    add(out, "| Rank | Category | Time (ms) | % of Compute Time | Ops |",
      "|------|----------|-----------|-------------------|-----|")
  end
  local order = top_ops_order(inp)
  for _, p in ipairs(order) do out[#out + 1] = top_ops_row(inp, p) end
  add(out, "<!-- impact-end -->", "")
  local omitted = top_ops_omitted(inp)
  -- a table without a row (vLLM without an arch file: every finding an estimate) says so first
  if #order == 0 and omitted[1] then omitted[1] = "The table has no row. " .. omitted[1] end
  append(out, omitted)
  if is_comparative(inp) then append(out, trace2_only(inp)) end
  return out
end

local function link(section, anchor, n)
  return string.format("→ *See [Detailed Analysis: %s > P%d](#%s%d) for details*", section, n, anchor, n)
end

local function card_lines(heading, body, link_line)
  local out = { heading, "" }
  append(out, body)
  add(out, "", link_line, "")
  return out
end

-- A tier's P-item cards, separated by rules, each linking to its detailed
-- analysis under `section` (anchors anchor1, anchor2, ...), and the closing rule.
local function tier_cards(out, items, section, anchor)
  for i, item in ipairs(items) do
    if i > 1 then add(out, "---", "") end
    append(out, card_lines(string.format("### %s P%d: %s", icon_at(i), i, item.title), item.card,
      link(section, anchor, i)))
  end
  add(out, "---", "")
end

-- The impact_score line of the legend; when the analysed step has time without GPU work, it says that the
-- scores are shares of the GPU span, not of the step (TimeSformer H100: 159.99 ms against a 382.54 ms step).
local function impact_legend(inp)
  local cp = inp.critical_path
  if not require("tracelens.critical_path_md").no_gpu(cp) then return LEGEND[2] end
  return LEGEND[2] .. string.format(" End-to-end GPU time is the %s GPU span of this analysis, not the "
    .. "%s wall time of %s, which has time without GPU work: a score is not a share of the step.",
    ms_text(utilization(inp).total_time_ms), ms_text(cp.wall_us / 1000),
    text(cp.name or ("ProfilerStep#" .. tostring(cp.step))))
end

local function compute_section(inp, items)
  local out = { "## Compute Kernel Optimizations", "",
    "Findings from per-category kernel analysis (GEMM, SDPA, elementwise, etc.).",
    "Summaries of the per-category analyzers' recommendations, focused on individual kernel efficiency.", "",
    LEGEND[1], impact_legend(inp), "" }
  append(out, top_operations(inp))
  if #items == 0 then add(out, no_compute_line(inp), "") end
  tier_cards(out, items, "Compute kernel insights", "detailed-analysis-compute-p")
  return out
end

-- Kernel Fusion Opportunities ------------------------------------------------------------

local function fusion_note(inp, with_coverage)
  if is_comparative(inp) then return FUSION_NOTE_COMPARATIVE end
  return FUSION_NOTE_HEAD .. (with_coverage and FUSION_NOTE_COVERAGE or "") .. FUSION_NOTE_TAIL
end

local function fusion_section(inp, items)
  local out = { "## Kernel Fusion Opportunities (Experimental)", "", fusion_note(inp, true), "" }
  if #items == 0 and is_comparative(inp) then
    add(out, own_fusion_md.NO_DIFFERENCE .. " " .. own_fusion_md.own_sentence(inp.own_fusion), "")
  elseif #items == 0 then
    add(out, "No kernel fusion opportunities detected.", "")
  end
  for i, item in ipairs(items) do
    if i > 1 then add(out, "---", "") end
    append(out, card_lines(string.format("### %s P%d: %s", icon_at(i), i, item.title), item.card,
      link("Kernel fusion insights", "detailed-analysis-fusion-P", i)))
  end
  if inp.sequence_hints and #inp.sequence_hints > 0 then -- tracelens.fusion.sequences (issue 16)
    if #items > 0 then add(out, "---", "") end
    append(out, inp.sequence_hints)
  end
  add(out, "---", "")
  return out
end

-- System-Level Optimizations ---------------------------------------------------------

-- A host-bound step (critical_path_md.host_bound): the system section's paragraph on its time without GPU work,
-- with the longest host calls in it; nil otherwise (TimeSformer H100: 222.54 of 382.54 ms).
local function host_bound_text(inp)
  local cp = inp.critical_path
  local us, share = require("tracelens.critical_path_md").host_bound(cp)
  if not us then return nil end
  local s = string.format("⚠️ **Host-bound step**: %s (the step the Critical Path section analyses) has no GPU work "
    .. "for %s of its %s (%s), at least half of the step: only the host runs then, so no kernel or GPU-pipeline "
    .. "finding shortens that time; shortening that host work (input loading and preprocessing are typical) or "
    .. "overlapping it with GPU work can.", text(cp.name or ("ProfilerStep#" .. tostring(cp.step))),
    ms_text(us / 1000), ms_text(cp.wall_us / 1000), pct_text(share * 100))
  local calls = {}
  for _, c in ipairs(cp.host_calls or {}) do
    calls[#calls + 1] = string.format("%s (%s)", md.code(c.name), ms_text(c.us / 1000))
  end
  if #calls > 0 then
    s = s .. string.format(" The longest host %s in that time (python_function and cpu_op events; a call's time "
      .. "includes the calls nested in it, and a wrapper is named by the call inside it): %s.",
      #calls == 1 and "call" or "calls", sf.list(calls))
  end
  return s
end

local function template_a(inp)
  local g = utilization(inp)
  local comm, memcpy = sf.value(g.exposed_comm_time_percent), sf.value(g.exposed_memcpy_time_percent)
  local tail
  if comm < NEGLIGIBLE_PCT and memcpy < NEGLIGIBLE_PCT then
    tail = "with negligible memcpy and communication overhead."
  else
    tail = string.format("with %s exposed communication and %s exposed memory copies, below the flagging "
      .. "thresholds.", pct_text(comm), pct_text(memcpy))
  end
  local idle = sf.value(g.idle_time_percent)
  local idle_text = ","
  if idle > IDLE_THRESHOLD_PCT then
    idle_text = string.format(" and %s idle,", pct_text(idle))
  elseif idle > 0 then
    idle_text = string.format(" and %s idle (below the %d%% threshold),", pct_text(idle), IDLE_THRESHOLD_PCT)
  end
  if host_bound_text(inp) then
    -- the step's largest cost is its host-only time: only the GPU's span is free of flagged bottlenecks
    return string.format("Within the GPU span, the GPU activity breakdown shows %s computation%s %s No "
      .. "system-level card is flagged there.", pct_text(g.computation_time_percent), idle_text, tail)
  end
  return string.format("✅ No system-level bottlenecks detected. GPU activity breakdown shows %s computation%s %s",
    pct_text(g.computation_time_percent), idle_text, tail)
end

local function system_section(inp, items)
  local out = { "## System-Level Optimizations", "", SYSTEM_NOTE, "" }
  if is_comparative(inp) then add(out, COMPARATIVE_NOTE, "") end
  add(out, "Findings from system-level analysis (GPU utilization, memory transfer patterns,",
    "communication/compute overlap). These affect the GPU pipeline as a whole.", "")
  local host = host_bound_text(inp)
  if host then add(out, host, "") end
  if #items == 0 then add(out, template_a(inp), "") end
  tier_cards(out, items, "System-level insights", "detailed-analysis-system-p")
  return out
end

-- Detailed Analysis ---------------------------------------------------------------------

local function block_lines(anchor, tier, n, heading, body)
  local out = { string.format('<a id="%s"></a>', anchor),
    string.format("<!-- reasoning-candidate tier=%s rank=%d -->", tier, n), heading }
  append(out, body)
  out[#out + 1] = ""
  return out
end

local function detailed_analysis(inp, items)
  local out = { "## Detailed Analysis", "", "### Compute Kernel Insights", "" }
  if #items.compute == 0 then add(out, no_compute_line(inp), "") end
  for i, item in ipairs(items.compute) do
    append(out, block_lines("detailed-analysis-compute-p" .. i, "compute", i,
      string.format("#### %s P%d: %s", icon_at(i), i, item.title), item.block))
  end
  add(out, "### Kernel Fusion Insights", "", fusion_note(inp, false), "")
  if #items.fusion == 0 then add(out, "No fusion impact estimates available.", "") end
  for i, item in ipairs(items.fusion) do
    append(out, block_lines("detailed-analysis-fusion-P" .. i, "fusion", i,
      string.format("#### %s P%d: %s", icon_at(i), i, item.block_title), item.block))
  end
  add(out, "### System-Level Insights", "")
  if #items.system == 0 then
    add(out, host_bound_text(inp) and "No system-level card is flagged; the step's host-only time is described in "
      .. "System-Level Optimizations above." or "✅ No system-level bottlenecks detected.", "")
  end
  for i, item in ipairs(items.system) do
    append(out, block_lines("detailed-analysis-system-p" .. i, "system", i,
      string.format("#### %s P%d: %s", icon_at(i), i, item.title), item.block))
  end
  add(out, "---", "")
  return out
end

-- Appendix ------------------------------------------------------------------------------

local function info(inp, key)
  local v = (inp.model_info or {})[key]
  if type(v) ~= "string" or v == "" then return UNKNOWN end
  return v
end

-- The user rules that ran, each with the file it came from (a rule that
-- failed is marked; its error is under ## Warnings).
local function rules_ran(inp)
  local out = { "### Rules" }
  local failed = failed_set(inp)
  if #(inp.rules or {}) == 0 then
    out[#out + 1] = inp.no_rules and "No rules ran (--no-rules)." or "No rules ran."
  end
  for _, r in ipairs(inp.rules or {}) do
    out[#out + 1] = "- " .. md.code(r.name) .. ": " .. md.code(r.path) .. (failed[r.name] and " (failed)" or "")
  end
  out[#out + 1] = ""
  return out
end

local MAF_ROWS = { { "matrix_bf16", "BF16" }, { "matrix_fp8", "FP8" }, { "matrix_fp4", "FP4" } }

-- The Model line: when the trace names no model but the architecture or
-- the scale was read from its operations, say that the name is what is
-- missing, so the lines below do not contradict it (model_info.json keeps
-- the reference's "Cannot be inferred from trace").
local function model_line(inp)
  local model = info(inp, "model")
  if model == UNKNOWN and (info(inp, "architecture") ~= UNKNOWN or info(inp, "scale") ~= UNKNOWN) then
    return "- **Model**: not named in the trace (the architecture and scale below are read from its operations)"
  end
  return "- **Model**: " .. text(model)
end

local function appendix(inp)
  local out = { "## Appendix", "", "### Model Architecture",
    model_line(inp), "- **Architecture**: " .. text(info(inp, "architecture")),
    "- **Scale**: " .. text(info(inp, "scale")), "- **Precision**: " .. text(info(inp, "precision")), "",
    "### Hardware Reference", "- **Platform**: " .. text(platform_of(inp)) }
  local arch = inp.arch or {}
  if type(arch.mem_bw_gbps) == "number" then
    out[#out + 1] = "- **Peak HBM BW**: " .. json.number_text(arch.mem_bw_gbps / 1000) .. " TB/s"
  end
  local maf = arch.max_achievable_tflops or {}
  for _, r in ipairs(MAF_ROWS) do
    if type(maf[r[1]]) == "number" then
      -- MAF (max-achievable FLOPS) only where the arch file's figures are
      -- measured ones; NVIDIA's files hold datasheet peaks
      local label = arch.kind == "max_achievable" and "Peak MAF (" .. r[2] .. ", max-achievable)"
        or arch.kind == "datasheet_peak" and "Peak (" .. r[2] .. ", datasheet)" or "Peak (" .. r[2] .. ")"
      out[#out + 1] = "- **" .. label .. "**: " .. json.number_text(maf[r[1]]) .. " TFLOPS"
    end
  end
  if type(inp.platform_note) == "string" and inp.platform_note ~= "" then
    out[#out + 1] = "- **Platform selection**: " .. text(inp.platform_note)
  end
  if is_comparative(inp) then
    out[#out + 1] = "- **Scope**: the model and hardware above describe Trace 1."
  end
  out[#out + 1] = ""
  append(out, rules_ran(inp))
  return out
end

--- The whole analysis.md.
-- ProfilerStep#N figures, when the steady steps' wall times vary by more
-- than 10% of their median (trace:steps(); the step_breakdown sheet).
local STEP_SPREAD = 0.10
local function ms3(us) return string.format("%.3f", us / 1000) end
-- Every step with GPU work a warm-up step (HTA's MI250 toy trace: its one
-- step with GPU work is a first step, the other a stub): the figures are the
-- warm-up's, which the reader must know before acting on them.
local function warmup_only(steps)
  local warm = {}
  for _, s in ipairs(steps) do
    if (s.gpu_events or 0) > 0 then
      if not s.warmup then return nil end
      warm[#warm + 1] = s
    end
  end
  if #warm == 0 then return nil end
  local names = {}
  for i, s in ipairs(warm) do names[i] = cell(s.name) end
  return { "## Steps", "", string.format("All of the steps' GPU work is in %s (%s: wall time more than 1.5 "
    .. "times the median step's), so the figures of this analysis describe warm-up (first launches that load kernel "
    .. "code, allocator growth, autotuning), not the steady state: profile more steps, the active window after "
    .. "warm-up (torch.profiler.schedule(wait=1, warmup=1, active=N)), before acting on them.",
    #warm == 1 and "a warm-up step" or "warm-up steps", table.concat(names, ", ")), "" }
end

local function steps_section(inp)
  local steps = inp.steps or {}
  local warm = warmup_only(steps)
  if warm then return warm end
  local walls = {}
  for _, s in ipairs(steps) do
    if not s.warmup and not s.partial then walls[#walls + 1] = s.wall_us end
  end
  if #walls < 2 then return {} end
  table.sort(walls)
  local n = #walls
  local median = n % 2 == 1 and walls[(n + 1) // 2] or (walls[n // 2] + walls[n // 2 + 1]) / 2
  if median <= 0 or (walls[n] - walls[1]) / median <= STEP_SPREAD then return {} end
  local out = { "## Steps", "",
    string.format("The %d steady steps' wall times range from %s to %s ms (median %s ms, a spread of %.1f%% of the "
      .. "median, above %d%%): the per-step figures below (the step_breakdown sheet) show where the time went.",
      n, ms3(walls[1]), ms3(walls[n]), ms3(median), (walls[n] - walls[1]) / median * 100,
      math.floor(STEP_SPREAD * 100 + 0.5)), "",
    "| Step | Status | Wall (ms) | GPU busy (ms) | GPU idle in its span (ms) | Exposed comm (ms) |",
    "|------|--------|-----------|---------------|---------------------------|-------------------|" }
  for _, s in ipairs(steps) do
    out[#out + 1] = string.format("| %s | %s | %s | %s | %s | %s |", cell(s.name),
      s.partial and "partial" or s.warmup and "warm-up" or "steady", ms3(s.wall_us),
      s.busy_us and ms3(s.busy_us) or "—", s.idle_us and ms3(s.idle_us) or "—",
      s.exposed_comm_us and ms3(s.exposed_comm_us) or "—")
  end
  out[#out + 1] = ""
  return out
end

function M.render(inp)
  local items = { compute = compute_items(inp), fusion = fusion_items(inp), system = system_items(inp) }
  local out = { title(inp), "" }
  append(out, executive_summary(inp, items))
  append(out, warnings(inp))
  append(out, steps_section(inp))
  append(out, require("tracelens.critical_path_md").section(inp.critical_path)) -- issue 16
  append(out, require("tracelens.gpu_feed").section(inp.gpu_feed)) -- issue 16
  out[#out + 1] = "---"
  out[#out + 1] = ""
  if inp.ranks then -- --ranks: tracelens.ranks_md's section
    append(out, require("tracelens.ranks_md").section(inp.ranks))
  end
  if inp.inference then -- --inference: tracelens.inference's section
    append(out, require("tracelens.inference").section(inp.inference, { items = items.compute,
      manifest = inp.manifest, comparative = is_comparative(inp) }))
  end
  append(out, compute_section(inp, items.compute))
  append(out, fusion_section(inp, items.fusion))
  append(out, system_section(inp, items.system))
  append(out, detailed_analysis(inp, items))
  append(out, appendix(inp))
  return table.concat(out, "\n")
end

return M

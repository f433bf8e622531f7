-- The three validation levels (tracelens.validate; analysis-layer.md §12,
-- agents-and-report.md §6.1-6.3). Fixture output directories are written to
-- a temp dir; every expected message is written out here in full from the
-- spec's message texts, with line numbers counted in the fixtures.
local root, shared = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local V = require "tracelens.validate"

-- Helpers --------------------------------------------------------------------

local function write(path, body)
  local f = assert(io.open(path, "wb"))
  f:write(body)
  f:close()
end

local function mkdirs(dir, ...)
  for _, sub in ipairs({ ... }) do os.execute("mkdir -p " .. T.q(dir .. "/" .. sub)) end
end

-- Replaces the one plain occurrence of old (the fixture must contain it).
local function edit(s, old, new)
  local a, b = s:find(old, 1, true)
  assert(a, "fixture lacks: " .. old)
  return s:sub(1, a - 1) .. new .. s:sub(b + 1)
end

-- The 1-based number of the first line of s that starts with prefix.
local function line_of(s, prefix, nth)
  local n, seen = 0, 0
  for line in (s .. "\n"):gmatch("(.-)\n") do
    n = n + 1
    if line:sub(1, #prefix) == prefix then
      seen = seen + 1
      if seen == (nth or 1) then return n end
    end
  end
  error("no line starts with " .. prefix)
end

local function same_list(got, want, what)
  local ok = #got == #want
  for i = 1, math.max(#got, #want) do ok = ok and got[i] == want[i] end
  return T.check(ok, what .. ":\n  got:  " .. table.concat(got, "\n        ")
    .. "\n  want: " .. table.concat(want, "\n        "))
end

-- Fixtures ---------------------------------------------------------------------

local ARGS_MM = "(256,512) bf16<br>(512,128) bf16"
local HEADER = "| Operation | Args | Kernel Path | Kernel Name | Time (ms) | %E2E | Count | FLOPS/Byte | Efficiency | Bound |"
local ROW_MM = "| aten::mm | " .. ARGS_MM .. " | Tensile (vendor) | Cijk_Alik | 0.09 | 2.4 | 17 | 30.1 | 3.05% of 5.3 TB/s | memory-bound |"
local ROW_ADDMM = "| aten::addmm |  | hipBLASLt | — | 0.01 | 0.3 | 1 | 12.0 | 1.00% of 5.3 TB/s | memory-bound |"

local GEMM_FINDINGS = table.concat({
  "# GEMM Analysis Findings",
  "",
  "## Recommendations",
  "",
  "### P1: Memory-bound GEMMs below roofline (Tensile)",
  "",
  "**Insight**: The GEMMs run far below the memory roofline.",
  "",
  "**Action**: Tune the tiles.",
  "",
  "<!-- impact-begin kind=p_item low=3.44 mid=4.01 high=4.58 -->",
  "**Impact**: impact_score: 4.01",
  "<!-- impact-end -->",
  "",
  "## Detailed Analysis",
  "",
  "<!-- reasoning-candidate tier=compute rank=1 -->",
  "#### P1: Memory-bound GEMMs below roofline (Tensile)",
  "**Identification:** Flagged for low efficiency.",
  "",
  "**Data:**",
  "",
  HEADER,
  "|---|---|---|---|---|---|---|---|---|---|",
  ROW_MM,
  ROW_ADDMM,
  "",
  "**Reasoning for Slowdown:** Low arithmetic intensity.",
  "",
  "**Resolution:** Tune the tiles.",
  "",
  "**Impact estimate:**",
  "<!-- impact-begin kind=detail_estimate low=3.44 high=4.58 -->",
  "- Low end impact_score: 3.44",
  "- High end impact_score: 4.58",
  "<!-- impact-end -->",
  "",
}, "\n")

local GEMM_METRICS = [[{
  "category": "gemm",
  "operations": [
    {"name": "aten::mm", "args": "(256,512) bf16<br>(512,128) bf16", "launcher_path": "Tensile (vendor)", "kernel_name_trunc": "Cijk_Alik"},
    {"name": "aten::addmm", "args": "", "launcher_path": "hipBLASLt", "kernel_name_trunc": ""},
    {"name": "aten::bmm", "args": null, "launcher_path": null}
  ],
  "category_findings": [{"rank": 1, "impact_score": 4.01}]
}]]

-- A compute file with no findings: both sections, nothing in them.
local EMPTY_COMPUTE = "# Elementwise Analysis Findings\n\n## Recommendations\n\n"
  .. "No operations above the impact threshold.\n\n## Detailed Analysis\n\nNothing to report.\n"
local ELEMENTWISE_METRICS = [[{"category": "elementwise", "operations": [{"args": "(8,) f32"}], "category_findings": []}]]

local CPU_IDLE_FINDINGS = table.concat({
  "# CPU/Idle Time Analysis Findings",
  "**Status**: SUCCESS",
  "## Recommendations",
  "### P1: Host-side synchronization stalls the GPU",
  "**Insight**: The GPU idles between launches.",
  "**Action**: Remove host synchronization.",
  "<!-- impact-begin kind=p_item low=null mid=null high=null -->",
  "**Impact**: Not quantifiable from trace data",
  "<!-- impact-end -->",
  "## Detailed Analysis",
  "<!-- reasoning-candidate tier=system rank=1 -->",
  "#### Host-side synchronization",
  "**Impact estimate:** Impact estimate is not quantifiable from trace data.",
  "",
}, "\n")

local NOTHING_FLAGGED = "# Multi-Kernel Issue Analysis Findings\n\n## Summary\n\nNo issues flagged.\n\n"
  .. "## Recommendations\n\n## Detailed Analysis\n"
local NO_FUSION = "# Kernel Fusion Analysis Summary (Experimental)\n\nNo kernel fusion opportunities detected.\n"

local MANIFEST = [[{
  "comparison_scope": "standalone",
  "gpu_utilization": {"total_time_ms": 10.0, "computation_time_percent": 50.0, "idle_time_percent": 50.0},
  "categories": [
    {"name": "cpu_idle", "tier": "system"},
    {"name": "gemm", "tier": "compute_kernel", "gpu_kernel_time_ms": 3.0},
    {"name": "elementwise", "tier": "compute_kernel", "gpu_kernel_time_ms": 2.0},
    {"name": "multi_kernel", "tier": "system"},
    {"name": "kernel_fusion", "tier": "system"}
  ]
}]]

local PRIORITY = [[{
  "findings": [
    {"category": "gemm", "global_rank": 1, "impact_score": 4.01, "impact_score_low": 3.44, "impact_score_high": 4.58}
  ],
  "priorities": [{"rank": 1, "category": "gemm", "source": "findings_rollup", "impact_score": 4.01}]
}]]

local REPORT = table.concat({
  "# Workload - MI300X Standalone Analysis",
  "",
  "## Executive Summary",
  "",
  "The GEMMs dominate the measured GPU time on MI300X.",
  "",
  "| Metric | Value |",
  "|--------|-------|",
  "| Total Time | 10.0 ms |",
  "| Compute % | 50.0% |",
  "| Idle % | 50.0% |",
  "| Exposed Communication % | 0.0% |",
  "| Top Bottleneck Category | GEMM (30.0%) |",
  "",
  "## Compute Kernel Optimizations",
  "",
  "### Top Operations",
  "",
  "<!-- impact-begin kind=top_ops -->",
  "| Rank | Category | Time (ms) |",
  "|------|----------|-----------|",
  "| 1 | GEMM | 3.0 |",
  "<!-- impact-end -->",
  "",
  "### 🔴 P1: Memory-bound GEMMs below roofline (Tensile)",
  "",
  "**Insight**: The GEMMs run far below the memory roofline.",
  "",
  "**Action**: Tune the tiles.",
  "",
  "<!-- impact-begin kind=p_item category=gemm low=3.44 mid=4.01 high=4.58 -->",
  "**Impact**: impact_score: 4.01",
  "<!-- impact-end -->",
  "",
  "## Kernel Fusion Opportunities (Experimental)",
  "",
  "### 🟡 P1: Unfused GELU (0.2 ms, 4 instances)",
  "",
  "<!-- impact-begin kind=p_item low=1.5 mid=1.75 high=2.0 -->",
  "**Impact**: impact_score: 2.0 (perf-model coverage 4/5 kernels)",
  "<!-- impact-end -->",
  "",
  "## System-Level Optimizations",
  "",
  "✅ No system-level bottlenecks detected.",
  "",
  "## Detailed Analysis",
  "",
  "### Compute Kernel Insights",
  "",
  "<!-- reasoning-candidate tier=compute rank=1 -->",
  "#### 🔴 P1: Memory-bound GEMMs below roofline (Tensile)",
  "",
  "**Data:**",
  "",
  HEADER,
  "|---|---|---|---|---|---|---|---|---|---|",
  ROW_MM,
  "",
  "<!-- impact-begin kind=detail_estimate low=3.44 high=4.58 -->",
  "- Low end impact_score: 3.44",
  "- High end impact_score: 4.58",
  "<!-- impact-end -->",
  "",
  "### Kernel Fusion Insights",
  "",
  "<!-- reasoning-candidate tier=fusion rank=1 -->",
  "#### 🟡 P1: Unfused GELU (0.2 ms, 4 instances)",
  "",
  "<!-- impact-begin kind=detail_estimate low=1.5 high=2.0 -->",
  "- Low end impact_score: 1.5",
  "<!-- impact-end -->",
  "",
  "### System-Level Insights",
  "",
  "✅ No system-level bottlenecks detected.",
  "",
  "## Appendix",
  "",
  "- **Platform**: MI300X",
  "",
}, "\n")

-- Writes a complete, valid standalone output directory; returns its path.
local function make_out(base, name)
  local out = base .. "/" .. name
  mkdirs(out, "category_data", "category_findings", "system_findings")
  write(out .. "/category_data/category_manifest.json", MANIFEST)
  write(out .. "/category_data/gemm_metrics.json", GEMM_METRICS)
  write(out .. "/category_data/elementwise_metrics.json", ELEMENTWISE_METRICS)
  write(out .. "/category_findings/gemm_findings.md", GEMM_FINDINGS)
  write(out .. "/category_findings/elementwise_findings.md", EMPTY_COMPUTE)
  write(out .. "/system_findings/cpu_idle_findings.md", CPU_IDLE_FINDINGS)
  write(out .. "/system_findings/multi_kernel_findings.md", NOTHING_FLAGGED)
  write(out .. "/system_findings/kernel_fusion_findings.md", NO_FUSION)
  write(out .. "/priority_data.json", PRIORITY)
  write(out .. "/analysis.md", REPORT)
  return out
end

local tmp = T.tmpdir()
local good = make_out(tmp, "good")
local GEMM_METRICS_DECODED = require("tracelens.json").decode(GEMM_METRICS)

-- Level 1 on text, as a compute file of the gemm category.
local function level1(s, opts)
  opts = opts or {}
  return V.validate_findings_text(s, { tier = opts.tier or "compute", scope = opts.scope, rel = "gemm_findings.md",
    metrics = opts.metrics == nil and GEMM_METRICS_DECODED or opts.metrics or nil })
end

-- Python str behaviours the messages depend on (values from CPython 3.11) ----------

do
  local t = require "tracelens.validate.text"
  same_list(t.splitlines("a\nb\r\nc\rd\ve\xc2\x85f\xe2\x80\xa8g\n\n"), { "a", "b", "c", "d", "e", "f", "g", "" },
    "str.splitlines boundaries")
  same_list(t.splitlines(""), {}, "''.splitlines()")
  T.eq(t.repr("Kernel's"), [["Kernel's"]], "repr picks double quotes")
  T.eq(t.repr("a'\"b"), [['a\'"b']], "repr escapes the quote")
  T.eq(t.repr("t\tq\\\xc2\xa0\xc3\xa9\xe2\x80\x8b"), "'t\\tq\\\\\\xa0\xc3\xa9\\u200b'",
    "repr escapes non-printables, keeps letters")
  T.eq(t.strip("\xc2\xa0 x \xe3\x80\x80\t"), "x", "str.strip() takes Unicode whitespace")
  T.eq(t.float("1_000.5"), 1000.5, "float() takes underscores")
  T.check(t.float("1__0") == nil and t.float("0x10") == nil and t.float(".") == nil, "float() rejects")
  T.eq(t.str(nil) .. t.str(1.0) .. t.str(true), "None1.0True", "str()")
  T.eq(t.dirname("a//b"), "a", "os.path.dirname")
end

-- Level 1 ------------------------------------------------------------------------

do
  local ok, errs = V.validate_findings_file(good .. "/category_findings/gemm_findings.md", "compute")
  T.check(ok, "valid compute file passes")
  same_list(errs, {}, "valid compute file: no errors")
  ok, errs = V.validate_findings_file(good .. "/system_findings/cpu_idle_findings.md", "system")
  T.check(ok, "valid system file passes")
  same_list(errs, {}, "valid system file: no errors")
  ok, errs = V.validate_findings_file(good .. "/category_findings/elementwise_findings.md", "compute")
  T.check(ok, "relaxed-empty compute file passes (category_findings == [])")
  same_list(errs, {}, "relaxed-empty compute file: no errors")
  T.eq(V.format_findings(true, {}), "PASS: Findings file is valid\n", "PASS printout")
  T.eq(V.format_findings(false, { "a", "b" }), "FAIL:\n  - a\n  - b\n", "FAIL printout")

  local missing = good .. "/category_findings/nope_findings.md"
  ok, errs = V.validate_findings_file(missing, "compute")
  T.check(not ok, "missing findings file fails")
  same_list(errs, { "File not found: " .. missing }, "missing findings file")
end

-- the same empty file fails when the metrics list findings
do
  local ok, errs = V.validate_findings_text(EMPTY_COMPUTE, { tier = "compute", rel = "elementwise_findings.md",
    metrics = GEMM_METRICS_DECODED })
  T.check(not ok, "empty compute file with findings in its metrics fails")
  same_list(errs, {
    "No ### P<N>: items found under ## Recommendations",
    "Missing label **Insight** in ## Recommendations (required for compute tier)",
    "Missing label **Action** in ## Recommendations (required for compute tier)",
    "Missing label **Impact** in ## Recommendations (required for compute tier)",
    "No <!-- reasoning-candidate --> blocks in ## Detailed Analysis",
    "elementwise_findings.md: missing required kind=p_item",
  }, "not relaxed: every empty-section error")
end

-- sections
do
  local _, errs = level1(edit(GEMM_FINDINGS, "## Recommendations", "## Recs"))
  same_list(errs, { "Missing required section: ## Recommendations" }, "missing Recommendations")
  _, errs = level1(edit(GEMM_FINDINGS, "## Detailed Analysis", "## Details"))
  same_list(errs, { "Missing required section: ## Detailed Analysis" }, "missing Detailed Analysis")
  local swapped = "## Detailed Analysis\n\n<!-- reasoning-candidate tier=system rank=1 -->\n"
    .. "Impact estimate is not quantifiable from trace data.\n\n## Recommendations\n\n### P1: Sync\n"
    .. "**Insight**: a\n**Action**: b\n<!-- impact-begin kind=p_item low=null mid=null high=null -->\n"
    .. "**Impact**: Not quantifiable from trace data\n<!-- impact-end -->\n"
  local ok
  ok, errs = V.validate_findings_text(swapped, { tier = "system", rel = "cpu_idle_findings.md" })
  T.check(not ok, "sections out of order fail")
  same_list(errs, { "## Recommendations must appear before ## Detailed Analysis" }, "sections out of order")
end

-- cards and candidates
do
  local _, errs = level1(edit(GEMM_FINDINGS, "### P1: Memory", "### Item: Memory"))
  same_list(errs, { "No ### P<N>: items found under ## Recommendations" }, "no P-item heading")
  _, errs = level1(edit(GEMM_FINDINGS, "**Action**: Tune the tiles.", "Tune the tiles."))
  same_list(errs, { "Missing label **Action** in ## Recommendations (required for compute tier)" }, "missing card label")
  _, errs = level1(edit(GEMM_FINDINGS, "<!-- reasoning-candidate tier=compute rank=1 -->", ""))
  same_list(errs, { "No <!-- reasoning-candidate --> blocks in ## Detailed Analysis" }, "no candidate block")

  local card2 = "### 🔴 P2: Second card\n**Insight**: x\n**Action**: y\n"
    .. "<!-- impact-begin kind=p_item low=1.0 mid=1.5 high=2.0 -->\n**Impact**: impact_score: 1.5\n<!-- impact-end -->\n\n"
  _, errs = level1(edit(GEMM_FINDINGS, "## Detailed Analysis", card2 .. "## Detailed Analysis"))
  same_list(errs, { "P-item count (2) does not match reasoning-candidate count (1)" }, "card/candidate counts")

  _, errs = level1(edit(GEMM_FINDINGS, "tier=compute rank=1", "tier=system rank=1"))
  same_list(errs, { "reasoning-candidate tier mismatch: expected tier=compute, found tier=system rank=1" },
    "tier mismatch (and no compute block left to check)")
  local ok
  ok, errs = level1(edit(GEMM_FINDINGS, "tier=compute rank=1", "tier=Compute rank=1"))
  T.check(ok, "tier compares lowercased; 'tier=Compute' is not a compute Data-table block")
  _, errs = V.validate_findings_text(edit(CPU_IDLE_FINDINGS, "tier=system", "tier=fusion"),
    { tier = "system", rel = "cpu_idle_findings.md" })
  same_list(errs, { "reasoning-candidate tier mismatch: expected tier=system, found tier=fusion rank=1" },
    "system file with a fusion block")
end

-- candidate blocks need a detail_estimate marker or the sentinel
do
  local no_estimate = edit(GEMM_FINDINGS, table.concat({
    "<!-- impact-begin kind=detail_estimate low=3.44 high=4.58 -->",
    "- Low end impact_score: 3.44",
    "- High end impact_score: 4.58",
    "<!-- impact-end -->" }, "\n"), "See above.")
  local ok, errs = level1(no_estimate)
  T.check(not ok, "candidate without detail_estimate fails")
  same_list(errs, { "gemm_findings.md: reasoning-candidate rank=compute missing kind=detail_estimate marker or "
    .. "'not quantifiable from trace data' sentinel" }, "candidate without detail_estimate (the tier after rank=, Q25)")
  ok = level1(edit(no_estimate, "See above.", "Impact estimate is Not Quantifiable From Trace Data."))
  T.check(ok, "the sentinel is matched case-insensitively")
end

-- Data tables
do
  local cand = line_of(GEMM_FINDINGS, "<!-- reasoning-candidate")
  local _, errs = level1(edit(GEMM_FINDINGS, "**Data:**\n", "**Data:** the GEMM rows\n"))
  same_list(errs, { string.format("compute-tier reasoning-candidate block at line %d: no **Data:** table found", cand) },
    "**Data:** must be alone on its line")

  local head = line_of(GEMM_FINDINGS, "| Operation")
  local swapped = "| Operation | Kernel Path | Args | Kernel Name | Time (ms) | %E2E | Count | FLOPS/Byte | Efficiency | Bound | Kernel's note |"
  _, errs = level1(edit(GEMM_FINDINGS, HEADER, swapped))
  same_list(errs, { string.format("compute Data table at line %d: header must start with the 10 canonical columns in "
    .. "order ['Operation', 'Args', 'Kernel Path', 'Kernel Name', 'Time (ms)', '%%E2E', 'Count', 'FLOPS/Byte', "
    .. "'Efficiency', 'Bound']; got ['Operation', 'Kernel Path', 'Args', 'Kernel Name', 'Time (ms)', '%%E2E', 'Count', "
    .. "'FLOPS/Byte', 'Efficiency', 'Bound', \"Kernel's note\"] (sub_agent_spec.md § Operations Table Schema)", head) },
    "header order (Python list reprs; rows not checked)")

  local ok
  ok, errs = level1(edit(GEMM_FINDINGS, HEADER, HEADER .. " Extra |"))
  T.check(ok, "extra columns after the 10 are allowed")

  local mm, addmm = line_of(GEMM_FINDINGS, "| aten::mm"), line_of(GEMM_FINDINGS, "| aten::addmm")
  _, errs = level1(edit(GEMM_FINDINGS, ARGS_MM, "(256, 512) bf16"))
  same_list(errs, { string.format("Args cell on line %d does not match operations[].args in gemm_metrics.json "
    .. "(paste verbatim, keep <br>): (256, 512) bf16", mm) }, "Args cell")
  _, errs = level1(edit(GEMM_FINDINGS, "| aten::addmm |  |", "| aten::addmm | — |"))
  same_list(errs, { string.format("Args cell on line %d does not match operations[].args in gemm_metrics.json "
    .. "(paste verbatim, keep <br>): —", addmm) }, "an Args cell of — fails (gotcha 3)")
  _, errs = level1(edit(GEMM_FINDINGS, "| hipBLASLt |", "| `hipBLASLt` |"))
  same_list(errs, { string.format("Kernel Path cell on line %d does not match operations[].launcher_path in "
    .. "gemm_metrics.json (paste verbatim): `hipBLASLt`", addmm) }, "Kernel Path cell")
  _, errs = level1(edit(GEMM_FINDINGS, "| Cijk_Alik |", "| Cijk_Alik_Bljk |"))
  same_list(errs, { string.format("Kernel Name cell on line %d does not match operations[].kernel_name_trunc in "
    .. "gemm_metrics.json (paste verbatim): Cijk_Alik_Bljk", mm) }, "Kernel Name cell")
  ok = level1(edit(GEMM_FINDINGS, ARGS_MM, "anything"), { metrics = false })
  T.check(ok, "cell checks are skipped without metrics")
  local no_names = require("tracelens.json").decode(
    [[{"operations": [{"args": "(256,512) bf16<br>(512,128) bf16", "launcher_path": "", "kernel_name_trunc": ""}]}]])
  ok, errs = level1(edit(GEMM_FINDINGS, "| Cijk_Alik |", "| whatever |"), { metrics = no_names })
  T.check(ok, "Kernel Path / Kernel Name checks skipped when the metrics have no such strings")

  local comparative_header = "| Operation | Args (T1) | Kernel Path | Kernel Name | Trace 1 Time (ms) | Trace 2 Time (ms) "
    .. "| Count (T1/T2) | Difference (ms) | FLOPS/Byte (T1) | Bound (T1) |"
  local comparative = edit(GEMM_FINDINGS, HEADER, comparative_header)
  ok = level1(comparative, { scope = "comparative" })
  T.check(ok, "comparative header in comparative scope")
  _, errs = level1(edit(comparative, ARGS_MM, "(1,) f32"), { scope = "comparative" })
  same_list(errs, { string.format("Args cell on line %d does not match operations[].args in gemm_metrics.json "
    .. "(paste verbatim, keep <br>): (1,) f32", mm) }, "comparative Args (T1) cell")
  _, errs = level1(GEMM_FINDINGS, { scope = "comparative" })
  same_list(errs, { string.format("compute Data table at line %d: header must start with the 10 canonical columns in "
    .. "order ['Operation', 'Args (T1)', 'Kernel Path', 'Kernel Name', 'Trace 1 Time (ms)', 'Trace 2 Time (ms)', "
    .. "'Count (T1/T2)', 'Difference (ms)', 'FLOPS/Byte (T1)', 'Bound (T1)']; got ['Operation', 'Args', 'Kernel Path', "
    .. "'Kernel Name', 'Time (ms)', '%%E2E', 'Count', 'FLOPS/Byte', 'Efficiency', 'Bound'] "
    .. "(sub_agent_spec.md § Operations Table Schema)", head) }, "standalone header in comparative scope")
end

-- [FIX, Q4]: a missing scope comes from the manifest at Level 1 too
do
  local out = make_out(tmp, "comparative_manifest")
  write(out .. "/category_data/category_manifest.json", MANIFEST:gsub('"standalone"', '"comparative"'))
  local path = out .. "/category_findings/gemm_findings.md"
  local ok, errs = V.validate_findings_file(path, "compute")
  T.check(not ok and #errs == 1 and errs[1]:find("'Args (T1)'", 1, true) ~= nil,
    "Level 1 without a scope uses the manifest's comparative scope")
  ok = V.validate_findings_file(path, "compute", "standalone")
  T.check(ok, "an explicit scope wins over the manifest")
  T.eq(V.resolve_scope(out), "comparative", "resolve_scope from the manifest")
  T.eq(V.resolve_scope(tmp .. "/nowhere"), "standalone", "resolve_scope default")
end

-- Markers ------------------------------------------------------------------------

do
  local M = V.markers
  local function scan(s) return (M.scan(s, "x.md")) end
  same_list(scan("<!-- impact-begin kind=p_item low=1 mid=2 high=3 -->"),
    { "x.md: marker pairing mismatch (1 begin vs 0 end)" }, "pairing")
  same_list(scan("<!-- impact-begin  low=1 high=2 -->\n<!-- impact-end -->"),
    { "x.md: impact-begin missing kind= attribute: low=1 high=2" }, "missing kind")
  same_list(scan("<!-- impact-begin kind=top_rows -->\n<!--impact-end-->"), { "x.md: unknown kind=top_rows" }, "unknown kind")
  same_list(scan("<!-- impact-begin kind=p_item low=1 -->\n<!-- impact-end -->"),
    { "x.md: kind=p_item missing required attr mid", "x.md: kind=p_item missing required attr high" }, "p_item attrs")
  same_list(scan("<!-- impact-begin kind=detail_estimate low=1 -->\n<!-- impact-end -->"),
    { "x.md: kind=detail_estimate missing required attr high" }, "detail_estimate attrs")
  same_list(scan("<!-- impact-begin kind=p_item low=null mid=1.5 high=2 -->\n<!-- impact-end -->"),
    { "x.md: kind=p_item mixes null and numeric values in low/mid/high" }, "null and numbers")
  same_list(scan("<!-- impact-begin kind=detail_estimate low=null high=null -->\n<!-- impact-end -->"), {}, "all null")
  local errs, seen = M.scan("<!--impact-begin\n  kind=top_ops\n-->\n| a |\n<!-- impact-end -->", "x.md")
  T.check(#errs == 0 and seen.top_ops, "a marker may span lines")
  same_list(M.check_findings_text("### P1: a\n### P2: b\n<!-- impact-begin kind=p_item low=null mid=null high=null -->\n"
    .. "<!-- impact-end -->\n", "s.md", "system_findings"), { "s.md: 2 ### P<N>: headings but 1 kind=p_item markers" },
    "headings vs p_item markers")
  same_list(M.check_findings_text("## Recommendations\n", "s.md", "system_findings"),
    { "s.md: missing required kind=p_item" }, "system files always need a p_item")
  same_list(M.check_findings_text("## Recommendations\n", "c.md", "category_findings", true), {},
    "compute files may skip the p_item when relaxed")
  same_list(M.check_report(good .. "/analysis.md"), {}, "check_report on the good report")
end

-- Level 2 ------------------------------------------------------------------------

do
  local r = V.validate_subagent_outputs(good)
  for _, name in ipairs({ "time_check", "coverage_check", "priority_check" }) do
    T.eq(r[name].status, "PASS", "level 2 " .. name)
    same_list(r[name].messages, {}, "level 2 " .. name .. " messages")
  end
  T.eq(V.format_summary(r), table.concat({
    string.rep("=", 60), "VALIDATION SUMMARY", string.rep("=", 60),
    "  time_check: PASS", "  coverage_check: PASS", "  priority_check: PASS", string.rep("=", 60), "" }, "\n"),
    "summary printout")

  local out = make_out(tmp, "level2")
  write(out .. "/category_data/category_manifest.json", MANIFEST:gsub('"gpu_kernel_time_ms": 2.0', '"gpu_kernel_time_ms": 1.0'))
  os.remove(out .. "/category_findings/gemm_findings.md")
  os.remove(out .. "/category_findings/elementwise_findings.md")
  write(out .. "/system_findings/multi_kernel_findings.md", "# Multi-Kernel\nStatus: ERROR\n")
  os.remove(out .. "/system_findings/cpu_idle_findings.md")
  write(out .. "/priority_data.json", [[{
    "findings": [
      {"category": "gemm", "global_rank": 1, "impact_score": 3},
      {"category": "gemm", "global_rank": 2, "impact_score": null},
      {"category": "gemm", "global_rank": 4, "impact_score": 4.5, "estimate_method": "heuristic"}
    ],
    "priorities": [
      {"rank": 2, "category": "gemm", "source": "findings_rollup", "impact_score": 3.5},
      {"rank": 2, "category": "sdpa_fwd", "source": "manifest_fallback", "impact_score": 9.0}
    ]
  }]])
  r = V.validate_subagent_outputs(out)
  T.eq(r.time_check.status, "WARN", "time check warns")
  same_list(r.time_check.messages, { "Category sum (4.0ms) vs Computation time (5.0ms) = 20.0% difference" }, "time check")
  T.eq(r.coverage_check.status, "WARN", "coverage warns")
  same_list(r.coverage_check.messages, { "Missing system findings: cpu_idle",
    "Missing compute findings: gemm, elementwise" }, "coverage in manifest order; an ERROR file counts as present")
  T.eq(r.priority_check.status, "WARN", "priority warns")
  same_list(r.priority_check.messages, {
    "INV1: findings[] not sorted desc by impact_score at index 0->2 (3 < 4.5)",
    "INV2: findings[2].global_rank=4 expected 3",
    "INV3: priorities[0].rank=2 expected 1",
    "INV7': priorities[category=gemm].impact_score=3.5000 != sum(findings[].impact_score)=3.0000",
  }, "priority invariants")
  T.eq(V.format_summary(r), table.concat({
    string.rep("=", 60), "VALIDATION SUMMARY", string.rep("=", 60),
    "  time_check: WARN", "    Category sum (4.0ms) vs Computation time (5.0ms) = 20.0% difference",
    "  coverage_check: WARN", "    Missing system findings: cpu_idle", "    Missing compute findings: gemm, elementwise",
    "  priority_check: WARN",
    "    INV1: findings[] not sorted desc by impact_score at index 0->2 (3 < 4.5)",
    "    INV2: findings[2].global_rank=4 expected 3",
    "    INV3: priorities[0].rank=2 expected 1",
    "    INV7': priorities[category=gemm].impact_score=3.5000 != sum(findings[].impact_score)=3.0000",
    string.rep("=", 60), "" }, "\n"), "summary printout with warnings")

  local p = V.priority_invariants(require("tracelens.json").decode([[{"findings": [{"category": "gemm",
    "impact_score": 4.01}], "priorities": [{"rank": 1, "category": "gemm", "source": "findings_rollup",
    "impact_score": 4.02}]}]]))
  same_list(p.messages, { "INV2: findings[0].global_rank=None expected 1" }, "missing rank prints None; 0.02 tolerance")

  write(out .. "/category_data/category_manifest.json", [[{"gpu_utilization": {"total_time_ms": 10.0}, "categories": []}]])
  os.remove(out .. "/priority_data.json")
  r = V.validate_subagent_outputs(out)
  same_list(r.time_check.messages, { "No computation time in manifest" }, "no computation time")
  same_list(r.priority_check.messages, { "priority_data.json not found" }, "priority_data.json missing")
  write(out .. "/priority_data.json", "{not json")
  r = V.validate_subagent_outputs(out)
  T.check(#r.priority_check.messages == 1 and r.priority_check.messages[1]:find("^priority_data.json unreadable: ") ~= nil,
    "unreadable priority_data.json: " .. tostring(r.priority_check.messages[1]))
  os.remove(out .. "/category_data/category_manifest.json")
  T.check(not pcall(V.validate_subagent_outputs, out), "Level 2 raises without a manifest")
end

-- Level 3 ------------------------------------------------------------------------

local PD = require("tracelens.json").decode(PRIORITY)
local VALID_ARGS = { [ARGS_MM] = true, [""] = true }
local function level3(s, opts)
  opts = opts or {}
  return V.validate_report_text(s, { scope = opts.scope or "standalone", valid_args = opts.valid_args or VALID_ARGS,
    priority = opts.priority == nil and PD or opts.priority or nil })
end

do
  local ok, msgs = V.validate_report(good)
  T.check(ok, "good report passes")
  same_list(msgs, {}, "good report: no messages")
  T.eq(V.format_report(true, {}), "PASS: All required sections present\n", "Level 3 PASS printout")
  T.eq(V.format_report(false, { "x" }), "FAIL:\n  - x\n", "Level 3 FAIL printout")

  ok, msgs = V.validate_report(tmp .. "/nowhere")
  same_list(msgs, { "<file not found>" }, "no analysis.md")
  _, msgs = level3(string.rep("é", 99))
  same_list(msgs, { "<report is empty or too short>" }, "99 characters (198 bytes) are too short")
  _, msgs = level3("  \n" .. string.rep("x", 100) .. "\n\n")
  T.check(msgs[1] ~= "<report is empty or too short>", "100 characters are long enough")

  _, msgs = level3(edit(REPORT, "## Appendix", "## Notes"))
  same_list(msgs, { "Missing section: Appendix" }, "missing section")
  _, msgs = level3(edit(REPORT, "## Kernel Fusion Opportunities (Experimental)", "## Kernel Fusion Opportunities"))
  same_list(msgs, { "Missing section: Kernel Fusion Opportunities (Experimental)" }, "the full header is required")
end

do -- executive summary table
  local no_table = edit(REPORT, table.concat({ "| Metric | Value |", "|--------|-------|", "| Total Time | 10.0 ms |",
    "| Compute % | 50.0% |", "| Idle % | 50.0% |", "| Exposed Communication % | 0.0% |",
    "| Top Bottleneck Category | GEMM (30.0%) |" }, "\n"), "Total Time 10 ms.")
  local _, msgs = level3(no_table)
  same_list(msgs, { "No metrics table found under ## Executive Summary" }, "no metrics table")
  _, msgs = level3(edit(REPORT, "| Idle % | 50.0% |\n", ""))
  same_list(msgs, { "Missing metrics row: Idle %" }, "missing metrics row")
  _, msgs = level3(edit(edit(REPORT, "| 10.0 ms |", "| X ms |"), "| 0.0% |", "| W% |"))
  same_list(msgs, { "Placeholder value 'X ms' in Executive Summary table", "Placeholder value 'W%' in Executive Summary table" },
    "placeholder values")
end

do -- [FIX, Q3] placeholders matched literally
  local _, msgs = level3(edit(REPORT, "- **Platform**: MI300X", "- **Platform**: <platform> with <Library> and <scale>"))
  same_list(msgs, { "Unfilled placeholders: <Library>, <platform>, <scale>" }, "placeholders, sorted")
  _, msgs = level3(edit(REPORT, "- **Platform**: MI300X", "- <Brief Title> <Brief Title>"))
  same_list(msgs, { "Unfilled placeholders: <Brief Title>" }, "placeholders once each")
end

do -- Args cells over the whole report
  local row = line_of(REPORT, "| aten::mm")
  local _, msgs = level3(edit(REPORT, ARGS_MM, "(256,512) bf16 (512,128) bf16"))
  same_list(msgs, { string.format("analysis.md line %d: Args cell does not match any operations[].args in "
    .. "category_data/*_metrics.json (paste verbatim, keep <br>): (256,512) bf16 (512,128) bf16", row) }, "report Args cell")
  local extra = "\n| Op | Args (T1) | Note |\n|---|---|---|\n| a | " .. ARGS_MM .. " | x |\n| b | bad args | y |\n\nText.\n"
  local report = edit(REPORT, "- **Platform**: MI300X\n", "- **Platform**: MI300X\n" .. extra)
  _, msgs = level3(report)
  same_list(msgs, { string.format("analysis.md line %d: Args cell does not match any operations[].args in "
    .. "category_data/*_metrics.json (paste verbatim, keep <br>): bad args", line_of(report, "| b |")) }, "Args (T1) column")
  -- [KEEP, Q13]: rows are split with strip("|") only, so an indented row shifts its cells
  report = edit(REPORT, "- **Platform**: MI300X\n", "- **Platform**: MI300X\n\n| Op | Args | Note |\n|---|---|---|\n  | op1 | " .. ARGS_MM .. " | x |\n")
  _, msgs = level3(report)
  same_list(msgs, { string.format("analysis.md line %d: Args cell does not match any operations[].args in "
    .. "category_data/*_metrics.json (paste verbatim, keep <br>): op1", line_of(report, "  | op1")) }, "indented row (Q13)")
  local ok = level3(edit(REPORT, ARGS_MM, "anything"), { valid_args = {} })
  T.check(ok, "no operations[].args: the check is skipped")
end

do -- Kernel Fusion Impact lines
  local std = "**Impact**: impact_score: 2.0 (perf-model coverage 4/5 kernels)"
  local _, msgs = level3(REPORT, { scope = "comparative" })
  same_list(msgs, { "Kernel Fusion Impact format error: comparative mode should not include perf-model coverage "
    .. "parenthetical but got: impact_score: 2.0 (perf-model coverage 4/5 kernels)" }, "comparative: no coverage")
  local ok = level3(edit(REPORT, std, "**Impact**: impact_score: 2.0"), { scope = "comparative" })
  T.check(ok, "comparative Impact line")
  _, msgs = level3(edit(REPORT, std, "**Impact**: impact_score: 2.0 ms"), { scope = "comparative" })
  same_list(msgs, { "Kernel Fusion Impact format error: comparative mode requires 'impact_score: X.X' but got: "
    .. "impact_score: 2.0 ms" }, "comparative: nothing after the number")
  _, msgs = level3(edit(REPORT, std, "**Impact**: impact_score: 2.0"))
  same_list(msgs, { "Kernel Fusion Impact format error: standalone mode requires 'impact_score: X.X (perf-model "
    .. "coverage Y/Z kernels)' but got: impact_score: 2.0" }, "standalone: coverage required")
  ok = level3(edit(REPORT, std, "**Impact**:"))
  T.check(ok, "an empty Impact line is skipped")

  -- [FIX, Q4]: validate_report without a scope reads it from the manifest
  local out = make_out(tmp, "kf_scope")
  ok = V.validate_report(out)
  T.check(ok, "manifest standalone: the standalone rule")
  write(out .. "/category_data/category_manifest.json", MANIFEST:gsub('"standalone"', '"comparative"'))
  ok, msgs = V.validate_report(out)
  same_list(msgs, { "Kernel Fusion Impact format error: comparative mode should not include perf-model coverage "
    .. "parenthetical but got: impact_score: 2.0 (perf-model coverage 4/5 kernels)" }, "manifest comparative: the comparative rule")
  os.remove(out .. "/category_data/category_manifest.json")
  ok = V.validate_report(out)
  T.check(ok, "no manifest: standalone (the reference would apply the comparative rule)")
end

do -- R1-R4 against priority_data.json
  local card = "### 🟡 P2: Another (Tensile)\n\n<!-- impact-begin kind=p_item category=gemm low=1 mid=2 high=3 -->\n"
    .. "**Impact**: impact_score: 2\n<!-- impact-end -->\n\n## Kernel Fusion Opportunities (Experimental)"
  local _, msgs = level3(edit(REPORT, "## Kernel Fusion Opportunities (Experimental)", card))
  same_list(msgs, {
    "R1: Compute Kernel Optimizations has 2 P-item headings but priority_data.json has 1 findings",
    "R2: extra kind=p_item marker #2 in Compute Kernel Optimizations beyond 1 findings",
  }, "R1 and R2 extra marker")
  _, msgs = level3(edit(REPORT, "category=gemm low=3.44", "category=sdpa_fwd low=3.44"))
  same_list(msgs, { "R2: P-item marker #1 category='sdpa_fwd' != findings[0].category='gemm'" }, "R2 category")
  _, msgs = level3(edit(REPORT, "category=gemm low=3.44", "low=3.44"))
  same_list(msgs, { "R2: P-item marker #1 category=None != findings[0].category='gemm'" }, "R2 missing category")
  _, msgs = level3(edit(REPORT, "low=3.44 mid=4.01 high=4.58 -->", "low=3.5 mid=4.014 high=4.58 -->"))
  same_list(msgs, { "R3: P-item marker #1 low=3.5 != findings[0].impact_score_low=3.44" }, "R3 beyond 0.005 only")
  _, msgs = level3(edit(REPORT, "low=3.44 mid=4.01 high=4.58 -->", "low=null mid=null high=null -->"))
  same_list(msgs, { "R3: P-item marker #1 low=null != findings[0].impact_score_low=3.44",
    "R3: P-item marker #1 mid=null != findings[0].impact_score=4.01",
    "R3: P-item marker #1 high=null != findings[0].impact_score_high=4.58" }, "R3 null markers")
  local pd_null = require("tracelens.json").decode(
    [[{"findings": [{"category": "gemm", "impact_score": 4.01, "impact_score_low": 3.44, "impact_score_high": null}],
       "priorities": [{"rank": 1}]}]])
  _, msgs = level3(REPORT, { priority = pd_null })
  same_list(msgs, { "R3: P-item marker #1 high=4.58 != findings[0].impact_score_high=None" }, "R3 null source")
  local all_null = require("tracelens.json").decode([[{"findings": [{"category": "gemm", "impact_score": null,
    "impact_score_low": null}], "priorities": [{"rank": 1}]}]])
  local ok = level3(edit(REPORT, "low=3.44 mid=4.01 high=4.58 -->", "low=null mid=null high=null -->"), { priority = all_null })
  T.check(ok, "R3: null equals a null or missing source")
  _, msgs = level3(edit(REPORT, "| 1 | GEMM | 3.0 |", "| 1 | GEMM | 3.0 |\n| 2 | SDPA | 1.0 |"))
  same_list(msgs, { "R4: Top Operations table has 2 data rows but priority_data.json::priorities has 1 entries" }, "R4")
  ok = level3(edit(REPORT, "category=gemm low=3.44", "category=x low=3.44"), { priority = false })
  T.check(ok, "R1-R4 skipped without priority_data.json")
end

do -- R5 per Detailed Analysis subsection
  local extra = "#### 🔴 P2: Second GEMM block\n\nText.\n\n### Kernel Fusion Insights"
  local _, msgs = level3(edit(REPORT, "### Kernel Fusion Insights", extra))
  same_list(msgs, { "R5: Compute Kernel Insights has 2 #### P<N>: headings but 1 reasoning-candidate tier=compute markers" },
    "R5 compute")
  _, msgs = level3(edit(REPORT, "<!-- reasoning-candidate tier=fusion rank=1 -->", "<!-- reasoning-candidate tier=system rank=1 -->"))
  same_list(msgs, { "R5: Kernel Fusion Insights has 1 #### P<N>: headings but 0 reasoning-candidate tier=fusion markers" },
    "R5 fusion, tier checked")
end

do -- report markers
  local _, msgs = level3(edit(REPORT, "<!-- impact-begin kind=top_ops -->", "<!-- impact-begin kind=top_operations -->"),
    { priority = false })
  same_list(msgs, { "analysis.md: unknown kind=top_operations", "analysis.md: missing required kind=top_ops" }, "top_ops required")
  _, msgs = level3(edit(REPORT, "**Impact**: impact_score: 4.01\n<!-- impact-end -->", "**Impact**: impact_score: 4.01"))
  same_list(msgs, { "analysis.md: marker pairing mismatch (5 begin vs 4 end)" }, "report pairing")
end

-- Level 2 and 3 together, the Level 1 notes ------------------------------------

do
  local r = V.validate_dir(good)
  T.check(r.passed, "validate_dir: the good directory passes")
  local rels, statuses = {}, {}
  for i, f in ipairs(r.findings) do
    rels[i] = f.rel .. " " .. f.tier
    statuses[i] = f.passed and "pass" or (f.note and "note" or "fail")
  end
  same_list(rels, { "category_findings/elementwise_findings.md compute", "category_findings/gemm_findings.md compute",
    "system_findings/cpu_idle_findings.md system", "system_findings/kernel_fusion_findings.md fusion",
    "system_findings/multi_kernel_findings.md system" }, "findings files, sorted, with their tiers")
  same_list(statuses, { "pass", "pass", "pass", "note", "note" }, "statuses")
  -- Level 1 itself behaves as the reference on those two files
  same_list(r.findings[4].errors, { "Missing required section: ## Recommendations",
    "Missing required section: ## Detailed Analysis", "kernel_fusion_findings.md: missing required kind=p_item" },
    "no-opportunity fusion file fails Level 1")
  T.eq(#r.findings[5].errors, 6, "nothing-flagged system file fails Level 1")
  local text = V.format_dir(r)
  T.check(text:find("  NOTE  system_findings/kernel_fusion_findings.md (fusion): no kernel fusion opportunities", 1, true)
    and text:find("\nRESULT: PASS\n$") ~= nil, "format_dir:\n" .. text)

  -- the no-opportunity file with the paragraphs the fusion analyzer adds (agents/kernel_fusion.lua): still a note
  for _, extra in ipairs({ "1 candidate was set aside by the fusion rules: `LlamaDecoderLayer` (container module).",
    "2 candidates were set aside by the fusion rules: `a` and `b`.", "1 candidate was not reported: `c` (under 2.0%).",
    "3 candidates were not reported: `d`." }) do
    local o = make_out(tmp, "why_" .. #extra)
    write(o .. "/system_findings/kernel_fusion_findings.md", NO_FUSION .. "\n" .. extra .. "\n")
    local rr = V.validate_dir(o)
    T.check(rr.passed and rr.findings[4].note ~= nil, "no-opportunity file with '" .. extra:sub(1, 40) .. "': a note")
  end

  local out = make_out(tmp, "bad_dir")
  write(out .. "/system_findings/kernel_fusion_findings.md", NO_FUSION .. "\nStray text.\n")
  write(out .. "/system_findings/multi_kernel_findings.md", edit(NOTHING_FLAGGED, "## Recommendations",
    "## Recommendations\n<!-- impact-begin kind=p_item -->"))
  r = V.validate_dir(out)
  T.check(not r.passed, "other forms are failures")
  T.check(not r.findings[4].note and not r.findings[5].note, "no notes for other forms")
  T.check(V.format_dir(r):find("RESULT: FAIL (system_findings/kernel_fusion_findings.md, "
    .. "system_findings/multi_kernel_findings.md)", 1, true) ~= nil, "RESULT line names the failures")

  r = V.validate_dir(good, { levels = { [3] = true } })
  T.check(r.findings == nil and r.outputs == nil and r.report.passed, "levels select")
  T.eq(V.format_dir(r), "PASS: All required sections present\n", "one level prints as the reference")
end

-- The reference reports pass Level 3 --------------------------------------------

local cases = T.glob(shared .. "/agent_cases/standalone/*/ref/analysis.md")
if #cases == 0 then
  print("note: " .. shared .. "/agent_cases absent; reference reports not checked")
else
  for _, path in ipairs(cases) do
    local dir = tmp .. "/ref_" .. path:match("standalone/([^/]+)/")
    mkdirs(dir, ".")
    local f = assert(io.open(path, "rb"))
    write(dir .. "/analysis.md", f:read("a"))
    f:close()
    local ok, msgs = V.validate_report(dir)
    T.check(ok, "reference report passes Level 3: " .. path .. "\n  " .. table.concat(msgs, "\n  "))
  end
end

T.rmrf(tmp)
T.finish()

-- tracelens.fusion — kernel-fusion candidates and their estimates
-- (analysis-layer spec §3.6 fusion_candidates.json, §10
-- kernel_fusion_metrics.json). A facade: the public API, re-exported from
-- the modules under tracelens/fusion/ that own each part:
--
--   common       shared constants (§3.6 lists, §10 thresholds), kernel
--                eligibility / fused-kernel tests, strip_module_index,
--                parent chain and Input Dims reads, value helpers
--   lookup       the unified_perf_summary kernel lookups (name x first
--                shape, shape-aware lookup §6.8), compute_data_in_out
--   candidates   standalone extraction (§3.6 steps 3-4: walks, attention
--                narrowing, dedup, JSON objects, data enrichment)
--   dedup        dedup_by_kernel_set and its score
--   comparative  the comparative extraction (§3.6 Case A, from diff_stats)
--   confidence   is_matrix and classify_confidence (§10)
--   estimate     the standalone and comparative estimators (§10)
--   metrics      analyze: the kernel_fusion_metrics.json object (§10)
--   overlap      the GPU events each candidate claims (every instance) and
--                the resolution of estimates that share some [FIX]
--   sequences    the hint from repeated short-kernel sequences no candidate
--                covers (trace:kernel_sequences(); issue 16)
--   kernel_facts each candidate kernel's stream and launching operation,
--                for the fusion rules (they travel beside the candidates)
--
-- The walks over the trace are C (src/analysis/fusion.c): trace:fusion_modules()
-- (step 1, every tree node) and trace:fusion_siblings() (step 2, the unified
-- perf ops). Kernel types come from tracelens.classify_kernels. Perf data
-- comes from the unified_perf_summary Table (a tl Table, or a plain array of
-- row tables).
--
-- Design note (documented in docs/analysis.md): analyze() takes the arch
-- numbers in ctx (platform, peak_hbm_bw_tbs, max_achievable_tflops) instead
-- of scanning metadata/*_metadata.json as the reference does.
local common = require "tracelens.fusion.common"
local lookup = require "tracelens.fusion.lookup"
local candidates = require "tracelens.fusion.candidates"
local dedup = require "tracelens.fusion.dedup"
local comparative = require "tracelens.fusion.comparative"
local confidence = require "tracelens.fusion.confidence"
local estimate = require "tracelens.fusion.estimate"
local metrics = require "tracelens.fusion.metrics"

local M = {}

-- §10 constants (the values the modules read from tracelens.fusion.common)
M.MAX_FUSION_KERNEL_COUNT = common.MAX_FUSION_KERNEL_COUNT
M.MIN_IMPACT_SCORE = common.MIN_IMPACT_SCORE
M.OVERLAP_EFFICIENCY = common.OVERLAP_EFFICIENCY
M.MIN_SAVINGS_MS = common.MIN_SAVINGS_MS

--- strip_module_index(name): drop "nn.Module: ", then one trailing _<digits>.
M.strip_module_index = common.strip_module_index
M.is_fusion_eligible = common.is_fusion_eligible
M.has_fused_kernel = common.has_fused_kernel

--- parse_first_shape(s) (§6.8); compute_data_in_out(op_category,
--- perf_params_str, data_moved_mb) (§3.6)
M.parse_first_shape = lookup.parse_first_shape
M.compute_data_in_out = lookup.compute_data_in_out

--- dedup_by_kernel_set(cands, field) (§3.6)
M.dedup_by_kernel_set = dedup.dedup_by_kernel_set

--- candidates(trace, unified [, walks]) -> the array of category_data/fusion_candidates.json
--- (standalone extraction, §3.6). unified: the unified_perf_summary Table, nil
--- when there is none (no post-processing then). Any error gives [] (the
--- reference writes "[]"); the error text is the second result.
M.candidates = candidates.candidates
--- walks(trace): the candidates' walks over the trace, taken ahead (candidates(trace, unified, walks))
M.walks = candidates.walks

--- candidates_comparative(trace1, diff_stats) -> the comparative
--- fusion_candidates.json array (§3.6, Case A) from trace 1's tree and the
--- TraceDiff diff_stats Table; [] (and the error text) on any error.
M.candidates_comparative = comparative.candidates_comparative

M.is_matrix = confidence.is_matrix
M.classify_confidence = confidence.classify_confidence

--- estimate_standalone(c, lookup, arch, baseline) (roofline projection) and
--- estimate_comparative(c, baseline) (measured gap): nil when no estimate.
M.estimate_standalone = estimate.estimate_standalone
M.estimate_comparative = estimate.estimate_comparative

--- analyze(candidates, ctx) -> the object of kernel_fusion_metrics.json (§10).
--- candidates: the fusion_candidates array (nil: the file is missing -> ERROR);
--- ctx = {baseline_ms = gpu_utilization.total_time_ms, scope = "standalone" |
--- "comparative", platform = "MI300X", peak_hbm_bw_tbs = 5.3,
--- max_achievable_tflops = {matrix_bf16 = ..., vector_bf16 = ..., ...},
--- unified = the unified_perf_summary Table (nil -> ERROR)}.
M.analyze = metrics.analyze

--- sequence_hints(trace:kernel_sequences(), candidates, graphs) -> the lines for
--- analysis.md's fusion section (empty when no sequence qualifies).
M.sequence_hints = require("tracelens.fusion.sequences").lines
M.gpu_events_file = metrics.gpu_events_file

--- kernel_facts(trace, candidates) -> {[tostring(uid)] = {stream, op, op_parent}}
--- for the candidates' kernels (tracelens.fusion.kernel_facts).
M.kernel_facts = require("tracelens.fusion.kernel_facts").facts

return M

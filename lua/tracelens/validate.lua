-- tracelens.validate — the reference's three validation levels
-- (validation_utils.py; analysis-layer.md §12, agents-and-report.md §6.1-6.3),
-- a fourth of this project (consistency, issue 11) and `tracelens validate DIR`. Every check returns messages, never raises
-- (Level 2 raises only when the manifest cannot be read, as the reference).
--
--   Level 1  validate_findings_file(path, tier [, scope]) -> passed, errors
--   Level 2  validate_subagent_outputs(out) -> {time_check, coverage_check, priority_check}
--   Level 3  validate_report(out [, scope]) -> passed, messages
--   Level 4  validate_consistency(out) -> passed, messages (statements that
--            cannot be true: shares above their whole, interpreter values,
--            overlapping fusion candidates, an unfounded verdict)
--
-- A nil scope is resolved from <out>/category_data/category_manifest.json's
-- comparison_scope, default "standalone", at every level [FIX, Q4]. The
-- *_text variants take the text (and the decoded JSON) instead of paths.
-- docs/validate.md describes the checks and the deviations.
local consistency = require "tracelens.validate.consistency"
local dir = require "tracelens.validate.dir"
local findings = require "tracelens.validate.findings"
local markers = require "tracelens.validate.markers"
local outdir = require "tracelens.validate.outdir"
local outputs = require "tracelens.validate.outputs"
local report = require "tracelens.validate.report"
local text = require "tracelens.validate.text"

local M = {}

M.validate_findings_file = findings.validate_file
M.validate_findings_text = findings.validate_text
M.validate_subagent_outputs = outputs.validate
M.priority_invariants = outputs.priority_invariants
M.validate_report = report.validate
M.validate_report_text = report.validate_text
M.validate_consistency = consistency.validate
M.consistency_text = consistency.check_text
M.consistency_fusion = consistency.check_fusion
M.validate_dir = dir.validate
M.resolve_scope = outdir.resolve_scope

-- MarkerValidator: scan(text, rel) -> errors, seen_kinds;
-- check_findings_file(path, file_class [, skip_p_item_required]) -> errors;
-- check_report(path) -> errors; and their *_text forms.
M.markers = markers

--- Level 1's printout: "PASS: Findings file is valid" or "FAIL:" and the errors.
function M.format_findings(passed, errors) return text.pass_fail("Findings file is valid", passed, errors) end

--- Level 2's printout: the VALIDATION SUMMARY block.
M.format_summary = outputs.format
--- Level 3's printout (the orchestrator's Step 11.1).
M.format_report = report.format
--- Level 4's printout.
M.format_consistency = consistency.format
--- `tracelens validate DIR`'s printout of validate_dir's result.
M.format_dir = dir.format

return M

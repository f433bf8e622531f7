-- tracelens.validate.rules — the patterns and constants the three validation
-- levels share (analysis-layer.md §12.1), and the regex helpers they use.
local tl = require "tracelens"

local re = tl.re
local M = {}

-- A P-item card heading: "### P<N>:" with an optional icon or prefix.
M.P_ITEM = re.compile([[^### .*?P(\d+)\s*:]], "m")
-- A Detailed Analysis block marker; captures tier and rank.
M.CANDIDATE = re.compile([[<!-- reasoning-candidate\s+tier=(\w+)\s+rank=(\d+)\s*-->]])
-- A Detailed Analysis heading "#### ... P<N>:".
M.DA_HEADING = re.compile([[^####\s+.*?P(\d+)\s*:]], "m")
M.NOT_QUANTIFIABLE = re.compile("not quantifiable from trace data", "i")
-- A table header line with an Args or Args (T1) column.
M.TABLE_HEADER = re.compile([[^\|.*\|\s*Args(?: \(T1\))?\s*\|.*\|\s*$]], "m")

-- The first 10 columns of a compute Data table, per comparison scope.
M.DATA_COLUMNS = {
  standalone = { "Operation", "Args", "Kernel Path", "Kernel Name", "Time (ms)", "%E2E", "Count",
    "FLOPS/Byte", "Efficiency", "Bound" },
  comparative = { "Operation", "Args (T1)", "Kernel Path", "Kernel Name", "Trace 1 Time (ms)",
    "Trace 2 Time (ms)", "Count (T1/T2)", "Difference (ms)", "FLOPS/Byte (T1)", "Bound (T1)" },
}
-- Fixed cell positions (1-based) of a Data table row.
M.ARGS_CELL, M.KERNEL_PATH_CELL, M.KERNEL_NAME_CELL = 2, 3, 4

M.TIME_DISCREPANCY_THRESHOLD = 10 -- percent
M.ROLLUP_IMPACT_TOL = 0.02
M.MARKER_NUMERIC_TOL = 0.005

-- Kernel Fusion **Impact** line formats.
M.KF_IMPACT_STANDALONE = re.compile([[impact_score:\s*[\d.]+\s*\(perf-model coverage \d+/\d+ kernels\)]])
M.KF_IMPACT_COMPARATIVE = re.compile([[impact_score:\s*[\d.]+\s*$]])
M.KF_COVERAGE = re.compile([[\(perf-model coverage]])

M.FINDINGS_HEADERS = { "## Recommendations", "## Detailed Analysis" }
M.CARD_LABELS = { "**Insight**", "**Action**", "**Impact**" }

M.REPORT_HEADERS = { "Executive Summary", "Compute Kernel Optimizations",
  "Kernel Fusion Opportunities (Experimental)", "System-Level Optimizations", "Detailed Analysis", "Appendix" }
M.METRICS_ROWS = { "Total Time", "Compute %", "Idle %", "Exposed Communication %", "Top Bottleneck Category" }
M.METRICS_PLACEHOLDERS = { "X ms", "Y%", "Z%", "W%" }
-- The template placeholders, in Python's sorted() order; matched literally
-- [FIX, Q3] (the reference's regex can only ever find <Library>).
M.REPORT_PLACEHOLDERS = { "<Brief Title>", "<Library>", "<architecture>", "<model>", "<platform>",
  "<precision>", "<scale>" }

-- Detailed Analysis subsections of the report and the tier of their blocks.
M.DA_SUBSECTIONS = {
  { tier = "compute", header = "### Compute Kernel Insights" },
  { tier = "fusion", header = "### Kernel Fusion Insights" },
  { tier = "system", header = "### System-Level Insights" },
}

-- Impact markers.
M.BEGIN = re.compile([[<!--\s*impact-begin\s+([^>]*?)-->]], "s")
M.END = re.compile([[<!--\s*impact-end\s*-->]])
M.KIND_ATTR = re.compile([[\bkind=(\w+)\b]])
M.ATTR = re.compile([[\b(\w+)=([^\s]+)]])
M.KNOWN_KINDS = { p_item = true, detail_estimate = true, top_ops = true }
M.REQUIRED_ATTRS = { p_item = { "low", "mid", "high" }, detail_estimate = { "low", "high" } }
M.TOP_OPS_BLOCK = re.compile([[<!--\s*impact-begin[^>]*?\bkind=top_ops\b[^>]*?-->(.*?)<!--\s*impact-end\s*-->]], "s")
M.TABLE_SEPARATOR = re.compile([[^\s*\|[\s\-:|]+\|\s*$]])

M.H3_LINE = re.compile("^### ", "m")
M.H2_LINE = re.compile("^## ", "m")

--- Every non-overlapping match of rx in s, as Python's finditer: an array of
--- {first = start, last = end (1-based, inclusive), captures...}.
function M.matches(rx, s)
  local out, init = {}, 1
  while init <= #s + 1 do
    local m = table.pack(rx:search(s, init))
    if m[1] == nil then break end
    out[#out + 1] = { first = m[1], last = m[2], table.unpack(m, 3, m.n) }
    init = m[2] >= m[1] and m[2] + 1 or m[1] + 1
  end
  return out
end

--- The number of matches of rx in s (len(rx.findall(s))).
function M.count(rx, s) return #M.matches(rx, s) end

return M

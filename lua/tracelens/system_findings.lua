-- tracelens.system_findings — the pieces of a system-tier findings file
-- (agents-and-report.md §2.2, §2.3, §3.1, §3.2): the P-item card with null
-- impact markers, the Detailed Analysis candidate block with its
-- `| Metric | Value | Flagged |` table, the number formats, and the card
-- titles the report uses to recognise a mechanism (docs/analyzers.md,
-- "System analyzers and the report").
--
-- A card is a plain table:
--   {title=, insight=, action=, identification=, rows = {{metric, value, flagged}},
--    reasoning=, resolution=}
local json = require "tracelens.json"
local py = require "tracelens.py"

local M = {}

M.NOTE = "> **Note:** System-level analysis is exploratory. The patterns and recommendations below are under "
  .. "active development and may be refined as system-level analysis matures."

M.NOT_QUANTIFIABLE = "Impact estimate is not quantifiable from trace data."

-- Card titles, one per mechanism. The report merges cards by these titles.
M.TITLE = {
  launch_overhead = "GPU idle between kernel launches",
  sync_drain = "GPU idle after host synchronizations",
  host_pipeline = "GPU idle gaps in the host pipeline",
  queued_wait = "GPU idle while launched work waits to start",
  host_sync = "Host-side synchronization stalls the GPU pipeline",
  host_sync_queued = "The host synchronizes on launched work that waits to start",
  host_time = "Host time inside operations far exceeds their kernel time",
  comm_blocking = "Exposed communication blocks compute",
  comm_overlap = "Low compute/communication overlap",
  d2h_memcpy = "Frequent or long device-to-host copies",
  h2d_memcpy = "Frequent or long host-to-device copies",
}

-- The share of the GPU's idle time (all streams, the idle_breakdown sheet's
-- `all` row) with launched work waiting to start from which the host is not
-- blamed for the idle time (agents/cpu_idle.lua, tracelens.gpu_feed).
M.QUEUED_IDLE_SHARE = 0.5

local present = json.present
M.present = present

--- A number from the metrics, or 0 when absent.
function M.value(v)
  if type(v) == "number" then return v end
  return 0
end

--- Milliseconds as Python prints round(x, 3): `3.105 ms`.
function M.ms(x) return json.number_text(py.round(M.value(x) + 0.0, 3)) .. " ms" end

--- A percentage as Python prints round(x, 2): `88.82%`.
function M.pct(x) return json.number_text(py.round(M.value(x) + 0.0, 2)) .. "%" end

--- `3.105 ms (88.82%)`.
function M.ms_pct(ms, pct) return M.ms(ms) .. " (" .. M.pct(pct) .. ")" end

--- A count as an integer.
function M.count(x) return string.format("%d", math.tointeger(M.value(x)) or math.floor(M.value(x))) end

--- "a", "a and b", "a, b and c".
function M.list(names)
  if #names <= 1 then return names[1] or "" end
  return table.concat(names, ", ", 1, #names - 1) .. " and " .. names[#names]
end

local function flag_text(f) return f and "true" or "false" end
M.flag_text = flag_text

--- The `| Metric | Value | Flagged |` table.
function M.metric_table(rows)
  local lines = { "| Metric | Value | Flagged |", "|--------|-------|---------|" }
  for _, r in ipairs(rows) do
    lines[#lines + 1] = "| " .. r[1] .. " | " .. r[2] .. " | " .. flag_text(r[3]) .. " |"
  end
  return table.concat(lines, "\n")
end

--- The P-item card (`### P<n>: <title>`), impact not quantifiable.
function M.card(n, c)
  return table.concat({
    "### P" .. n .. ": " .. c.title, "",
    "**Insight**: " .. c.insight, "",
    "**Action**: " .. c.action, "",
    "<!-- impact-begin kind=p_item low=null mid=null high=null -->",
    "**Impact**: Not quantifiable from trace data",
    "<!-- impact-end -->",
  }, "\n")
end

--- The Detailed Analysis candidate block of card n (tier=system).
function M.block(n, c)
  return table.concat({
    "<!-- reasoning-candidate tier=system rank=" .. n .. " -->",
    "#### " .. c.title,
    "**Identification:** " .. c.identification, "",
    "**Data:**", "",
    M.metric_table(c.rows), "",
    "**Reasoning for Slowdown:** " .. c.reasoning, "",
    "**Resolution:** " .. c.resolution, "",
    "**Impact estimate:** " .. M.NOT_QUANTIFIABLE,
  }, "\n")
end

--- `## Recommendations` and `## Detailed Analysis` for the cards, in order;
--- `none` is the sentence written when there are no cards.
function M.sections(cards, none)
  local out = { "## Recommendations", "" }
  if #cards == 0 then
    out[#out + 1] = none
    out[#out + 1] = ""
  end
  for i, c in ipairs(cards) do
    out[#out + 1] = M.card(i, c)
    out[#out + 1] = ""
  end
  out[#out + 1] = "## Detailed Analysis"
  out[#out + 1] = ""
  for i, c in ipairs(cards) do
    out[#out + 1] = M.block(i, c)
    out[#out + 1] = ""
  end
  return out
end

--- Decodes a JSON text argument; nil (and the error) when absent or malformed.
function M.decode(text)
  if type(text) ~= "string" or text == "" then return nil, "missing" end
  local ok, v = pcall(json.decode, text)
  if not ok then return nil, tostring(v) end
  return v
end

--- The manifest category entries of a tier ("system" / "compute_kernel").
function M.categories(manifest, tier)
  local out = {}
  for _, c in ipairs((manifest or {}).categories or {}) do
    if c.tier == tier then out[#out + 1] = c end
  end
  return out
end

return M

-- tracelens.plot — the performance plot of the analysis report
-- (analysis-layer spec §13, utils/plot_utils.py).
--
-- Owns: perf_improvement.png (one horizontal stacked bar: compute-kernel
-- categories by descending GPU time, then the grey "Non-computing" rest),
-- its base64 sidecar perf_improvement_base64.txt, and the embedding of that
-- image into the report in place of {{PERF_PLOT}}. The manifest is taken as a
-- decoded Lua table (cjson or tracelens.json), so nothing here parses JSON.
-- Runs in the main state: it reads and writes files with io (text files are
-- written to a temporary name and renamed into place).
local tl = require "tracelens"

local M = {}

local PALETTE = { "#e74c3c", "#e67e22", "#f1c40f", "#2ecc71", "#9b59b6", "#1abc9c", "#e84393", "#3498db" }
local REST_COLOR = "#aab7c4"
local BASE64_FILE = "perf_improvement_base64.txt"
local IMAGE_PATTERN = "!%[Performance Improvement%]%(data:image/png;base64,[A-Za-z0-9+/=]+%)"

-- os.path.join(dir, name) for a relative name
local function join(dir, name)
  if dir == "" or dir:sub(-1) == "/" then return dir .. name end
  return dir .. "/" .. name
end

local read_file = tl.fs.read_file

local write_file = tl.fs.write_file -- whole or nothing

-- Every occurrence of `old` (plain text) in s replaced by `new`.
local function replace_all(s, old, new)
  if old == "" then return s end
  local out, pos = {}, 1
  while true do
    local i, j = s:find(old, pos, true)
    if not i then break end
    out[#out + 1] = s:sub(pos, i - 1)
    out[#out + 1] = new
    pos = j + 1
  end
  out[#out + 1] = s:sub(pos)
  return table.concat(out)
end

local function display_name(name)
  return name:sub(1, 1):upper() .. name:sub(2)
end

--- The bar's segments from the manifest: compute_kernel categories with
--- gpu_kernel_time_ms > 0 by descending time (stable), then the rest of
--- total_time_ms when positive. Returns segments, baseline; or nil and the
--- message of the reference when there is nothing to plot.
function M.segments(manifest)
  local util = manifest.gpu_utilization
  local baseline = type(util) == "table" and tonumber(util.total_time_ms) or nil
  if not baseline or not (baseline > 0) then return nil, "Invalid baseline_ms in manifest - skipping plot" end
  baseline = baseline + 0.0

  local picked = {}
  for _, cat in ipairs(manifest.categories or {}) do
    local t = cat.gpu_kernel_time_ms
    if cat.tier == "compute_kernel" and type(t) == "number" and t > 0 then
      picked[#picked + 1] = { name = tostring(cat.name), time = t + 0.0, order = #picked }
    end
  end
  table.sort(picked, function(a, b)
    if a.time ~= b.time then return a.time > b.time end
    return a.order < b.order
  end)

  local segments, sum = {}, 0.0
  local function add(display, time, color)
    segments[#segments + 1] = {
      label = string.format("%s — %.1f ms (%.1f%%)", display, time, time / baseline * 100),
      value = time,
      color = color,
    }
  end
  for i, p in ipairs(picked) do
    add(display_name(p.name), p.time, PALETTE[(i - 1) % #PALETTE + 1])
    sum = sum + p.time
  end
  local rest = math.max(0.0, baseline - sum)
  if rest > 0 then add("Non-computing", rest, REST_COLOR) end
  if #segments == 0 then return nil, "No compute-kernel segments to plot - skipping plot" end
  return segments, baseline
end

--- §13.1: writes out_dir/<output_filename> (default perf_improvement.png)
--- and, unless opts.write_base64 == false, out_dir/perf_improvement_base64.txt.
--- manifest: the decoded category_manifest.json (nil when there is none).
--- Returns true, or false and the message it printed.
function M.generate_perf_plot(out_dir, title, manifest, opts)
  opts = opts or {}
  local function skip(msg)
    print(msg)
    return false, msg
  end
  if manifest == nil then return skip("category_manifest.json not found - skipping plot") end
  local segments, baseline = M.segments(manifest)
  if not segments then return skip(baseline) end

  local png = join(out_dir, opts.output_filename or "perf_improvement.png")
  tl.chart.stacked_bar(png, {
    title = title,
    xlabel = "GPU time (ms)",
    xmax = baseline,
    segments = segments,
    legend_cols = math.min(#segments, 4),
    width_in = 12,
    height_in = 3,
    dpi = 150,
  })
  if opts.write_base64 ~= false then
    local bytes = assert(read_file(png), png .. ": cannot read the plot back")
    write_file(join(out_dir, BASE64_FILE), tl.base64(bytes))
  end
  return true
end

--- §13.2: replaces every `placeholder` (default "{{PERF_PLOT}}") in
--- out_dir/<report_filename> (default analysis.md) with the image tag made
--- from perf_improvement_base64.txt, or with nothing when that file is
--- missing; with an image, the first image tag already in the report is
--- refreshed too. The report is always rewritten (Python text mode: CRLF
--- and CR line ends become LF). Returns whether an image was embedded, or
--- false and the message it printed when there is no report.
function M.embed_plot_in_report(out_dir, report_filename, placeholder)
  local path = join(out_dir, report_filename or "analysis.md")
  local content = read_file(path)
  if not content then
    local msg = "Report file not found at " .. path .. " - skipping embed"
    print(msg)
    return false, msg
  end
  content = content:gsub("\r\n?", "\n")

  local b64 = read_file(join(out_dir, BASE64_FILE))
  local tag, embedded = "", false
  if b64 then
    tag = "![Performance Improvement](data:image/png;base64," .. b64:match("^%s*(.-)%s*$") .. ")"
    embedded = true
  end
  content = replace_all(content, placeholder or "{{PERF_PLOT}}", tag)
  if embedded then
    content = content:gsub(IMAGE_PATTERN, function() return tag end, 1)
  end
  write_file(path, content)
  return embedded
end

--- §13.3: generate_priority_data(out_dir) (passed in: it lives with the
--- priority code; any error makes plot_data false), then the plot, then the
--- embedding when the plot was made.
function M.generate_and_embed_plot(out_dir, title, manifest, generate_priority_data)
  local results = { plot_data = pcall(generate_priority_data, out_dir) }
  results.plot = M.generate_perf_plot(out_dir, title, manifest)
  results.embed = results.plot and M.embed_plot_in_report(out_dir) or false
  return results
end

return M

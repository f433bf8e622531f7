-- tracelens.plot — the performance plot of the analysis report
-- (analysis-layer spec §13, utils/plot_utils.py).
--
-- Owns: perf_improvement.png (one horizontal stacked bar: compute-kernel
-- categories by descending GPU time, then the grey "Non-computing" rest; a
-- comparative analysis gets two, trace 1 above trace 2 on one axis), its
-- base64 sidecar perf_improvement_base64.txt, the embedding of that image
-- into the report in place of {{PERF_PLOT}}, and the colour of each category
-- (fixed by its name, so a category looks the same in every report, and no
-- two categories of one chart share one). The manifest is taken as a
-- decoded Lua table (cjson or tracelens.json), so nothing here parses JSON.
-- Runs in the main state: it reads and writes files with io (text files are
-- written to a temporary name and renamed into place).
local tl = require "tracelens"
local py = require "tracelens.py"

local M = {}

-- The reference's palette (§13.1) first, its colours given to the
-- categories in the order the bert golden run plots them, then more.
local COLORS = {
  "#e74c3c", "#e67e22", "#f1c40f", "#2ecc71", "#9b59b6", "#1abc9c", "#e84393", "#3498db",
  "#8c564b", "#34495e", "#bcbd22", "#1f3a93", "#6c5ce7", "#6ab04c", "#f8a5c2", "#e056fd",
  "#ffbe76", "#7ed6df", "#badc58", "#ff7979",
}
-- the categories the perf report makes (enhanced names) -> index in COLORS
local CATEGORY_COLOR = {
  gemm = 1, sdpa_fwd = 2, elementwise = 3, norm_fwd = 4, other = 5, reduce = 6, sdpa_bwd = 7, norm_bwd = 8,
  conv_fwd = 9, triton = 10, conv_bwd = 11, moe_fused = 12, moe_unfused = 13, groupedgemm_fwd = 14,
  groupedgemm_bwd = 15, inferenceattention = 16, moe_aux = 17,
}
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

-- FNV-1a (32 bits) of s
local function hash(s)
  local h = 2166136261
  for i = 1, #s do h = ((h ~ s:byte(i)) * 16777619) & 0xffffffff end
  return h
end

-- "#rrggbb" of hue h (0..1) at saturation 0.6, value 0.85
local function hsv_hex(h)
  local i, f = math.floor(h * 6) % 6, h * 6 - math.floor(h * 6)
  local v, p = 0.85, 0.85 * 0.4
  local q, t = 0.85 * (1 - 0.6 * f), 0.85 * (1 - 0.6 * (1 - f))
  local rgb = ({ { v, t, p }, { q, v, p }, { p, v, t }, { p, q, v }, { t, p, v }, { v, p, q } })[i + 1]
  return string.format("#%02x%02x%02x", math.floor(rgb[1] * 255 + 0.5), math.floor(rgb[2] * 255 + 0.5),
    math.floor(rgb[3] * 255 + 0.5))
end

--- Colours for the categories of one chart: {name = "#rrggbb"}. A category
--- the perf report makes has its own colour; any other name takes the
--- colour its hash points at, or the next one no category of this chart has
--- (names in sorted order, so the result depends on the set only), and past
--- the table's end a generated one. No two names get the same colour, and
--- none gets the grey of the rest.
function M.category_colors(names)
  local out, used, others = {}, { [REST_COLOR] = true }, {}
  for _, name in ipairs(names) do
    local k = CATEGORY_COLOR[name]
    if k then
      out[name] = COLORS[k]
      used[COLORS[k]] = true
    elseif not out[name] then
      others[#others + 1] = name
      out[name] = false
    end
  end
  table.sort(others)
  for _, name in ipairs(others) do
    local h, color = hash(name), nil
    for step = 0, #COLORS - 1 do
      local c = COLORS[(h + step) % #COLORS + 1]
      if not used[c] then
        color = c
        break
      end
    end
    local step = 0
    while not color or used[color] do -- every colour of the table is taken
      color = hsv_hex(((h % 1000) / 1000 + step * 0.618033988749895) % 1)
      step = step + 1
    end
    out[name] = color
    used[color] = true
  end
  return out
end

-- Trace 1's plotted categories: compute_kernel entries with
-- gpu_kernel_time_ms > 0, as {name, display (the report's display_name),
-- time}, by descending time (stable).
local function trace1_categories(manifest)
  local picked = {}
  for _, cat in ipairs(manifest.categories or {}) do
    local t = cat.gpu_kernel_time_ms
    if cat.tier == "compute_kernel" and type(t) == "number" and t > 0 then
      local name = tostring(cat.name)
      local display = type(cat.display_name) == "string" and cat.display_name or name
      picked[#picked + 1] = { name = name, display = display, time = t + 0.0, order = #picked }
    end
  end
  return picked
end

-- Trace 2's categories (trace2_ops_summary_by_category) as the report shows
-- them: under trace 1's display name for a category both have, else
-- trace2_names[name] (trace 2's own), else the record's; times rounded to 3
-- decimals as trace 1's gpu_kernel_time_ms are; those with time > 0.
local function trace2_categories(manifest, trace2_names)
  local display1 = {}
  for _, c in ipairs(manifest.categories or {}) do
    if type(c.display_name) == "string" then display1[tostring(c.name)] = c.display_name end
  end
  local picked = {}
  for _, r in ipairs(manifest.trace2_ops_summary_by_category or {}) do
    local raw = tostring(r["op category"])
    local name = raw:gsub("[ /]", "_"):lower()
    local t = tonumber(r.total_direct_kernel_time_ms)
    t = t and py.round(t + 0.0, 3)
    if t and t > 0 then
      picked[#picked + 1] = { name = name, display = display1[name] or (trace2_names or {})[name] or raw, time = t,
        order = #picked }
    end
  end
  return picked
end

local function by_time(list)
  table.sort(list, function(a, b)
    if a.time ~= b.time then return a.time > b.time end
    return a.order < b.order
  end)
  return list
end

local function share_text(time, baseline)
  return string.format("%.1f ms (%.1f%%)", time, time / baseline * 100)
end

-- One bar: the categories (sorted), then the rest of baseline when positive.
local function bar_segments(cats, baseline, colors)
  local segments, sum = {}, 0.0
  for _, c in ipairs(cats) do
    segments[#segments + 1] = { label = c.display .. " — " .. share_text(c.time, baseline), value = c.time,
      color = colors[c.name], name = c.name }
    sum = sum + c.time
  end
  local rest = math.max(0.0, baseline - sum)
  if rest > 0 then
    segments[#segments + 1] = { label = "Non-computing — " .. share_text(rest, baseline), value = rest,
      color = REST_COLOR, rest = true }
  end
  return segments
end

local function baseline_of(util)
  local b = type(util) == "table" and tonumber(util.total_time_ms) or nil
  if not b or not (b > 0) then return nil end
  return b + 0.0
end

local function names_of(...)
  local names = {}
  for _, list in ipairs { ... } do
    for _, c in ipairs(list) do names[#names + 1] = c.name end
  end
  return names
end

--- The bar's segments from the manifest: compute_kernel categories with
--- gpu_kernel_time_ms > 0 by descending time (stable), then the rest of
--- total_time_ms when positive; labelled "<display_name> — <t> ms (<p>%)"
--- and coloured by category (M.category_colors). Returns segments,
--- baseline; or nil and the message of the reference when there is nothing
--- to plot.
function M.segments(manifest)
  local baseline = baseline_of(manifest.gpu_utilization)
  if not baseline then return nil, "Invalid baseline_ms in manifest - skipping plot" end
  local cats = by_time(trace1_categories(manifest))
  local segments = bar_segments(cats, baseline, M.category_colors(names_of(cats)))
  if #segments == 0 then return nil, "No compute-kernel segments to plot - skipping plot" end
  return segments, baseline
end

--- The comparative chart: two bars (trace 1's as M.segments, trace 2's from
--- trace2_ops_summary_by_category and trace2_gpu_utilization, named as the
--- report names them), one colour per category across both, and one legend
--- entry per category ("<display> — <t1> ms (<p1>%) vs <t2> ms (<p2>%)",
--- trace 1's categories first, then trace 2's others, then Non-computing).
--- opts: trace2_names, bar_labels = {<trace 1>, <trace 2>}.
--- Returns {bars =, legend =, xmax =}; or nil and a message.
function M.comparative(manifest, opts)
  opts = opts or {}
  local b1, b2 = baseline_of(manifest.gpu_utilization), baseline_of(manifest.trace2_gpu_utilization)
  if not b1 then return nil, "Invalid baseline_ms in manifest - skipping plot" end
  if not b2 then return nil, "Invalid trace 2 baseline_ms in manifest - plotting trace 1 only" end
  local c1 = by_time(trace1_categories(manifest))
  local c2 = by_time(trace2_categories(manifest, opts.trace2_names))
  local colors = M.category_colors(names_of(c1, c2))
  local s1, s2 = bar_segments(c1, b1, colors), bar_segments(c2, b2, colors)
  local labels = opts.bar_labels or {}
  local legend, seen, t1, t2 = {}, {}, {}, {}
  for _, c in ipairs(c1) do t1[c.name] = c.time end
  for _, c in ipairs(c2) do t2[c.name] = c.time end
  local function entry(c)
    if seen[c.name] then return end
    seen[c.name] = true
    legend[#legend + 1] = { label = string.format("%s — %s vs %s", c.display, share_text(t1[c.name] or 0, b1),
      share_text(t2[c.name] or 0, b2)), color = colors[c.name] }
  end
  for _, c in ipairs(c1) do entry(c) end
  for _, c in ipairs(c2) do entry(c) end
  local r1, r2 = s1[#s1] and s1[#s1].rest and s1[#s1].value or 0, s2[#s2] and s2[#s2].rest and s2[#s2].value or 0
  if r1 > 0 or r2 > 0 then
    legend[#legend + 1] = { label = "Non-computing — " .. share_text(r1, b1) .. " vs " .. share_text(r2, b2),
      color = REST_COLOR }
  end
  if #s1 == 0 or #s2 == 0 then return nil, "No compute-kernel segments to plot - skipping plot" end
  return { bars = { { label = labels[1] or "Trace 1", segments = s1 }, { label = labels[2] or "Trace 2", segments = s2 } },
    legend = legend, xmax = math.max(b1, b2) }
end

--- §13.1: writes out_dir/<output_filename> (default perf_improvement.png)
--- and, unless opts.write_base64 == false, out_dir/perf_improvement_base64.txt.
--- manifest: the decoded category_manifest.json (nil when there is none).
--- A comparative manifest (one with trace2_gpu_utilization) gets both
--- traces' bars (M.comparative; opts.trace2_names, opts.bar_labels).
--- Returns true, or false and the message it printed.
function M.generate_perf_plot(out_dir, title, manifest, opts)
  opts = opts or {}
  local function skip(msg)
    print(msg)
    return false, msg
  end
  if manifest == nil then return skip("category_manifest.json not found - skipping plot") end
  local spec = { title = title, xlabel = "GPU time (ms)", width_in = 12, height_in = 3, dpi = 150 }
  local comp, why
  if manifest.trace2_gpu_utilization ~= nil then
    comp, why = M.comparative(manifest, opts)
    if not comp and not baseline_of(manifest.gpu_utilization) then return skip(why) end
    if not comp then print(why) end
  end
  if comp then
    spec.xmax, spec.bars, spec.legend = comp.xmax, comp.bars, comp.legend
    spec.legend_cols = math.min(#comp.legend, 3)
    spec.height_in = 4
  else
    local segments, baseline = M.segments(manifest)
    if not segments then return skip(baseline) end
    spec.xmax, spec.segments, spec.legend_cols = baseline, segments, math.min(#segments, 4)
  end

  local png = join(out_dir, opts.output_filename or "perf_improvement.png")
  tl.chart.stacked_bar(png, spec)
  if opts.write_base64 ~= false then
    local bytes = assert(read_file(png), png .. ": cannot read the plot back")
    write_file(join(out_dir, BASE64_FILE), tl.base64(bytes))
  end
  return true
end

--- The line under the embedded chart that links to its file (relative, so
--- that it resolves beside analysis.md in a checkout or on a code host).
function M.file_link_line(file_name)
  return string.format("*The chart as a file: [%s](%s) (GitHub and GitLab do not show the embedded image above.)*",
    file_name, file_name)
end

--- §13.2: replaces every `placeholder` (default "{{PERF_PLOT}}") in
--- out_dir/<report_filename> (default analysis.md) with the image tag made
--- from perf_improvement_base64.txt, or with nothing when that file is
--- missing; with an image, the first image tag already in the report is
--- refreshed too. The report is always rewritten (Python text mode: CRLF
--- and CR line ends become LF). Returns whether an image was embedded, or
--- false and the message it printed when there is no report.
--- file_link (tracelens's addition; the orchestrator passes
--- "perf_improvement.png"): when that file exists next to the report, each
--- placeholder's image is followed by a relative link to it, for code hosts
--- (GitHub, GitLab) that do not render data: URIs; the embedded image, which
--- the reference's validation expects, stays as it is.
function M.embed_plot_in_report(out_dir, report_filename, placeholder, file_link)
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
  local placed = tag
  if embedded and file_link and read_file(join(out_dir, file_link)) then
    placed = tag .. "\n\n" .. M.file_link_line(file_link)
  end
  content = replace_all(content, placeholder or "{{PERF_PLOT}}", placed)
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

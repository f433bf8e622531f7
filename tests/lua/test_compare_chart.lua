-- The comparative chart (issue 11 item 8, issue 13): `run orchestrator.lua
-- T1 --compare T2` draws both traces, two stacked bars on one axis (trace 1
-- above trace 2, named as the report's columns), one colour per category in
-- both, the legend once; a category's colour is fixed by its name across
-- reports and never repeated within a chart.
--   1. tl.chart.stacked_bar{bars = ...}: the PNG decoded here, both bars'
--      colours where their times put them; argument checks; refused in a
--      sandboxed task;
--   2. tracelens.plot: category_colors, comparative() on a manifest made
--      here (labels as the report spells them);
--   3. the orchestrator on a pair made from examples/demo_trace.json, and on
--      the shared Qwen H100 / MI300X traces (skipped when absent): the
--      chart has two bars, in the colours of the run's categories.
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local pngread = require "pngread"
local plot = require "tracelens.plot"

local tmp = T.tmpdir()

local function rgb(hex)
  return tonumber(hex:sub(2, 3), 16), tonumber(hex:sub(4, 5), 16), tonumber(hex:sub(6, 7), 16)
end
-- a colour drawn with alpha 0.95 over white
local function over_white(hex)
  local r, g, b = rgb(hex)
  local function m(c) return math.floor(c * 0.95 + 255 * 0.05 + 0.5) end
  return m(r), m(g), m(b)
end
local function near(img, x, y, hex)
  local r, g, b = over_white(hex)
  local pr, pg, pb = img.pixel(x, y)
  return math.abs(pr - r) <= 2 and math.abs(pg - g) <= 2 and math.abs(pb - b) <= 2,
    string.format("(%d,%d,%d) at %d,%d, expected %s", pr, pg, pb, x, y, hex)
end

-- The bars of a chart: the runs of rows (at least 20 high) where column x is
-- one of the colours given; each as {top, bottom, middle}.
local function bar_rows(img, x, colors)
  local runs, start = {}, nil
  for y = 0, img.height do
    local hit = false
    if y < img.height then
      for _, c in ipairs(colors) do
        if near(img, x, y, c) then
          hit = true
          break
        end
      end
    end
    if hit and not start then start = y end
    if not hit and start then
      if y - start >= 20 then runs[#runs + 1] = { top = start, bottom = y - 1, middle = (start + y - 1) // 2 } end
      start = nil
    end
  end
  return runs
end

-- The first and last x of row y in one of the colours given.
local function extent(img, y, colors)
  local left, right
  for x = 0, img.width - 1 do
    for _, c in ipairs(colors) do
      if near(img, x, y, c) then
        left = left or x
        right = x
        break
      end
    end
  end
  return left, right
end

-- 1. tl.chart.stacked_bar with bars -------------------------------------------

local RED, ORANGE, BLUE, GREY = "#e74c3c", "#e67e22", "#3498db", "#aab7c4"
local function seg(label, value, color) return { label = label, value = value, color = color } end
local spec = {
  title = "Two traces", xlabel = "GPU time (ms)", xmax = 10, width_in = 12, height_in = 4, dpi = 150,
  bars = {
    { label = "Trace 1 - (H100)", segments = { seg("GEMM", 3, RED), seg("SDPA_fwd", 1, ORANGE), seg("rest", 4, GREY) } },
    { label = "Trace 2 - (MI300X)",
      segments = { seg("SDPA_fwd", 2, ORANGE), seg("GEMM", 5, RED), seg("MoE", 1, BLUE), seg("rest", 2, GREY) } },
  },
}
local path = tmp .. "/two.png"
local dims = tl.chart.stacked_bar(path, spec)
local img = assert(pngread.decode(assert(T.read_file(path))))
T.eq(img.width .. "x" .. img.height, dims.width .. "x" .. dims.height, "returned size is the file's")
-- column of x = 1.5 (red in trace 1, orange in trace 2): two bars
local probe = bar_rows(img, math.floor(img.width / 2), { RED, ORANGE, BLUE, GREY })
T.eq(#probe, 2, "two bars in the middle column")
if #probe == 2 then
  local b1, b2 = probe[1], probe[2]
  T.check(math.abs((b1.bottom - b1.top) - (b2.bottom - b2.top)) <= 1, "bars of equal height")
  T.check(b1.bottom - b1.top > 50, "bar height " .. (b1.bottom - b1.top))
  -- the axis: trace 2 fills it (10 of 10), so its row's extent is the axis
  local ax0, ax1 = extent(img, b2.middle, { RED, ORANGE, BLUE, GREY })
  local function at(v) return math.floor(ax0 + v / 10 * (ax1 + 1 - ax0)) end
  T.check(near(img, at(1.5), b1.middle, RED))
  T.check(near(img, at(3.5), b1.middle, ORANGE))
  T.check(near(img, at(6), b1.middle, GREY))
  local r, g, b = img.pixel(at(9), b1.middle)
  T.check(r == 255 and g == 255 and b == 255, "trace 1 ends at 8 of 10")
  T.check(near(img, at(1), b2.middle, ORANGE))
  T.check(near(img, at(4.5), b2.middle, RED))
  T.check(near(img, at(7.5), b2.middle, BLUE))
  T.check(near(img, at(9), b2.middle, GREY))
  -- names left of the axis, at each bar's height
  for i, bar in ipairs(probe) do
    local ink = 0
    for y = bar.top, bar.bottom do
      for x = 0, ax0 - 3 do
        local pr = img.pixel(x, y)
        if pr < 100 then ink = ink + 1 end
      end
    end
    T.check(ink > 100, "bar " .. i .. "'s name: " .. ink .. " px of ink")
  end
  -- the legend once: one swatch of each colour below the bars
  for _, c in ipairs { RED, ORANGE, BLUE, GREY } do
    local n = 0
    for y = b2.bottom + 40, img.height - 1 do
      for x = 0, img.width - 1 do
        if near(img, x, y, c) then n = n + 1 end
      end
    end
    T.check(n > 250 and n < 700, "one legend swatch of " .. c .. ": " .. n .. " px")
  end
end

-- argument checks: the binding's rules for segments hold for bars
local function err_of(f, ...)
  local ok, e = pcall(f, ...)
  return not ok and tostring(e) or ""
end
local bad = tmp .. "/bad.png"
local one = { seg("x", 1, RED) }
local function check_err(s, want, what)
  local e = err_of(tl.chart.stacked_bar, bad, s)
  T.check(e:find(want, 1, true) ~= nil, what .. ": " .. e)
end
check_err({ xmax = 1, segments = one, bars = { { segments = one } } }, "segments or bars, not both", "both")
check_err({ xmax = 1, bars = {} }, "bars must hold 1 to 64 entries", "no bars")
check_err({ xmax = 1, bars = "x" }, "bars must be an array", "bars not a table")
check_err({ xmax = 1, bars = { { segments = one }, 3 } }, "bars[2] must be a table", "bar not a table")
check_err({ xmax = 1, bars = { { segments = one }, { label = "b" } } }, "bars[2].segments must be an array",
  "bar without segments")
check_err({ xmax = 1, bars = { { segments = {} } } }, "bars[1].segments must hold 1 to 4096", "empty bar")
check_err({ xmax = 1, bars = { { segments = one }, { segments = { seg("y", 1, "red") } } } },
  "bars[2].segments[1].color must be \"#rrggbb\"", "bad colour")
check_err({ xmax = 1, bars = { { segments = { { color = RED } } } } }, "bars[1].segments[1].value must be a number",
  "no value")
check_err({ xmax = 1, bars = { { label = 5, segments = one } } }, "bars[1].label must be a string", "bad label")
check_err({ xmax = 1, bars = { { segments = { seg("y", -1, RED) } } } }, "bar 1: segment 1", "negative value")
local many = {}
for i = 1, 65 do many[i] = { segments = one } end
check_err({ xmax = 1, bars = many }, "1 to 64", "65 bars")
local big = {}
for i = 1, 3000 do big[i] = seg("s", 1, RED) end
check_err({ xmax = 1, bars = { { segments = big }, { segments = big } } }, "6000 segments; at most 4096",
  "too many segments in all")
check_err({ xmax = 1, segments = one, legend = {} }, "legend must hold 1 to 4096", "empty legend")
check_err({ xmax = 1, segments = one, legend = { { label = "x" } } }, "legend[1].color", "legend without colour")
T.check(not T.file_exists(bad), "no file after errors")
-- a legend needs no value
T.check(pcall(tl.chart.stacked_bar, tmp .. "/leg.png", { xmax = 1, segments = one, legend = { { label = "l",
  color = BLUE } } }), "legend entries without value")
-- refused in a sandboxed task, as with segments
local r = tl.parallel { { code = [[local p = ... return tl.chart.stacked_bar(p, {xmax = 1,
  bars = {{segments = {{value = 1, color = "#123456"}}}}})]], args = { tmp .. "/task.png" } } }
T.check(r[1] and not r[1].ok and tostring(r[1].error):find("tl.chart.stacked_bar", 1, true) ~= nil,
  "refused in a task: " .. tostring(r[1] and r[1].error))
T.check(not T.file_exists(tmp .. "/task.png"), "no file from a task")

-- 2. tracelens.plot -------------------------------------------------------------

-- colours: fixed by name, whatever the rank or the other categories
local a = plot.category_colors { "gemm", "elementwise", "sdpa_fwd" }
local b = plot.category_colors { "elementwise", "my_rule_cat", "gemm", "triton" }
T.eq(a.gemm, "#e74c3c", "gemm keeps the reference's first colour")
T.eq(a.gemm, b.gemm, "gemm: same colour in two charts")
T.eq(a.elementwise, b.elementwise, "elementwise: same colour whatever its rank")
local c1 = plot.category_colors { "zeta", "alpha", "gemm" }
local c2 = plot.category_colors { "gemm", "alpha", "zeta" }
T.eq(c1.alpha .. c1.zeta, c2.alpha .. c2.zeta, "other names: the same colours in any order")
-- no repeats, even past the palette (the reference cycled 8 colours)
local names = { "gemm", "sdpa_fwd", "sdpa_bwd", "elementwise", "reduce", "other", "norm_fwd", "norm_bwd", "conv_fwd",
  "conv_bwd", "triton", "moe_fused", "moe_unfused", "moe_aux", "groupedgemm_fwd", "groupedgemm_bwd",
  "inferenceattention" }
for i = 1, 20 do names[#names + 1] = "custom_" .. i end
local colors, seen = plot.category_colors(names), { ["#aab7c4"] = "Non-computing" }
for _, n in ipairs(names) do
  local col = colors[n]
  T.check(type(col) == "string" and col:match("^#%x%x%x%x%x%x$") ~= nil, n .. ": a colour: " .. tostring(col))
  T.check(not seen[col], n .. ": " .. tostring(col) .. " also " .. tostring(seen[col]))
  seen[col] = n
end

-- comparative(): trace 1 from categories, trace 2 from its records, each
-- category under the name the report gives it
local manifest = {
  gpu_utilization = { total_time_ms = 10.0 },
  categories = {
    { name = "cpu_idle", display_name = "CPU/Idle Analysis", tier = "system" },
    { name = "gemm", display_name = "GEMM", tier = "compute_kernel", gpu_kernel_time_ms = 3.0 },
    { name = "sdpa_fwd", display_name = "SDPA_fwd", tier = "compute_kernel", gpu_kernel_time_ms = 1.0 },
  },
  trace2_gpu_utilization = { total_time_ms = 12.0 },
  trace2_ops_summary_by_category = {
    { ["op category"] = "gemm", total_direct_kernel_time_ms = 5.00049 },
    { ["op category"] = "moe_fused", total_direct_kernel_time_ms = 6.0 },
    { ["op category"] = "sdpa_fwd", total_direct_kernel_time_ms = 0.5 },
  },
}
local comp = assert(plot.comparative(manifest, { trace2_names = { moe_fused = "MoE_fused" },
  bar_labels = { "Trace 1 - (H100)", "Trace 2 - (MI300X)" } }))
T.eq(comp.xmax, 12.0, "xmax: the longer trace")
T.eq(#comp.bars, 2, "two bars")
T.eq(comp.bars[1].label, "Trace 1 - (H100)", "bar 1 label")
T.eq(comp.bars[2].label, "Trace 2 - (MI300X)", "bar 2 label")
local function labels(bar)
  local out = {}
  for _, s in ipairs(bar.segments) do out[#out + 1] = s.label end
  return table.concat(out, "; ")
end
T.eq(labels(comp.bars[1]), "GEMM — 3.0 ms (30.0%); SDPA_fwd — 1.0 ms (10.0%); Non-computing — 6.0 ms (60.0%)",
  "trace 1's segments")
T.eq(labels(comp.bars[2]), "MoE_fused — 6.0 ms (50.0%); GEMM — 5.0 ms (41.7%); SDPA_fwd — 0.5 ms (4.2%); "
  .. "Non-computing — 0.5 ms (4.2%)", "trace 2's segments: by time, trace 1's names, 3-decimal times")
T.eq(comp.bars[1].segments[1].color, comp.bars[2].segments[2].color, "GEMM: one colour in both bars")
T.eq(comp.bars[1].segments[2].color, comp.bars[2].segments[3].color, "SDPA_fwd: one colour in both bars")
local leg = {}
for _, e in ipairs(comp.legend) do leg[#leg + 1] = e.label end
T.eq(table.concat(leg, "; "), "GEMM — 3.0 ms (30.0%) vs 5.0 ms (41.7%); SDPA_fwd — 1.0 ms (10.0%) vs 0.5 ms (4.2%); "
  .. "MoE_fused — 0.0 ms (0.0%) vs 6.0 ms (50.0%); Non-computing — 6.0 ms (60.0%) vs 0.5 ms (4.2%)",
  "one legend entry per category")
-- the PNG: two bars
T.eq(plot.generate_perf_plot(tmp, "t", manifest, { bar_labels = { "A", "B" }, write_base64 = false }), true,
  "comparative plot made")
local cimg = assert(pngread.decode(assert(T.read_file(tmp .. "/perf_improvement.png"))))
T.eq(#bar_rows(cimg, math.floor(cimg.width / 3), { "#e74c3c", "#e67e22", comp.bars[2].segments[1].color, GREY }), 2,
  "generate_perf_plot: two bars")
-- trace 2 without a baseline: trace 1 alone (said), as before
manifest.trace2_gpu_utilization = { total_time_ms = 0 }
T.eq(plot.generate_perf_plot(tmp, "t", manifest, { write_base64 = false }), true, "no trace 2 baseline: plotted")
cimg = assert(pngread.decode(assert(T.read_file(tmp .. "/perf_improvement.png"))))
T.eq(#bar_rows(cimg, math.floor(cimg.width / 5), { "#e74c3c", "#e67e22", GREY }), 1, "one bar")

-- 3. the orchestrator -------------------------------------------------------------

-- The chart of a comparative run: its two bars, each starting with its
-- trace's largest category in that category's colour.
local function check_run(t1, t2, name)
  local ok, code, _, err = T.run(string.format("cd %s && %s run %s %s --compare %s -q -o %s", T.q(tmp), T.q(bin),
    T.q(root .. "/lua/orchestrator.lua"), T.q(t1), T.q(t2), name))
  T.check(ok, name .. ": exit " .. tostring(code) .. ": " .. tostring(err))
  local out = tmp .. "/" .. name
  local png = T.read_file(out .. "/perf_improvement.png")
  T.check(png ~= nil, name .. ": perf_improvement.png")
  local m = require("cjson").decode(T.read_file(out .. "/category_data/category_manifest.json") or "{}")
  local cp = plot.comparative(m)
  T.check(cp ~= nil, name .. ": both traces plottable")
  if not png or not cp then return end
  local im = assert(pngread.decode(png))
  local all = { GREY }
  for _, bar in ipairs(cp.bars) do
    for _, s in ipairs(bar.segments) do all[#all + 1] = s.color end
  end
  -- the column just right of the axis start: each bar's first segment
  local rows = bar_rows(im, math.floor(im.width / 2), all)
  T.eq(#rows, 2, name .. ": two bars")
  if #rows ~= 2 then return end
  local left = math.min(extent(im, rows[1].middle, all), extent(im, rows[2].middle, all))
  for i, bar in ipairs(cp.bars) do
    local first = bar.segments[1]
    T.check(near(im, left + 3, rows[i].middle, first.color), name .. ": bar " .. i .. " starts with " .. first.label)
  end
  -- the legend's names are the report's
  local report = T.read_file(out .. "/analysis.md") or ""
  local cat = cp.bars[1].segments[1].label:match("^(.-) —")
  T.check(report:find("| Top Bottleneck Category | " .. cat .. " (", 1, true) ~= nil,
    name .. ": the chart's top category is the report's: " .. cat)
  print(string.format("%s: chart %dx%d, bars at rows %d and %d", name, im.width, im.height, rows[1].middle,
    rows[2].middle))
end

local demo = root .. "/examples/demo_trace.json"
local src = assert(T.read_file(demo))
local t1 = tmp .. "/no_sdpa.json"
tl.fs.write_file(t1, (src:gsub("aten::_scaled_dot_product_flash_attention", "my::attention")
  :gsub("aten::scaled_dot_product_attention", "my::attention")))
check_run(t1, demo, "demo_pair")

local qh = shared .. "/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
local qm = shared .. "/traces/mi300/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
if T.file_exists(qh) and T.file_exists(qm) then
  check_run(qh, qm, "qwen_h100_mi300")
else
  print("SKIP (Qwen H100 vs MI300X): " .. qh .. " or " .. qm .. " not found")
end

T.rmrf(tmp)
T.finish()

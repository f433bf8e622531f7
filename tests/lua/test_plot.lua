-- tracelens.plot (analysis-layer spec §13) and the functions under it:
-- tl.base64 (RFC 4648 vectors), tl.chart.stacked_bar's argument checks, the
-- bert plot (segments, labels, size near the reference's 1768x359, colours
-- where the times put them, read back with the tests' own PNG reader), the
-- base64 sidecar (decoded here), and embedding into the report.
-- Two deviations from the reference's plot (issue 13, docs/compat.md): the
-- labels spell a category as the report does (its display_name: "GEMM",
-- where the reference capitalises the name: "Gemm"), and a category's
-- colour is fixed by its name instead of its rank (the bert categories get
-- the colours the reference gives them by rank; tests/lua/test_compare_chart.lua
-- checks the colours across charts and the comparative chart).
local root, shared = arg[1], arg[2]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local pngread = require "pngread"
local plot = require "tracelens.plot"

local read = tl.fs.read_file

local function write(path, s)
  local f = assert(io.open(path, "wb"))
  f:write(s)
  f:close()
end

-- RFC 4648 decoding, written here so the sidecar is checked independently.
local function unbase64(s)
  local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  local val = {}
  for i = 1, 64 do val[alphabet:byte(i)] = i - 1 end
  if #s % 4 ~= 0 then return nil end
  local out = {}
  for i = 1, #s, 4 do
    local a, b, c, d = s:byte(i, i + 3)
    local n = val[a] << 18 | val[b] << 12 | (val[c] or 0) << 6 | (val[d] or 0)
    out[#out + 1] = string.char(n >> 16)
    if c ~= 61 then out[#out + 1] = string.char(n >> 8 & 255) end
    if d ~= 61 then out[#out + 1] = string.char(n & 255) end
  end
  return table.concat(out)
end

-- tl.base64 ------------------------------------------------------------------

for _, v in ipairs { { "", "" }, { "f", "Zg==" }, { "fo", "Zm8=" }, { "foo", "Zm9v" }, { "foob", "Zm9vYg==" },
  { "fooba", "Zm9vYmE=" }, { "foobar", "Zm9vYmFy" }, { "\251\255", "+/8=" } } do
  T.eq(tl.base64(v[1]), v[2], "base64 of " .. v[1])
end
T.eq(unbase64(tl.base64("a\0b\255\n")), "a\0b\255\n", "base64 round trip with NUL and high bytes")

-- the bert manifest (category_manifest.json of the golden run) ---------------

local manifest = {
  gpu_utilization = { total_time_ms = 3.49597607421875 },
  categories = {
    { name = "cpu_idle", tier = "system" },
    { name = "sdpa_fwd", display_name = "SDPA_fwd", tier = "compute_kernel", gpu_kernel_time_ms = 0.114 },
    { name = "gemm", display_name = "GEMM", tier = "compute_kernel", gpu_kernel_time_ms = 0.174 },
    { name = "norm_fwd", display_name = "NORM_fwd", tier = "compute_kernel", gpu_kernel_time_ms = 0.04 },
    { name = "elementwise", display_name = "elementwise", tier = "compute_kernel", gpu_kernel_time_ms = 0.048 },
    { name = "reduce", display_name = "reduce", tier = "compute_kernel", gpu_kernel_time_ms = 0.004 },
    { name = "other", display_name = "other", tier = "compute_kernel", gpu_kernel_time_ms = 0.011 },
    { name = "multi_kernel", tier = "system" },
    { name = "kernel_fusion", tier = "system", gpu_kernel_time_ms = 0.0 },
  },
}
local golden = shared .. "/agent_golden/standalone"
local golden_manifest = read(golden .. "/category_data/category_manifest.json")
if golden_manifest then
  -- the values above are the golden run's
  local g = require("cjson").decode(golden_manifest)
  T.eq(g.gpu_utilization.total_time_ms, manifest.gpu_utilization.total_time_ms, "golden total_time_ms")
  local mine = {}
  for _, c in ipairs(manifest.categories) do mine[c.name] = c end
  for _, c in ipairs(g.categories) do
    T.eq(type(c.gpu_kernel_time_ms) == "number" and c.gpu_kernel_time_ms or nil,
      mine[c.name] and mine[c.name].gpu_kernel_time_ms, "golden time of " .. c.name)
    T.eq(c.tier, mine[c.name] and mine[c.name].tier, "golden tier of " .. c.name)
    if c.tier == "compute_kernel" then
      T.eq(c.display_name, mine[c.name] and mine[c.name].display_name, "golden display name of " .. c.name)
    end
  end
else
  print("SKIP (golden cross-checks): " .. golden .. " not found")
end

-- segments: descending time, then the rest; labels as in the reference image
-- but with the report's spelling of each category (the reference: "Gemm",
-- "Sdpa_fwd", "Elementwise", "Norm_fwd", "Other", "Reduce"); the colours are
-- the reference's for this trace
local segs = assert(plot.segments(manifest))
local expect = {
  { "GEMM — 0.2 ms (5.0%)", 0.174, "#e74c3c" },
  { "SDPA_fwd — 0.1 ms (3.3%)", 0.114, "#e67e22" },
  { "elementwise — 0.0 ms (1.4%)", 0.048, "#f1c40f" },
  { "NORM_fwd — 0.0 ms (1.1%)", 0.04, "#2ecc71" },
  { "other — 0.0 ms (0.3%)", 0.011, "#9b59b6" },
  { "reduce — 0.0 ms (0.1%)", 0.004, "#1abc9c" },
  -- 3.49597607421875 - 0.391 = 3.10497..., 88.82%
  { "Non-computing — 3.1 ms (88.8%)", 3.49597607421875 - (0.174 + 0.114 + 0.048 + 0.04 + 0.011 + 0.004), "#aab7c4" },
}
T.eq(#segs, #expect, "segment count")
for i, e in ipairs(expect) do
  local s = segs[i] or {}
  T.eq(s.label, e[1], "label " .. i)
  T.close(s.value, e[2], "value " .. i, 1e-12, 1e-12)
  T.eq(s.color, e[3], "colour " .. i)
end

-- the plot -----------------------------------------------------------------

local dir = T.tmpdir()
local title = "BERT on MI300X — Performance Breakdown"
T.eq(plot.generate_perf_plot(dir, title, manifest), true, "generate_perf_plot")
local png = read(dir .. "/perf_improvement.png")
T.check(png ~= nil, "perf_improvement.png written")
png = png or ""
local w, h = pngread.size(png)
T.check(w and math.abs(w - 1768) <= 0.05 * 1768, "width near 1768: " .. tostring(w))
T.check(h and math.abs(h - 359) <= 0.05 * 359, "height near 359: " .. tostring(h))
print(string.format("bert plot: %sx%s px (reference 1768x359)", w, h))
local gpng = read(golden .. "/perf_improvement.png")
if gpng then T.eq(table.concat({ pngread.size(gpng) }, "x"), "1768x359", "golden image size") end

local b64 = read(dir .. "/perf_improvement_base64.txt") or ""
T.check(b64:match("^[A-Za-z0-9+/]*=?=?$") ~= nil, "sidecar is base64, no line breaks or newline")
T.check(unbase64(b64) == png, "sidecar decodes to the PNG bytes")

-- pixels: the bar's row is the one rest-coloured across most of the image
local img, perr = pngread.decode(png)
T.check(img ~= nil, "decode the plot: " .. tostring(perr))
if img then
  local function over_white(hex) -- alpha 0.95
    local r, g, b = tonumber(hex:sub(2, 3), 16), tonumber(hex:sub(4, 5), 16), tonumber(hex:sub(6, 7), 16)
    local function m(c) return math.floor(c * 0.95 + 255 * 0.05 + 0.5) end
    return m(r), m(g), m(b)
  end
  local function near(x, y, r, g, b)
    local pr, pg, pb = img.pixel(x, y)
    return math.abs(pr - r) <= 2 and math.abs(pg - g) <= 2 and math.abs(pb - b) <= 2,
      string.format("(%d,%d,%d) at %d,%d, expected (%d,%d,%d)", pr, pg, pb, x, y, r, g, b)
  end
  local rr, rg, rb = over_white("#aab7c4")
  local rows = {}
  for y = 0, img.height - 1 do
    local n = 0
    for x = 0, img.width - 1, 4 do
      if near(x, y, rr, rg, rb) then n = n + 1 end
    end
    if n * 4 > img.width / 2 then rows[#rows + 1] = y end
  end
  T.check(#rows > 50, "bar rows found: " .. #rows)
  local row = rows[(#rows + 1) // 2] or 0
  local left, right
  for x = 0, img.width - 1 do
    local r, g, b = img.pixel(x, row)
    if r < 250 or g < 250 or b < 250 then
      left = left or x
      right = x
    end
  end
  T.check(left and left < 60, "bar starts near the left edge: " .. tostring(left))
  T.check(right and right > img.width - 40, "bar ends near the right edge: " .. tostring(right))
  left, right = left or 0, right or 0
  local width, cum = right + 1 - left, 0
  for i, e in ipairs(expect) do
    local share = e[2] / 3.49597607421875
    local x = math.floor(left + (cum + share / 2) * width)
    cum = cum + share
    if share * width > 4 then -- narrower ones are mostly white edge
      T.check(near(x, row, over_white(e[3])))
    end
  end
  T.check(near(left + 5, row, 232, 85, 70), "#e74c3c at the left of the bar")
  -- the legend's swatches, below the bar, one per segment
  for _, e in ipairs(expect) do
    local r, g, b = over_white(e[3])
    local found = 0
    for y = rows[#rows] + 40, img.height - 1 do
      for x = 0, img.width - 1 do
        if near(x, y, r, g, b) then found = found + 1 end
      end
    end
    T.check(found > 200, "legend swatch " .. e[3] .. ": " .. found .. " px")
  end
end

-- options and skips
local d2 = T.tmpdir()
T.eq(plot.generate_perf_plot(d2, "t", manifest, { output_filename = "p.png", write_base64 = false }), true,
  "custom name, no sidecar")
T.check(T.file_exists(d2 .. "/p.png"), "p.png written")
T.check(not T.file_exists(d2 .. "/perf_improvement_base64.txt"), "no sidecar when write_base64 = false")
local ok, msg = plot.generate_perf_plot(d2, "t", nil)
T.eq(ok, false, "no manifest")
T.eq(msg, "category_manifest.json not found - skipping plot", "no manifest message")
ok, msg = plot.generate_perf_plot(d2, "t", { gpu_utilization = { total_time_ms = 0 }, categories = {} })
T.eq(ok, false, "zero baseline")
T.eq(msg, "Invalid baseline_ms in manifest - skipping plot", "zero baseline message")
ok, msg = plot.generate_perf_plot(d2, "t", { categories = {} })
T.eq(msg, "Invalid baseline_ms in manifest - skipping plot", "missing baseline")
-- only the rest: one grey segment
local only = assert(plot.segments { gpu_utilization = { total_time_ms = 2.0 }, categories = {} })
T.eq(#only, 1, "no compute category: the rest alone")
T.eq(only[1].label, "Non-computing — 2.0 ms (100.0%)", "rest label")
-- ties keep manifest order; compute time beyond the baseline leaves no rest
local tie = plot.segments { gpu_utilization = { total_time_ms = 1.0 }, categories = {
  { name = "b", tier = "compute_kernel", gpu_kernel_time_ms = 0.6 },
  { name = "a", tier = "compute_kernel", gpu_kernel_time_ms = 0.6 },
  { name = "z", tier = "system", gpu_kernel_time_ms = 0.9 },
} }
T.eq(#tie, 2, "no rest when compute exceeds the baseline")
T.eq(tie[1].label:sub(1, 1) .. tie[2].label:sub(1, 1), "ba", "stable order on ties (no display_name: the name)")

-- tl.chart.stacked_bar checks its arguments
local function err_of(f, ...)
  local okc, e = pcall(f, ...)
  return not okc and tostring(e) or ""
end
local seg1 = { { label = "x", value = 1, color = "#123456" } }
T.check(err_of(tl.chart.stacked_bar, d2 .. "/e.png", { xmax = 1, segments = { { value = 1, color = "red" } } })
  :find("color must be \"#rrggbb\"", 1, true), "bad colour")
T.check(err_of(tl.chart.stacked_bar, d2 .. "/e.png", { segments = seg1 }):find("xmax must be a number", 1, true),
  "missing xmax")
T.check(err_of(tl.chart.stacked_bar, d2 .. "/e.png", { xmax = 1, segments = {} }):find("1 to 4096", 1, true),
  "no segments")
T.check(err_of(tl.chart.stacked_bar, d2 .. "/e.png", { xmax = -1, segments = seg1 }):find("xmax", 1, true),
  "negative xmax")
T.check(not T.file_exists(d2 .. "/e.png"), "no file after errors")
local dims = tl.chart.stacked_bar(d2 .. "/small.png", { xmax = 2, segments = seg1, width_in = 4, height_in = 2,
  dpi = 100 })
T.eq(table.concat({ pngread.size(read(d2 .. "/small.png")) }, "x"), dims.width .. "x" .. dims.height,
  "returned size is the file's")

-- embedding ------------------------------------------------------------------

local tag = "![Performance Improvement](data:image/png;base64," .. b64 .. ")"
write(dir .. "/analysis.md", "# Report\n\n{{PERF_PLOT}}\n\ntext\n{{PERF_PLOT}}\n")
T.eq(plot.embed_plot_in_report(dir), true, "embedded")
T.eq(read(dir .. "/analysis.md"), "# Report\n\n" .. tag .. "\n\ntext\n" .. tag .. "\n", "every placeholder replaced")

-- a stale image is refreshed (the first one only, as re.sub(count=1))
local stale = "![Performance Improvement](data:image/png;base64,AAAA+/==)"
write(dir .. "/r.md", "a\n" .. stale .. "\nb " .. stale .. "\r\n")
T.eq(plot.embed_plot_in_report(dir, "r.md"), true, "refresh")
T.eq(read(dir .. "/r.md"), "a\n" .. tag .. "\nb " .. stale .. "\n", "first stale image refreshed, CRLF read as LF")

-- a custom placeholder with pattern characters is plain text
write(dir .. "/c.md", "x %PLOT%.* y")
T.eq(plot.embed_plot_in_report(dir, "c.md", "%PLOT%.*"), true, "custom placeholder")
T.eq(read(dir .. "/c.md"), "x " .. tag .. " y", "custom placeholder replaced")

-- file_link: the image is followed by a relative link to the chart's file
-- (code hosts do not render data: URIs), only when that file exists
write(dir .. "/l.md", "a\n{{PERF_PLOT}}\nb\n")
T.eq(plot.embed_plot_in_report(dir, "l.md", nil, "perf_improvement.png"), true, "embedded with a file link")
T.eq(read(dir .. "/l.md"), "a\n" .. tag .. "\n\n" .. plot.file_link_line("perf_improvement.png") .. "\nb\n",
  "image kept, link added under it")
T.check(plot.file_link_line("perf_improvement.png"):find("](perf_improvement.png)", 1, true) ~= nil,
  "the link is relative")
write(dir .. "/l2.md", "{{PERF_PLOT}}")
T.eq(plot.embed_plot_in_report(dir, "l2.md", nil, "no_such.png"), true, "embedded, no file to link")
T.eq(read(dir .. "/l2.md"), tag, "no link to a missing file")

-- no sidecar: the placeholder is deleted and nothing is embedded
write(d2 .. "/analysis.md", "before {{PERF_PLOT}} after\n" .. stale)
T.eq(plot.embed_plot_in_report(d2), false, "no base64 file")
T.eq(read(d2 .. "/analysis.md"), "before  after\n" .. stale, "placeholder deleted, old image left")

-- no report
local d3 = T.tmpdir()
ok, msg = plot.embed_plot_in_report(d3)
T.eq(ok, false, "no report")
T.eq(msg, "Report file not found at " .. d3 .. "/analysis.md - skipping embed", "no report message")
T.check(not T.file_exists(d3 .. "/analysis.md"), "no report created")

-- §13.3: a failing priority step does not stop the plot
write(d3 .. "/analysis.md", "{{PERF_PLOT}}")
local res = plot.generate_and_embed_plot(d3, title, manifest, function() error("no findings") end)
T.eq(res.plot_data, false, "plot_data false on error")
T.eq(res.plot, true, "plot made")
T.eq(res.embed, true, "embedded")
T.check((read(d3 .. "/analysis.md") or ""):match("^!%[Performance Improvement%]%(data:image/png;base64,") ~= nil,
  "report holds the image")

-- tl.base64 and tl.chart exist in tl.parallel tasks too
local r = tl.parallel { { code = "return tl.base64('foob'), type(tl.chart.stacked_bar)" } }
T.eq(r[1].ok and r[1].value, "Zm9vYg==", "base64 in a task")

for _, d in ipairs { dir, d2, d3 } do T.rmrf(d) end
T.finish()

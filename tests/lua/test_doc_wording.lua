-- analysis.md read as a document by a GPU engineer (issue 13): the chart is
-- also reachable on code hosts (a relative link to perf_improvement.png under
-- the embedded image), and the text has no leftover internal phrases or enum
-- values, one precision per range, no "+0.0", no "a OWLv2", capitalised
-- findings headings, no Model line contradicting the Scale line, and every
-- "% of the ... peak" says which peak (datasheet or max-achievable). Also
-- docs/check.md's example block against the command's output. Run on
-- the bundled demo trace and on every shared real trace (skipped, saying so,
-- when ../shared/data is absent); each output passes `tracelens validate`.
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local plot = require "tracelens.plot"

local tmp = T.tmpdir()
local read = T.read_file

local FORBIDDEN = {
  "Tile size not visible", "Decomposition strategy not visible", "Per-op layout not visible",
  "tile size not visible", "Fusion strategy not visible", "Reduction strategy not visible",
  "Bottleneck identified", "generate reproducer", "memory_bound", "matrix_compute", "TFLOPS/s",
}

local function markdown_files(dir)
  local files = { dir .. "/analysis.md" }
  for _, sub in ipairs({ "category_findings", "system_findings" }) do
    for _, f in ipairs(tl.fs.listdir(dir .. "/" .. sub) or {}) do
      if f:match("%.md$") then files[#files + 1] = dir .. "/" .. sub .. "/" .. f end
    end
  end
  return files
end

local function decimals(t) return #(t:match("%.(%d+)$") or "") end

local function check_output(name, dir)
  local md = read(dir .. "/analysis.md")
  if not T.check(md ~= nil, name .. ": analysis.md written") then return end
  -- the chart: embedded (the reference's validation) and linked (code hosts)
  if read(dir .. "/perf_improvement.png") then
    local img = md:find("![Performance Improvement](data:image/png;base64,", 1, true)
    local link = md:find(plot.file_link_line("perf_improvement.png"), 1, true)
    T.check(img and link and link > img, name .. ": the embedded chart, then a relative link to perf_improvement.png")
  end
  for _, f in ipairs(markdown_files(dir)) do
    local s = read(f) or ""
    local rel = name .. ": " .. f:sub(#dir + 2)
    for _, bad in ipairs(FORBIDDEN) do
      local at = s:find(bad, 1, true)
      T.check(not at, rel .. ": no \"" .. bad .. "\"" .. (at and (" in: " .. s:sub(math.max(1, at - 60), at + 40)) or ""))
    end
    T.check(not s:find("\n# %l") and not s:find("^# %l"), rel .. ": headings start with a capital")
    T.check(not s:find("[^%d.]1 kernels") and not s:find("[^%d.,]1 GPU events"), rel .. ": no \"1 kernels\"")
    T.check(not s:find("[^%w]%+0%.0+[^%d]"), rel .. ": no +0.0")
    T.check(not s:find(" for a [AEIOU]"), rel .. ": no \"a\" before a vowel")
    -- ranges: both ends at one precision
    for lo, hi in s:gmatch("(%d+%.?%d*)–(%d+%.?%d*)") do
      if lo:find(".", 1, true) or hi:find(".", 1, true) then
        T.eq(decimals(lo), decimals(hi), rel .. ": range " .. lo .. "–" .. hi .. " at one precision")
      end
    end
    -- every % of a named peak says which peak it is
    for phrase in s:gmatch("of the [%d.]+ T[BF][^ ]* [^.,;)]-peak") do
      T.check(phrase:find("datasheet", 1, true) or phrase:find("max-achievable", 1, true),
        rel .. ": the peak says which: " .. phrase)
    end
    -- a kernel the classifier calls Unknown but whose name says softmax/reduce
    for line in s:gmatch("[^\n]+") do
      if line:find("| Unknown |", 1, true) then
        local l = line:lower()
        T.check(not l:find("softmax") and not l:find("reduce_kernel"), rel .. ": typed by its name: " .. line)
      end
    end
  end
  -- Model and Scale do not contradict each other
  local model = md:match("\n%- %*%*Model%*%*: ([^\n]*)")
  local scale = md:match("\n%- %*%*Scale%*%*: ([^\n]*)")
  if model and scale and scale ~= "Cannot be inferred from trace" then
    T.check(model ~= "Cannot be inferred from trace", name .. ": Model line does not deny what Scale states: " .. model)
  end
  local ok, code, out, err = T.run(string.format("%s validate %s", T.q(bin), T.q(dir)))
  T.check(ok, name .. ": tracelens validate passes (exit " .. tostring(code) .. "): " .. out .. err)
end

local function analyse(name, trace, extra)
  local out = tmp .. "/" .. name
  local ok, code, stdout, stderr = T.run(string.format("cd %s && %s run orchestrator.lua %s -o %s -q %s", T.q(root),
    T.q(bin), T.q(trace), T.q(out), extra or ""))
  if T.check(ok, name .. ": orchestrator exit " .. tostring(code) .. "\n" .. stdout .. stderr) then check_output(name, out) end
end

-- docs/check.md's example block is `tracelens check` on the Qwen H100 trace, line for line
-- (the block: a "$ tracelens check FILE" line, then the output), so it cannot drift from the tool
local function check_doc_example()
  local doc = read(root .. "/docs/check.md") or ""
  local file, shown = doc:match("\n```\n%$ tracelens check (%S+)\n(.-)```\n")
  if not T.check(file ~= nil, "docs/check.md: an example block starting with '$ tracelens check FILE'") then return end
  local dir = shared .. "/traces/h100"
  if not T.file_exists(dir .. "/" .. file) then
    print("skip: docs/check.md's example: no " .. dir .. "/" .. file)
    return
  end
  local _, code, out = T.run(string.format("cd %s && %s check %s", T.q(dir), T.q(bin), T.q(file)))
  T.eq(code, 3, "docs/check.md's example: the trace warns (exit 3)")
  T.eq(shown, out, "docs/check.md's example block is the output of `tracelens check " .. file .. "`")
end
check_doc_example()

analyse("demo", root .. "/examples/demo_trace.json")
local traces = T.glob(shared .. "/traces/*/*.json.gz")
if #traces == 0 then
  print("skip: no shared traces at " .. shared .. "/traces (only the demo trace was checked)")
end
for _, t in ipairs(traces) do
  analyse((t:match("([^/]+/[^/]+)%.json%.gz$") or t):gsub("/", "_"), t)
end
T.finish()

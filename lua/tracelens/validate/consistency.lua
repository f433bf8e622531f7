-- tracelens.validate.consistency — the consistency level (Level 4, issue 11
-- "Invariants"): statements in the written report that cannot be true,
-- whatever the trace. It reads only the written files (analysis.md, the
-- findings files, category_data/kernel_fusion_metrics.json) and shares no
-- code with the modules that produced the numbers, so that a wrong number
-- cannot pass because its checker made the same mistake.
--
-- Owns the grammar of shares in the report's text (docs/validate.md,
-- "Level 4"), and these checks:
--   shares       a share above 100% of its whole ("N% of W", "<duration>
--                (N%)", a percentage column or a "… %" metric row);
--   sums         the Top Operations "% of …" column (the categories' shares
--                of compute time) summing above 100% plus rounding;
--   values       an interpreter value in text (`table: 0x…`, `nil`, `nan`,
--                `inf` …);
--   fusion       a GPU event claimed by two reported fusion candidates, or
--                reported candidates covering more kernel time than the
--                candidates' kernels take;
--   verdict      a "within target" verdict when the report's own Analysis
--                coverage line says less than half of GPU kernel time was
--                analysed.
local outdir = require "tracelens.validate.outdir"
local text = require "tracelens.validate.text"

local M = {}

-- Words that make "N% of W" an efficiency against a capability, not a share
-- of a whole (matched against the first words of W, lower case).
local NOT_A_WHOLE = { "peak", "roofline", "bandwidth", "tflops", "gflops", "flops", "tb/s", "gb/s",
  "achievable", "theoretical", "speed of light", "sol" }
-- Column headers with "%" that hold changes, not shares.
local CHANGE_HEADER = { "diff", "difference", "change", "delta", "δ", "Δ", "vs", "speedup", "ratio", "efficiency",
  "peak", "roofline" }
-- Durations a "(N%)" share may follow.
local DURATION = { ms = true, ["µs"] = true, us = true, s = true, ns = true }

local function num(v) return type(v) == "number" and v or tonumber(v) end

-- Whether s (lower case) holds one of words as whole words.
local function has_any(s, words)
  local padded = " " .. s:gsub("[^%w/\128-\255]", " ") .. " "
  for _, w in ipairs(words) do
    if padded:find(" " .. w .. " ", 1, true) then return true end
  end
  return false
end

-- The first few words of the whole after "N% of ", up to punctuation.
local function whole_words(s, at)
  local w = s:sub(at, at + 60)
  w = w:gsub("%.%s.*$", ""):gsub("%.$", "")
  w = w:match("^[^,;:|()]*") or ""
  local out, n = {}, 0
  for word in w:gmatch("%S+") do
    n = n + 1
    if n > 6 then break end
    out[#out + 1] = word
  end
  return table.concat(out, " ")
end

-- Text without what is not prose of the tool: data URIs (the embedded
-- chart) and, when strip_code, inline code spans (names from the trace).
local function scrub(s, strip_code)
  s = s:gsub("data:[%w/+.-]+;base64,[%w+/=]+", "data:…")
  if strip_code then s = s:gsub("`[^`\n]*`", "``") end
  return s
end

local function cells_of(line)
  local body = text.strip(line)
  if body:sub(1, 1) ~= "|" then return nil end
  body = body:gsub("<!%-%-.-%-%->", "")
  body = text.strip(body)
  if body:sub(-1) == "|" then body = body:sub(1, -2) end
  local cells = {}
  -- escaped pipes (\|) stay inside a cell: a cell is the text between two
  -- pipes that are not escaped (from the second byte: the first is a pipe)
  local start, i = 2, 2
  while true do
    local j = body:find("[\\|]", i)
    if not j then break end
    if body:byte(j) == 92 then -- a backslash: it escapes a pipe right after it
      i = body:byte(j + 1) == 124 and j + 2 or j + 1
    else
      cells[#cells + 1] = text.strip(body:sub(start, j - 1))
      start, i = j + 1, j + 1
    end
  end
  cells[#cells + 1] = text.strip(body:sub(start))
  return cells
end

local function is_separator(cells)
  for _, c in ipairs(cells) do
    if not c:match("^:?%-+:?$") then return false end
  end
  return #cells > 0
end

-- The tables of a text: {header = cells, rows = {{line =, cells =}...}, line =}.
local function tables_of(lines)
  local out, i = {}, 1
  while i <= #lines do
    local h = cells_of(lines[i])
    local sep = h and lines[i + 1] and cells_of(lines[i + 1])
    if h and sep and is_separator(sep) then
      local t = { header = h, rows = {}, line = i }
      local r = i + 2
      while lines[r] do
        local cells = cells_of(lines[r])
        if not cells then break end
        t.rows[#t.rows + 1] = { line = r, cells = cells }
        r = r + 1
      end
      out[#out + 1] = t
      i = r
    else
      i = i + 1
    end
  end
  return out
end

-- The unsigned percentage a cell starts with ("12.5%", "12.5% of …"), its
-- number of decimals; nil for a signed value or anything else.
local function cell_percent(cell)
  local num = cell:match("^(%d+%.?%d*)%s?%%")
  if not num then return nil end
  local dec = num:match("%.(%d*)$")
  return tonumber(num), dec and #dec or 0
end

local function fmt(x) return (string.format("%.4f", x):gsub("0+$", ""):gsub("%.$", "")) end

-- The unsigned number that ends at byte j of s (looked for in the 24 bytes
-- before it: every search here is linear in the line, whatever the text), and
-- where it starts; nil when there is none or it is signed.
local function number_before(s, j)
  local from = math.max(1, j - 23)
  local at, numtext = s:sub(from, j):match("()(%d+%.?%d*)$")
  if not at then return nil end
  local start = from + at - 1
  local before = start > 1 and s:sub(start - 1, start - 1) or ""
  if before:match("[%d%.+%-]") or s:sub(math.max(1, start - 2), start - 1) == "±" then return nil end
  return numtext, start
end

-- Shares in prose: "N% of W" and "<duration> (N%)".
local function prose_shares(rel, lines, msgs)
  for n, raw in ipairs(lines) do
    local line = scrub(raw, true)
    local pos = 1
    while true do
      local p = line:find("%", pos, true)
      if not p then break end
      pos = p + 1
      local numtext, start = number_before(line, line:sub(p - 1, p - 1) == " " and p - 2 or p - 1)
      local v = numtext and tonumber(numtext)
      if v and v > 100 then
        if line:sub(p + 1, p + 4) == " of " then
          local whole = whole_words(line, p + 5)
          if not has_any(whole:lower(), NOT_A_WHOLE) then
            msgs[#msgs + 1] = string.format("%s:%d: share above 100%% of its whole: \"%s%% of %s\"", rel, n, numtext,
              whole)
          end
        elseif line:sub(p + 1, p + 1) == ")" and line:sub(start - 1, start - 1) == "(" then
          local unit = line:sub(math.max(1, start - 12), start - 2):match("%d%s?(%S+)%s$")
          if unit and DURATION[unit] then
            msgs[#msgs + 1] = string.format("%s:%d: share above 100%% of its whole: \"%s (%s%%)\"", rel, n, unit,
              numtext)
          end
        end
      end
    end
  end
end

-- Shares in tables: a "%" column (not a change or an efficiency column) and
-- the rows of a metric table whose name ends in "%".
local function table_shares(rel, tables, msgs)
  for _, t in ipairs(tables) do
    for col, h in ipairs(t.header) do
      local lh = h:lower()
      if h:find("%", 1, true) and not has_any(lh, CHANGE_HEADER) then
        for _, row in ipairs(t.rows) do
          local v = cell_percent(row.cells[col] or "")
          if v and v > 100 then
            msgs[#msgs + 1] = string.format("%s:%d: share above 100%% in column \"%s\": %s%%", rel, row.line, h, fmt(v))
          end
        end
      end
    end
    for _, row in ipairs(t.rows) do
      local name = row.cells[1] or ""
      if name:match("%%$") and not has_any(name:lower(), CHANGE_HEADER) then
        for c = 2, #row.cells do
          local hc = (t.header[c] or ""):lower()
          local v = not has_any(hc, CHANGE_HEADER) and cell_percent(row.cells[c]) or nil
          if v and v > 100 then
            msgs[#msgs + 1] = string.format("%s:%d: share above 100%% in row \"%s\": %s%%", rel, row.line, name, fmt(v))
          end
        end
      end
    end
  end
end

-- The Top Operations table: each "% of …" column sums to at most 100% plus
-- half a unit of the last shown digit per row.
local function top_ops_sums(rel, lines, tables, msgs)
  local start
  for n, l in ipairs(lines) do
    if l:match("^###%s+Top Operations") then
      start = n
      break
    end
  end
  if not start then return end
  local stop = #lines + 1 -- the next heading ends the section
  for n = start + 1, #lines do
    if lines[n]:match("^#+%s") then
      stop = n
      break
    end
  end
  for _, t in ipairs(tables) do
    if t.line > start and t.line < stop then
      for col, h in ipairs(t.header) do
        if h:find("%", 1, true) and not has_any(h:lower(), CHANGE_HEADER) then
          local sum, slack, any = 0, 0, false
          for _, row in ipairs(t.rows) do
            local v, dec = cell_percent(row.cells[col] or "")
            if v then
              any = true
              sum = sum + v
              slack = slack + 0.5 * 10 ^ -dec
            end
          end
          if any and sum > 100 + slack + 1e-9 then
            msgs[#msgs + 1] = string.format("%s:%d: Top Operations shares in \"%s\" sum to %s%% (above 100%%)",
              rel, t.line, h, fmt(sum))
          end
        end
      end
      return
    end
  end
end

-- Values of the interpreter in text. `table: 0x…` and the like anywhere;
-- nil/nan/NaN/inf as whole words outside inline code and outside the
-- columns that hold names and arguments from the trace.
local TRACE_COLUMNS = { operation = true, args = true, ["args (t1)"] = true, ["kernel path"] = true,
  ["kernel name"] = true, kernel = true, ["kernel names"] = true, name = true }
local WORDS = { "nil", "nan", "NaN", "inf", "Inf", "NAN", "INF", "-nan", "-inf", "Infinity" }

local function word_at(s, w)
  local pos = 1
  while true do
    local a, b = s:find(w, pos, true)
    if not a then return false end
    local before, after = s:sub(a - 1, a - 1), s:sub(b + 1, b + 1)
    if (a == 1 or not before:match("[%w_]")) and not after:match("[%w_]") then return true end
    pos = b + 1
  end
end

local function interpreter_values(rel, lines, tables, msgs)
  local trace_cells = {} -- line -> {cell text...} to blank
  for _, t in ipairs(tables) do
    for col, h in ipairs(t.header) do
      if TRACE_COLUMNS[h:lower()] then
        for _, row in ipairs(t.rows) do
          trace_cells[row.line] = trace_cells[row.line] or {}
          table.insert(trace_cells[row.line], row.cells[col])
        end
      end
    end
  end
  for n, raw in ipairs(lines) do
    local line = scrub(raw, false)
    local q = 1
    while true do
      local a = line:find(": 0x", q, true)
      if not a then break end
      q = a + 1
      local kind = line:sub(math.max(1, a - 8), a - 1):match("(%a+)$")
      if kind == "table" or kind == "function" or kind == "userdata" or kind == "thread" then
        msgs[#msgs + 1] = string.format("%s:%d: interpreter value in text: \"%s: %s\"", rel, n, kind,
          line:sub(a + 2, a + 19):match("^0x%x+") or "0x")
        break
      end
    end
    -- "Infinity" is JavaScript's, not AMD's interconnect
    local prose = scrub(raw, true):gsub("Infinity Fabric", "")
    for _, c in ipairs(trace_cells[n] or {}) do
      if c ~= "" then prose = text.replace(prose, c, "") end
    end
    for _, w in ipairs(WORDS) do
      if word_at(prose, w) then
        msgs[#msgs + 1] = string.format("%s:%d: interpreter value in text: \"%s\"", rel, n, w)
        break
      end
    end
  end
end

-- The coverage the report states, a share in [0, 1], or nil without a line.
local function stated_coverage(s)
  local line = s:match("%*%*Analysis coverage%*%*:[^\n]*")
  if not line then return nil end
  local pct = line:match("covered (%d+%.?%d*)%% of")
  if pct then return tonumber(pct) / 100 end
  if line:find("covered none of", 1, true) or line:find("no GPU kernel time", 1, true) then return 0 end
  return nil
end

-- Without the report's coverage line (an older report, the reference's):
-- the coverage from category_manifest.json, as the line defines it — the
-- compute categories' gpu_kernel_time_ms less "other" and the categories
-- whose findings file says "Status: ERROR", over the larger of their sum and
-- the GPU's busy time (total_time_ms × computation_time_percent).
local function manifest_coverage(out)
  local m = outdir.load_json(text.join(out, "category_data", "category_manifest.json"))
  if type(m) ~= "table" or type(m.categories) ~= "table" then return nil end
  local sum, analysed = 0, 0
  for _, c in ipairs(m.categories) do
    if type(c) == "table" and c.tier ~= "system" then
      local t = num(c.gpu_kernel_time_ms) or 0
      sum = sum + t
      local f = text.read(text.join(out, "category_findings", tostring(c.name) .. "_findings.md"))
      if c.name ~= "other" and not (f and f:find("Status: ERROR", 1, true)) then analysed = analysed + t end
    end
  end
  local u = type(m.gpu_utilization) == "table" and m.gpu_utilization or {}
  local busy = (num(u.total_time_ms) or 0) * (num(u.computation_time_percent) or 0) / 100
  local whole = math.max(sum, busy)
  return whole > 0 and analysed / whole or 0
end

local function verdict(rel, s, msgs, fallback)
  local cov = stated_coverage(s)
  if cov == nil then cov = fallback end
  if cov == nil or cov >= 0.5 then return end
  local n = 0
  for _, l in ipairs(text.splitlines(s)) do
    n = n + 1
    if l:lower():find("within target", 1, true) then
      msgs[#msgs + 1] = string.format("%s:%d: \"within target\" verdict while the analysis covers %s%% of GPU "
        .. "kernel time (less than half)", rel, n, string.format("%.1f", cov * 100))
    end
  end
end

--- check_text(s, rel [, opts]) -> messages: the text checks of one file
--- (shares, interpreter values; with opts.report the Top Operations sums and
--- the verdict against the coverage line, else against opts.coverage, a
--- share in [0, 1] when known).
function M.check_text(s, rel, opts)
  local msgs = {}
  local lines = text.splitlines(s)
  local tables = tables_of(lines)
  prose_shares(rel, lines, msgs)
  table_shares(rel, tables, msgs)
  interpreter_values(rel, lines, tables, msgs)
  if opts and opts.report then
    top_ops_sums(rel, lines, tables, msgs)
    verdict(rel, s, msgs, opts.coverage)
  end
  return msgs
end

--- check_fusion(decoded kernel_fusion_metrics.json, rel) -> messages: no GPU
--- event uid in two reported estimates (`impact_estimates[].gpu_event_uids`,
--- when the file lists them), and the reported estimates' kernel time
--- (Σ time_ms) within the candidates' kernel time (`total_time_ms`, each GPU
--- event once) plus rounding.
function M.check_fusion(m, rel)
  local msgs = {}
  if type(m) ~= "table" or type(m.impact_estimates) ~= "table" then return msgs end
  local owner, sum, n = {}, 0, 0
  -- no uid listed twice (tl.uid_repeats, in C): no event can be claimed twice
  local lists = {}
  for _, e in ipairs(m.impact_estimates) do
    if type(e) == "table" then lists[#lists + 1] = type(e.gpu_event_uids) == "table" and e.gpu_event_uids or {} end
  end
  local _, rep
  if tl and tl.uid_repeats then _, rep = tl.uid_repeats(lists) end
  local none_twice = rep ~= nil and #rep == 0
  for i, e in ipairs(m.impact_estimates) do
    if type(e) == "table" then
      local name = tostring(e.operation or ("estimate " .. i))
      sum = sum + (num(e.time_ms) or 0)
      n = n + 1
      for _, u in ipairs((not none_twice and type(e.gpu_event_uids) == "table") and e.gpu_event_uids or {}) do
        local o = owner[u]
        if o and o ~= name then
          msgs[#msgs + 1] = string.format("%s: GPU event %s claimed by two fusion candidates: %s and %s", rel,
            tostring(math.type(u) == "float" and math.tointeger(u) or u), o, name)
        else
          owner[u] = name
        end
      end
    end
  end
  local total = num(m.total_time_ms)
  if total and n > 0 and sum > total + 0.0005 * (n + 1) + 1e-9 then
    msgs[#msgs + 1] = string.format("%s: the fusion candidates reported take %s ms of kernel time, more than the "
      .. "%s ms their kernels take (candidates counted twice)", rel, fmt(sum), fmt(total))
  end
  return msgs
end

--- validate(out) -> passed, messages: every check over an output directory.
function M.validate(out)
  local msgs = {}
  local function add(list)
    for _, v in ipairs(list) do msgs[#msgs + 1] = v end
  end
  local report = text.read(text.join(out, "analysis.md"))
  if report then
    local cov = not stated_coverage(report) and manifest_coverage(out) or nil
    add(M.check_text(report, "analysis.md", { report = true, coverage = cov }))
  end
  for _, subdir in ipairs({ "category_findings", "system_findings" }) do
    for _, f in ipairs(outdir.findings_files(out, subdir)) do
      local s = outdir.kind(f.path) == "file" and text.read(f.path)
      if s then add(M.check_text(s, subdir .. "/" .. f.name)) end
    end
  end
  local rel = "category_data/kernel_fusion_metrics.json"
  local kf = outdir.load_json(text.join(out, rel))
  if kf then
    -- the estimates' GPU events are written beside the metrics (they grow
    -- with the trace): read with cjson and joined to the estimates by order
    local side = text.read(text.join(out, "category_data/kernel_fusion_gpu_events.json"))
    local ok, ev = pcall(function() return side and require("cjson").decode(side) end)
    local list = ok and type(ev) == "table" and type(ev.estimates) == "table" and ev.estimates or {}
    for i, e in ipairs(type(kf.impact_estimates) == "table" and kf.impact_estimates or {}) do
      local s = list[i]
      if type(e) == "table" and type(s) == "table" and s.operation == e.operation then
        e.gpu_event_uids = s.gpu_event_uids
      end
    end
    add(M.check_fusion(kf, rel))
  end
  return #msgs == 0, msgs
end

--- The printout: "PASS: no inconsistent statement" or "FAIL:" and the messages.
function M.format(passed, msgs) return text.pass_fail("no inconsistent statement", passed, msgs) end

return M

-- tracelens.findings_doc — reads a findings file back into its parts, for
-- the report (agents-and-report.md §5.1: cards and Detailed Analysis blocks
-- are copied from the findings files).
--
-- parse(text) -> {
--   failed = true when the text holds the literal `Status: ERROR`,
--   cards  = {{p = N, prefix = "🔴 ", title = "...", body = {lines}}},  -- `### ...P<N>: title` under ## Recommendations
--   blocks = {{tier = "system", rank = N, title = "...", body = {lines}}} -- reasoning-candidate blocks under ## Detailed Analysis
-- }
-- Bodies exclude the heading line, leading/trailing blank lines, `---`
-- rules and `→ *See ...` links.
local M = {}

local CANDIDATE = "^<!%-%-%s*reasoning%-candidate%s+tier=(%w+)%s+rank=(%d+)%s*%-%->"

local function lines_of(text)
  local out = {}
  for line in (text .. "\n"):gmatch("(.-)\r?\n") do out[#out + 1] = line end
  return out
end
M.lines = lines_of

local function rstrip(s) return (s:gsub("%s+$", "")) end

local function trim_body(body)
  while #body > 0 and (rstrip(body[#body]) == "" or rstrip(body[#body]) == "---") do body[#body] = nil end
  while #body > 0 and rstrip(body[1]) == "" do table.remove(body, 1) end
  return body
end

local function find_line(lines, exact, from)
  for i = from or 1, #lines do
    if rstrip(lines[i]) == exact then return i end
  end
end

local function is_section(line) return line:sub(1, 3) == "## " end

local function card_heading(line)
  local prefix, p, title = line:match("^### (.-)P(%d+)%s*:%s*(.-)%s*$")
  if p then return prefix, tonumber(p), title end
end

local function cards_in(lines, first, last)
  local cards, cur = {}, nil
  for i = first, last do
    local line = lines[i]
    local prefix, p, title = card_heading(line)
    if p then
      cur = { p = p, prefix = prefix, title = title, body = {} }
      cards[#cards + 1] = cur
    elseif line:sub(1, 4) == "### " or is_section(line) or rstrip(line) == "---" then
      cur = nil
    elseif cur and not line:find("^→ %*See ") then
      cur.body[#cur.body + 1] = line
    end
  end
  for _, c in ipairs(cards) do trim_body(c.body) end
  return cards
end

-- A Detailed Analysis heading without its `<icon> P<N>:` prefix.
local function block_title(line)
  local t = line:gsub("^####%s+", "")
  local rest = t:match("^[^%w]*P%d+%s*:%s*(.*)$")
  return rest or t
end

local function blocks_in(lines, first, last)
  local blocks, cur = {}, nil
  for i = first, last do
    local line = lines[i]
    local tier, rank = line:match(CANDIDATE)
    if tier then
      cur = { tier = tier:lower(), rank = tonumber(rank), body = {} }
      blocks[#blocks + 1] = cur
    elseif cur and not cur.title and line:sub(1, 5) == "#### " then
      cur.title = block_title(rstrip(line))
    elseif line:sub(1, 4) == "### " or is_section(line) or line:find("^<a id=") then
      cur = nil
    elseif cur and cur.title then
      cur.body[#cur.body + 1] = line
    end
  end
  for _, b in ipairs(blocks) do trim_body(b.body) end
  return blocks
end

--- The parts of a findings file (see the header).
function M.parse(text)
  local doc = { failed = false, cards = {}, blocks = {} }
  if type(text) ~= "string" then return doc end
  doc.failed = text:find("Status: ERROR", 1, true) ~= nil
  local lines = lines_of(text)
  local rec = find_line(lines, "## Recommendations")
  local da = find_line(lines, "## Detailed Analysis", rec)
  if rec then doc.cards = cards_in(lines, rec + 1, (da or #lines + 1) - 1) end
  if da then
    local last = #lines
    for i = da + 1, #lines do
      if is_section(lines[i]) then
        last = i - 1
        break
      end
    end
    doc.blocks = blocks_in(lines, da + 1, last)
  end
  return doc
end

--- The card numbered p (else the p-th card).
function M.card(doc, p)
  for _, c in ipairs(doc.cards) do
    if c.p == p then return c end
  end
  return doc.cards[p]
end

--- The candidate block of a tier with rank n (else the n-th block of that tier).
function M.block(doc, tier, n)
  local of_tier = {}
  for _, b in ipairs(doc.blocks) do
    if b.tier == tier then
      if b.rank == n then return b end
      of_tier[#of_tier + 1] = b
    end
  end
  return of_tier[n]
end

return M

-- report_parse.lua — reads the structural facts of an analysis.md that the
-- golden tests compare with the reference reports: the Executive Summary
-- metrics, the Top Operations rows, and the p_item markers of the compute
-- and kernel-fusion sections.
local M = {}

-- The text of "## <title>" up to the next "\n## ".
function M.section(text, title)
  local s = text:find("## " .. title, 1, true)
  if not s then return "" end
  local e = text:find("\n## ", s + 3, true)
  return text:sub(s, e and e - 1 or #text)
end

local function cells(line)
  local out = {}
  local inner = line:match("^%s*|(.*)|%s*$") or line:match("^%s*|(.*)|") or ""
  for c in (inner .. "|"):gmatch("(.-)|") do out[#out + 1] = c:match("^%s*(.-)%s*$") end
  return out
end

-- {metric name -> value cell} of the Executive Summary table; with col = 3,
-- the third cell (trace 2 in a comparative report).
function M.exec_metrics(text, col)
  local out = {}
  for line in M.section(text, "Executive Summary"):gmatch("[^\n]+") do
    if line:match("^%s*|") and not line:match("^%s*|[%s%-:|]+|%s*$") then
      local c = cells(line)
      if c[1] and c[1] ~= "Metric" then out[c[1]] = c[col or 2] end
    end
  end
  return out
end

-- Marker attributes of every `<!-- impact-begin ... kind=K ... -->` in text.
function M.markers(text, kind)
  local out = {}
  for inner in text:gmatch("<!%-%-%s*impact%-begin%s+(.-)%-%->") do
    local attrs = {}
    for k, v in inner:gmatch("(%w+)=(%S+)") do attrs[k] = v end
    if attrs.kind == kind then out[#out + 1] = attrs end
  end
  return out
end

-- The data rows of the Top Operations block: {cells = {...}, low =, high =}.
function M.top_ops(text)
  local block = text:match("<!%-%-%s*impact%-begin[^>]-kind=top_ops[^>]-%-%->(.-)<!%-%-%s*impact%-end")
  local rows = {}
  if not block then return rows end
  local header = true
  for line in block:gmatch("[^\n]+") do
    if line:match("^%s*|") and not line:match("^%s*|[%s%-:|]+|%s*$") then
      if header then
        header = false
      else
        local low, high = line:match("top%-ops%-row%s+low=(%S+)%s+high=(%S+)")
        local body = line:gsub("<!%-%-.-%-%->", "")
        rows[#rows + 1] = { cells = cells(body), low = low, high = high }
      end
    end
  end
  return rows
end

-- The first number in a cell, and the unit of its last shown digit.
function M.number(cell)
  local s = tostring(cell or ""):match("[-+]?%d+%.?%d*")
  if not s then return nil end
  local dec = s:match("%.(%d+)$")
  return tonumber(s), dec and 10 ^ -#dec or 1
end

return M

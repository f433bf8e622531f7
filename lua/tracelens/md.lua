-- tracelens.md — text that comes from a trace or a user (op, kernel, module
-- and device names, argument types, rule names, error messages) written into
-- Markdown so that it reads as itself and cannot change the document's
-- structure: a name with `|` does not split a table row, a newline does not
-- end a card line or start a heading, a backtick does not end a code span,
-- `<script>` or `<!-- ... -->` is not raw HTML or a marker.
--
-- Owns the one escaping every Markdown writer uses (the analyzers, the
-- findings and system findings files, analysis.md) and the validators use to
-- compare a table cell with the value it shows (they compare in escaped form:
-- cell(value) == the cell's text). Text without special characters is left
-- unchanged, so the usual names read exactly as before:
--
--   text(s)     inline text (a sentence, a card line, a list item)
--   cell(s)     a table cell: text(s) with `|` escaped as `\|`
--   code(s)     a code span with a fence longer than any backtick run in s
--               (in_cell: pipes escaped too, as GFM tables require)
--   heading(s)  text(s) whose trailing `#` is not taken as a closing sequence
--   split_pipes(s)  a table row's text split at its unescaped pipes
local M = {}

-- One line: line breaks and tabs become spaces, other control characters
-- U+FFFD (a terminal showing the file runs no escape sequence).
local function one_line(s)
  s = tostring(s):gsub("[\r\n\t\v\f]", " ")
  return (s:gsub("[\0-\8\14-\31\127]", "\u{FFFD}"))
end
M.one_line = one_line

-- Whether the "<" at i of s could open raw HTML (a tag, a closing tag, a
-- comment, a declaration or a processing instruction). "<br>", the line
-- break the Args and kernel-name cells use between entries, is kept; so is
-- a C++ template argument such as "<4, float>" or "<c10::Half, float>".
local function html_start(s, i)
  local rest = s:sub(i + 1, i + 64)
  if rest:find("^[!?]") then return true end
  if rest:sub(1, 3) == "br>" then return false end
  local after = rest:match("^/?[A-Za-z][A-Za-z0-9%-]*(.?)")
  return after ~= nil and (after == "" or after:find("^[%s/>]") ~= nil)
end

--- Inline text: one line; backslashes and backticks escaped; a `<` that
--- could open HTML and an `&` that could start an entity written as
--- entities.
function M.text(s)
  s = one_line(s):gsub("\\", "\\\\"):gsub("`", "\\`"):gsub("&(#?%w+;)", "&amp;%1")
  return (s:gsub("()<", function(i) return html_start(s, i) and "&lt;" or "<" end))
end

--- A table cell: inline text with its pipes escaped.
function M.cell(s) return (M.text(s):gsub("|", "\\|")) end

--- A code span of s: a fence one backtick longer than the longest run in s,
--- a space inside it when s starts or ends with a backtick. in_cell: the
--- span sits in a table cell (pipes escaped, which GFM undoes inside spans).
function M.code(s, in_cell)
  s = one_line(s)
  local longest = 0
  for run in s:gmatch("`+") do longest = math.max(longest, #run) end
  local fence = string.rep("`", longest + 1)
  local pad = (s:find("^`") or s:find("`$") or s:find("^ .* $")) and " " or ""
  if in_cell then s = s:gsub("|", "\\|") end
  return fence .. pad .. s .. pad .. fence
end

--- Our own sentence in which `...` marks code (a command, an option): the
--- code spans kept as spans, the rest as inline text. Only for text tracelens
--- writes: a trace's text goes through M.text, which shows its backticks.
function M.prose(s)
  s = one_line(s)
  local out, at = {}, 1
  for i, code, j in s:gmatch("()`([^`]+)`()") do
    out[#out + 1] = M.text(s:sub(at, i - 1))
    out[#out + 1] = M.code(code)
    at = j
  end
  out[#out + 1] = M.text(s:sub(at))
  return table.concat(out)
end

--- Heading text: inline text; a trailing run of `#` is escaped so that it is
--- not read as the heading's closing sequence.
function M.heading(s) return (M.text(s):gsub("#(#*%s*)$", "\\#%1")) end

-- s with each `<` that could open raw HTML written as an entity.
local function no_html(s)
  return (s:gsub("()<", function(i) return html_start(s, i) and "&lt;" or "<" end))
end

--- Inline text written by someone else (a user rule's card title) placed in
--- a line of ours: its Markdown kept, but on one line and without raw HTML
--- (an unclosed comment would hide what follows).
function M.foreign_inline(s) return no_html(one_line(s)) end

--- A line of a card or Detailed Analysis block written by someone else (a
--- user rule's findings file) copied into a document: its inline Markdown,
--- entities, tables and `<br>` kept, but nothing that changes the structure
--- around it: on one line (a lone carriage return ends a line in Markdown),
--- no heading (`#`, or a setext underline of `=` or `-` under the line
--- before) and no thematic break, also inside a block quote or list item
--- (escaped with a backslash), and no raw HTML (a comment is a marker to
--- the checks, an `<a id=...>` a link target).
function M.foreign_line(s)
  s = no_html(one_line(s))
  local at = 1 -- after the container markers: block quotes, list items
  while true do
    local j = s:match("^[ \t]*>[ \t]?()", at) or s:match("^[ \t]*[-+*][ \t]+()", at)
      or s:match("^[ \t]*%d+[.)][ \t]+()", at)
    if not j or j == at then break end
    at = j
  end
  local rest = s:sub(at)
  local lead = rest:match("^[ \t]*()")
  if rest:find("^[ \t]*#") or rest:find("^[ \t]*[=%-*_][=%-*_ \t]*$") then
    rest = rest:sub(1, lead - 1) .. "\\" .. rest:sub(lead)
  end
  return s:sub(1, at - 1) .. rest
end

--- s split at the pipes that are not escaped (GFM: a `|` right after a
--- backslash belongs to the cell), nothing stripped: the cells of a table
--- row once its outer pipes are removed. The parts keep their escapes.
function M.split_pipes(s)
  local parts, start = {}, 1
  for i in s:gmatch("()|") do
    if i == 1 or s:sub(i - 1, i - 1) ~= "\\" then
      parts[#parts + 1] = s:sub(start, i - 1)
      start = i + 1
    end
  end
  parts[#parts + 1] = s:sub(start)
  return parts
end

return M

--- tracelens.kernel_name — short, readable display names for GPU kernel names.
-- Owns: the shortening of a (demangled) C++ kernel name for display — return
-- type dropped, template argument lists elided as `<…>`, parameter list
-- dropped, at most three `::` components — and the disambiguation of a set
-- of names that shorten to the same text (a word of its template arguments
-- that the others lack, else a numeric suffix). The full name stays wherever
-- the data keeps names (kernel_details_summary); only titles and text use
-- these.
-- Itanium-mangled names (`_ZN…`) are read as far as their nested name; names
-- that are not C++ (nvjet_…, triton_…, Tensile Cijk_…) are kept, cut at
-- MAX_CHARS characters.
local M = {}

-- The op names the perf report gives kernels with no CPU op of their own:
-- `launcher->kernel (Synthetic Op)` (perf-report §4: each kernel a graph
-- launch replays) and `kernel (no launching op)` (GPU work no launch links to).
M.SYNTHETIC_SUFFIX = " (Synthetic Op)"
M.UNLINKED_SUFFIX = " (no launching op)"

local function ends_with(name, suffix) return type(name) == "string" and name:sub(-#suffix) == suffix end
function M.is_synthetic(name) return ends_with(name, M.SYNTHETIC_SUFFIX) end
function M.is_unlinked(name) return ends_with(name, M.UNLINKED_SUFFIX) end

M.MAX_CHARS = 100 -- a display name is at most this many characters (UTF-8)
M.ELLIPSIS = "…"
local KEEP_COMPONENTS = 3 -- `ns::ns::name`

local OPEN = { ["<"] = ">", ["("] = ")", ["["] = "]", ["{"] = "}" }
local CLOSE = { [">"] = true, [")"] = true, ["]"] = true, ["}"] = true }

-- The text with every top-level bracketed part (a template argument list, a
-- parameter list, a lambda `{…}`) found by a depth count over the four
-- bracket kinds. Returns the list of pieces {kind = "text"|"<"|"("|"{"|"[",
-- s = the piece's text (for a bracket: its inside)}; an unclosed bracket's
-- piece runs to the end.
local function split_top(s)
  local pieces, depth, start, kind = {}, 0, 1, nil
  local i, n = 1, #s
  while i <= n do
    local c = s:sub(i, i)
    if OPEN[c] then
      if depth == 0 then
        if i > start then pieces[#pieces + 1] = { kind = "text", s = s:sub(start, i - 1) } end
        kind, start = c, i + 1
      end
      depth = depth + 1
    elseif CLOSE[c] and depth > 0 and not (c == ">" and s:sub(i - 1, i - 1) == "-") then
      depth = depth - 1
      if depth == 0 then
        pieces[#pieces + 1] = { kind = kind, s = s:sub(start, i - 1) }
        start = i + 1
      end
    end
    i = i + 1
  end
  if start <= n then
    pieces[#pieces + 1] = { kind = depth > 0 and kind or "text", s = s:sub(start) }
  end
  return pieces
end

-- The comma-separated top-level arguments of a bracket's inside.
local function top_args(inner)
  local args, depth, start = {}, 0, 1
  for i = 1, #inner do
    local c = inner:sub(i, i)
    if OPEN[c] then
      depth = depth + 1
    elseif CLOSE[c] and not (c == ">" and inner:sub(i - 1, i - 1) == "-") then
      depth = math.max(0, depth - 1)
    elseif c == "," and depth == 0 then
      args[#args + 1] = inner:sub(start, i - 1):match("^%s*(.-)%s*$")
      start = i + 1
    end
  end
  args[#args + 1] = inner:sub(start):match("^%s*(.-)%s*$")
  return args
end

-- The first `n` UTF-8 characters of s followed by the ellipsis, when longer.
local function cut(s, n)
  local len = utf8.len(s)
  if not len then -- not UTF-8: count bytes
    if #s <= n then return s end
    return s:sub(1, n - 1) .. M.ELLIPSIS
  end
  if len <= n then return s end
  return s:sub(1, utf8.offset(s, n) - 1) .. M.ELLIPSIS
end

-- The qualified name's last KEEP_COMPONENTS `::` components (anonymous
-- namespaces dropped). The name has no brackets left but `<…>`.
local function short_scope(q)
  q = q:gsub("%(anonymous namespace%)::", "")
  local parts = {}
  for p in (q .. "::"):gmatch("(.-)::") do parts[#parts + 1] = p end
  if #parts <= KEEP_COMPONENTS then return q end
  return table.concat(parts, "::", #parts - KEEP_COMPONENTS + 1)
end

-- An Itanium-mangled name (`_ZN7ck_tile6kentryILi1E…`, as some ROCm traces
-- keep them): its qualified name read from the <length><identifier> parts of
-- the nested name (`ck_tile::kentry<…>`), and the identifiers of the rest as
-- words (the template arguments'); nil when s is not one.
local function mangled(s)
  local i = s:match("^_ZN()") or s:match("^_Z()")
  if not i then return nil end
  local nested = s:sub(3, 3) == "N"
  local parts = {}
  while true do
    if s:sub(i, i) == "S" and s:sub(i + 1, i + 1) == "t" then i = i + 2 end -- `St`: std::
    local n, at = s:match("^(%d+)()", i)
    if not n then break end
    n = tonumber(n)
    if n == 0 or at + n - 1 > #s then break end
    parts[#parts + 1] = s:sub(at, at + n - 1)
    i = at + n
    if not nested then break end
  end
  if #parts == 0 then return nil end
  local q = table.concat(parts, "::")
  local args
  if s:sub(i, i) == "I" then
    q = q .. "<" .. M.ELLIPSIS .. ">"
    args = {}
    local j = i + 1
    while j <= #s do -- every <length><identifier> after it
      local n, at = s:match("^(%d+)()", j)
      if n and tonumber(n) > 0 and at + tonumber(n) - 1 <= #s then
        local id = s:sub(at, at + tonumber(n) - 1)
        if id:match("^[%a_][%w_]*$") then args[#args + 1] = id end
        j = at + tonumber(n)
      else
        j = j + 1
      end
    end
  end
  return q, args
end

-- {base = the short name without the elided template arguments' text,
--  args = the top-level template arguments of the name (full text) or nil}.
local function parse(name)
  local s = tostring(name or ""):gsub("%s+", " "):match("^%s*(.-)%s*$")
  local mq, margs = mangled(s)
  if mq then return { base = short_scope(mq), args = margs } end
  -- not a C++ name (nvjet_…, triton_…, `Memset (Device)`): kept as it is
  if not s:find("::", 1, true) and not s:find("<", 1, true) then return { base = s, plain = true } end
  -- `(anonymous namespace)` is a scope, not a parameter list
  s = s:gsub("%(anonymous namespace%)", "\1")
  local pieces = split_top(s)
  -- the name proper ends at the first top-level parameter list
  local out, args = {}, nil
  for _, p in ipairs(pieces) do
    if p.kind == "(" then break end
    if p.kind == "text" then
      out[#out + 1] = p.s
    elseif p.kind == "<" then
      out[#out + 1] = "<" .. M.ELLIPSIS .. ">"
      if not args then args = top_args(p.s) end
    else -- `{lambda…}` or `[…]` at the top level: kept elided
      out[#out + 1] = p.kind .. M.ELLIPSIS .. OPEN[p.kind]
    end
  end
  local q = table.concat(out):match("^%s*(.-)%s*$")
  -- the return type: everything before the last top-level space (a space
  -- inside `<…>` was elided with its list)
  q = q:match("^.* ([^ ]+)$") or q
  q = q:gsub("\1", "(anonymous namespace)")
  if q == "" then q = s:gsub("\1", "(anonymous namespace)") end
  return { base = short_scope(q), args = args }
end

--- The short display name of one kernel name (at most MAX_CHARS characters).
function M.short(name)
  return cut(parse(name).base, M.MAX_CHARS)
end

-- Words that tell nothing apart: C++ keywords and builtin types.
local PLAIN = {}
for w in ("lambda operator const unsigned signed int long short char bool float double void auto "
  .. "struct class enum"):gmatch("%S+") do PLAIN[w] = true end

-- The identifiers of a name's template arguments (of the whole name when it
-- has none), in order, once each; namespace qualifiers (`at::`) and PLAIN
-- words left out.
local function words(name, args)
  local text = args and table.concat(args, ", ") or name
  local list, seen = {}, {}
  for w, pos in text:gmatch("%f[%w_]([%a_][%w_]*)()") do -- not the `ul` of `2ul`
    if not PLAIN[w] and not seen[w] and text:sub(pos, pos + 1) ~= "::" then
      seen[w] = true
      list[#list + 1] = w
    end
  end
  return list
end

-- The `_`-separated parts of a plain name (`Cijk_Alik_…_MT32x32x256_…`), in
-- order, once each.
local function plain_words(name)
  local list, seen = {}, {}
  for w in tostring(name):gmatch("[^_%s]+") do
    if not seen[w] then
      seen[w] = true
      list[#list + 1] = w
    end
  end
  return list
end

--- Display names for a list of full kernel names, unique within the list:
--- returns a list in the same order. Names that shorten to the same text
--- get the first word of their template arguments that no other of that
--- text has, else the first that not all of them have
--- (`at::native::vectorized_elementwise_kernel<…silu_kernel…>`);
--- those it does not tell apart get ` #1`, ` #2`… in list order.
function M.unique_short(names)
  local parsed, groups, order = {}, {}, {}
  for i, n in ipairs(names) do
    parsed[i] = parse(n)
    local s = cut(parsed[i].base, M.MAX_CHARS)
    parsed[i].short = s
    if not groups[s] then
      groups[s] = {}
      order[#order + 1] = s
    end
    table.insert(groups[s], i)
  end
  local out, taken = {}, {}
  for _, s in ipairs(order) do taken[s] = true end
  for _, s in ipairs(order) do
    local g = groups[s]
    if #g == 1 then
      out[g[1]] = s
    else
      -- how many of the group have each word
      local count, lists = {}, {}
      for _, i in ipairs(g) do
        lists[i] = parsed[i].plain and plain_words(names[i]) or words(names[i], parsed[i].args)
        for _, w in ipairs(lists[i]) do count[w] = (count[w] or 0) + 1 end
      end
      local cand, uses = {}, {}
      local base = s:match("^(.*)<" .. M.ELLIPSIS .. ">$") -- nil: no template list last
      for _, i in ipairs(g) do
        -- the first word only it has, else the first that not all have
        local pick
        for _, w in ipairs((base or parsed[i].plain) and lists[i] or {}) do
          if count[w] == 1 then
            pick = w
            break
          end
          if not pick and count[w] < #g then pick = w end
        end
        local c
        if pick and base then
          c = base .. "<" .. M.ELLIPSIS .. pick .. M.ELLIPSIS .. ">"
        elseif pick and utf8.len(pick) and utf8.len(pick) < M.MAX_CHARS / 2 then
          -- a plain name cut short: its beginning, then the part that tells it apart
          c = cut(s:gsub(M.ELLIPSIS .. "$", ""), M.MAX_CHARS - utf8.len(pick) - 1) .. pick .. M.ELLIPSIS
        end
        if c and utf8.len(c) <= M.MAX_CHARS and not taken[c] then cand[i] = c end
        if cand[i] then uses[cand[i]] = (uses[cand[i]] or 0) + 1 end
      end
      local k = 0
      for _, i in ipairs(g) do
        if cand[i] and uses[cand[i]] == 1 then
          out[i] = cand[i]
        else
          local c
          repeat -- a suffix that no other name already has
            k = k + 1
            c = cut(s, M.MAX_CHARS - #tostring(k) - 2) .. " #" .. k
          until not taken[c]
          out[i] = c
        end
        taken[out[i]] = true
      end
    end
  end
  return out
end

--- The tile a GEMM or convolution kernel's name states, or nil:
--- {m, n, k (the K step), split (a split-K factor the name states, else nil),
--- text (the part of the name that says it)}. Forms: Tensile `MT256x128x64`
--- (with `GSU2`, its global split-U, or `PostGSU2`, the reduction kernel of
--- one), cuDNN / xmma `tilesize128x128x64`,
--- MIOpen `bt128x128x32`, cuBLAS / CUTLASS / nvjet `_128x64_64x3_` (tile,
--- then K step x stages) and `_128x64_ldg8_..._stages_64x3_`.
function M.tile(name)
  name = tostring(name or "")
  local function tile(text, m, n, k, split)
    return { m = tonumber(m), n = tonumber(n), k = tonumber(k), split = split, text = text }
  end
  local text, m, n, k = name:match("_(MT(%d+)x(%d+)x(%d+))")
  if text then
    -- (or a separate split-K reduction kernel beside it: `Cijk_B_PostGSU2`)
    local gsu = tonumber(name:match("_GSU(%d+)_") or name:match("_GSU(%d+)$") or name:match("PostGSU(%d+)") or "")
    return tile(text, m, n, k, gsu and gsu > 1 and gsu or nil)
  end
  text, m, n, k = name:match("(tilesize(%d+)x(%d+)x(%d+))")
  if text then return tile(text, m, n, k) end
  text, m, n, k = name:match("_(bt(%d+)x(%d+)x(%d+))")
  if text then return tile(text, m, n, k) end
  local a, b
  a, m, n, k, b = name:match("_()(%d+)x(%d+)_(%d+)x%d+()_")
  if a then return tile(name:sub(a, b - 1), m, n, k) end
  a, m, n, k, b = name:match("_()(%d+)x(%d+)_ldg%d+_.-_stages_(%d+)x%d+()")
  if a then return tile(name:sub(a, b - 1), m, n, k) end
  return nil
end

return M

-- the fuzz driver: runs in the sandboxed state; the input bytes choose
-- every call, its receiver and its arguments
local data, trace, trace2, sheets, trace_path = ...
local pos, n = 1, #data
local function byte()
  local b = data:byte(pos) or 0
  pos = pos + 1
  return b
end
local function pick(list) return list[byte() % #list + 1] end

local INTS = { 0, 1, -1, 2, 3, 4, 7, 31, 100, 255, 256, -256, 4096, 4097, 1000000, 1000001, 2147483647,
  -2147483648, 2147483648, 4294967296, 1 << 53, (1 << 53) + 1, 1 << 61, -(1 << 61), 1 << 62,
  math.maxinteger, math.mininteger, math.maxinteger - 1, math.mininteger + 1 }
local FLOATS = { 0.0, -0.0, 0.5, 1.0, 1.5, 2.0, 3.0, -1.0, -0.5, 0 / 0, 1 / 0, -1 / 0, 1e308, -1e308, 2 ^ 31,
  2 ^ 53, 2 ^ 61, 2 ^ 63, -2 ^ 63, 2 ^ 64, 1e-300, 4e-324, 1e12, 1e12 + 1, 1e15, 10.0, 100.0 }
local STRINGS = { "", "name", "cat", "kernel", "cpu_op", "cuda_runtime", "gpu_memcpy", "python_function", "ac2g",
  "ops_summary", "gpu_timeline", "unified_perf_summary", "kernel_summary", "GEMM", "coll_analysis",
  "short_kernel_histogram", "Count", "source", "trace1", "trace2", "a", "a+", "(a)(b)?", "(?<x>a)|b", "[", "(",
  "\\", "a\0b", "a\0c", "%d", "%s%s%s", string.rep("x", 300), string.rep("a-", 12) .. "b", "\xc3\xa9", "\xff\xfe",
  "H100", "MI300X", "none", "gpu_timeline", "ops_all", "roofline", "all", "i", "imsx", "q", "#ff0000", "#12345",
  "../../etc/passwd", "/etc/passwd", "/", "/nonexistent/x.json", trace_path, "aten::addmm", "aten::linear",
  "nccl:all_reduce", "aten::mm", "Memcpy HtoD (Pageable -> Device)", "uid", "ts", "dur", "args", "pid", "tid", "id",
  "ph", "t_end", "ts_ns", "dur_ns", "methods", "__index", "__gc", "__close", "__len", "merged_tree", "x" }
local OPTKEYS = { "platform", "arch", "write", "extension", "name", "xlsx", "csv", "background", "include_unlinked",
  "micro_idle_thresh_us", "kernel_summary", "short_kernel_study", "short_kernel_threshold_us",
  "short_kernel_histogram_bins", "group_by_num_kernels", "coll_analysis", "topk_ops", "topk_roofline_ops",
  "detect_recompute", "include_overlap_info", "include_call_stack", "enable_pseudo_ops", "compare", "threads",
  "progress", "cat", "pid", "tid", "prune_non_gpu", "names", "sheets", "quiet", "jobs", "timeout", "memory_mb",
  "title", "xlabel", "xmax", "segments", "legend_cols", "width_in", "height_in", "dpi", "label", "value", "color",
  "__order", "__empty_as_newline", "code", "script", "args" }
local TASK_CODE = { "return 1", "return ...", "local t = ... return #t", "local t = ... return t", "error('boom')",
  "return function() end", "local t = ... return t:timeline()", "return tl.parallel({{code = 'return 2'}})",
  "local t = ... return t:nrows()", "return {1, {2, {3}}}", "local a = ... return tostring(a)" }

-- the pool of values the calls work on (their results join it)
local pool = { trace, trace2, tl, tl.re, tl.chart }
local columns = {}
for _, name in ipairs(sheets.__order or {}) do
  pool[#pool + 1] = sheets[name]
  for _, c in ipairs(sheets[name]:columns()) do columns[#columns + 1] = c end
end
pool[#pool + 1] = sheets
pool[#pool + 1] = trace:node(1)
pool[#pool + 1] = tl.re.compile("(a+)(b)?")
local MAXPOOL = 64
local function add(v)
  if v == nil then return end
  if #pool < MAXPOOL then pool[#pool + 1] = v else pool[byte() % MAXPOOL + 1] = v end
end

local gen
local function int16() return ((byte() << 8) | byte()) - 32768 end
local function rand_string()
  local len = byte() % 40
  local s = data:sub(pos, pos + len - 1)
  pos = pos + len
  return s
end
local function lying_table(depth)
  local t = {}
  for i = 1, byte() % 5 do t[i] = gen(depth + 1) end
  local len = byte() % 2 == 0 and pick(INTS) or pick(FLOATS)
  local idx = byte() % 3
  return setmetatable(t, {
    __len = function() return len end,
    __index = idx == 0 and function() error("index refused") end or idx == 1 and function(_, k) return k end or nil,
    __tostring = byte() % 2 == 0 and function() error("tostring refused") end or nil,
  })
end
local FUNCS = {
  function() return true end,
  function() return false end,
  function() error("callback refused") end,
  function() collectgarbage() return true end,
  function(...) return ... end,
  function() return pool[1] end,
  function() local ok = pcall(function() local c <close> = pool[6] end) return ok end,
  function(row) return type(row) == "table" and next(row) ~= nil end,
}
local function opt_table(depth)
  local t = {}
  for _ = 1, byte() % 6 do t[pick(OPTKEYS)] = gen(depth + 1) end
  return t
end
function gen(depth)
  depth = depth or 0
  local k = byte() % 15
  if depth > 3 and k >= 8 then k = k % 8 end
  if k == 0 then return nil
  elseif k == 1 then return byte() % 2 == 0
  elseif k == 2 then return pick(INTS)
  elseif k == 3 then return int16()
  elseif k == 4 then return pick(FLOATS)
  elseif k == 5 then return pick(STRINGS)
  elseif k == 6 then return rand_string()
  elseif k == 7 then return pool[byte() % #pool + 1]
  elseif k == 8 then
    local t = {}
    for i = 1, byte() % 6 do t[i] = gen(depth + 1) end
    return t
  elseif k == 9 then return opt_table(depth)
  elseif k == 10 then return lying_table(depth)
  elseif k == 11 then return pick(FUNCS)
  elseif k == 12 then return #columns > 0 and pick(columns) or "name"
  elseif k == 13 then
    local t = {}
    for i = 1, byte() % 4 do t[i] = byte() % 2 == 0 and pick(INTS) or (#columns > 0 and pick(columns) or "") end
    return t
  else
    local t = { code = pick(TASK_CODE), args = { gen(depth + 1), gen(depth + 1) } }
    if byte() % 4 == 0 then t.script = pick(STRINGS) end
    return { t }
  end
end

-- argument kinds, so that most calls get past the type checks
local SIG_CODES = { "return 1", "return ...", "error('x')" }
local KIND = {}
function KIND.int()
  local k = byte() % 3
  if k == 0 then return pick(INTS) elseif k == 1 then return byte() % 40 - 5 else return pick(FLOATS) end
end
function KIND.str() return pick(STRINGS) end
function KIND.col() return #columns > 0 and pick(columns) or "name" end
function KIND.opt() return opt_table(0) end
function KIND.fn() return pick(FUNCS) end
function KIND.bool() return byte() % 2 == 0 end
function KIND.ints()
  local t = {}
  for i = 1, byte() % 8 do t[i] = KIND.int() end
  return byte() % 4 == 0 and setmetatable(t, { __len = function() return pick(INTS) end }) or t
end
function KIND.cols()
  local t = {}
  for i = 1, byte() % 5 do t[i] = byte() % 8 == 0 and gen(1) or KIND.col() end
  return byte() % 4 == 0 and setmetatable(t, { __len = function() return pick(INTS) end }) or t
end
function KIND.keys()
  local t = {}
  for i = 1, byte() % 4 do t[i] = { KIND.col(), KIND.bool() } end
  return t
end
function KIND.values()
  local k = byte() % 3
  if k == 0 then return gen(1) end
  local t = {}
  for i = 1, byte() % 40 do t[i] = byte() % 2 == 0 and KIND.int() or KIND.str() end
  return t
end
function KIND.filter()
  local t = {}
  for _ = 1, byte() % 3 do t[pick({ "cat", "name", "pid", "tid" })] = byte() % 2 == 0 and KIND.str() or KIND.int() end
  return t
end
function KIND.trace() return byte() % 2 == 0 and trace or trace2 end
function KIND.sheet() return sheets[pick(sheets.__order)] end
function KIND.path() return byte() % 3 == 0 and trace_path or pick(STRINGS) end
function KIND.subject()
  local k = byte() % 3
  if k == 0 then return rand_string() elseif k == 1 then return string.rep(pick(STRINGS), byte() % 50) end
  return pick(STRINGS)
end
function KIND.repl() return byte() % 2 == 0 and KIND.fn() or KIND.subject() end
function KIND.flags() return pick({ "", "i", "m", "s", "x", "imsx", "q" }) end
function KIND.tasks()
  local t = {}
  for i = 1, byte() % 3 + 1 do
    t[i] = { code = pick(SIG_CODES), args = { gen(2) } }
  end
  return t
end
function KIND.popt() return { jobs = byte() % 3, timeout = byte() % 2 == 0 and 2 or nil } end

local SIGS = {
  ["tracelens.trace"] = { timeline = { "opt" }, events = { "filter" }, node = { "int" }, info = {},
    table = { "str", "opt" }, report = { "opt" }, platform = { "opt" }, multi_kernel_stats = {},
    fusion_modules = {}, fusion_siblings = {}, fusion_diff_nodes = { "sheet", "int" } },
  ["tracelens.table"] = { columns = {}, nrows = {}, name = {}, row = { "int" }, rows = {}, get = { "int", "col" },
    column = { "col" }, filter = { "fn" }, sort = { "col", "bool" }, sortkeys = { "keys" },
    with_column = { "str", "values" }, take = { "ints" }, select = { "cols" }, write_csv = { "path" } },
  ["tracelens.event"] = { parent = {}, children = {}, kernels = {}, launcher = {}, fwd = {}, bwd = {},
    module_stack = {} },
  ["tracelens.regex"] = { search = { "subject", "int" }, match = { "subject", "int" }, fullmatch = { "subject" },
    test = { "subject" }, findall = { "subject" }, gsub = { "subject", "repl", "int" } },
}
local MODSIGS = { load = { "path", "opt" }, parallel = { "tasks", "popt" }, version = {}, now = {}, cores = {},
  base64 = { "subject" }, diff = { "trace", "trace", "opt" }, write_report = { "opt", "path" },
  compare = { "cols", "opt" } }
local RESIGS = { compile = { "subject", "flags" }, search = { "subject", "subject", "flags", "int" },
  test = { "subject", "subject", "flags" }, findall = { "subject", "subject", "flags" }, escape = { "subject" } }
local FIELDS = { "uid", "name", "cat", "ph", "ts", "dur", "t_end", "ts_ns", "dur_ns", "pid", "tid", "id", "args",
  "nope" }

local function keys_of(t)
  local k = {}
  for name in pairs(t) do k[#k + 1] = name end
  table.sort(k)
  return k
end
local METHOD_NAMES, MODULE, RE = {}, keys_of(MODSIGS), keys_of(RESIGS)
for mt, sigs in pairs(SIGS) do METHOD_NAMES[mt] = keys_of(sigs) end
local TYPES = keys_of(SIGS)

local function call(f, ...)
  local r = table.pack(pcall(f, ...))
  if r[1] then
    for i = 2, math.min(r.n, 4) do add(r[i]) end
  end
end

-- arguments: by the signature, or (one time in four) anything
local function args(sig)
  local a, na = {}, 0
  if sig and byte() % 4 ~= 0 then
    na = #sig
    for i = 1, na do a[i] = KIND[sig[i]]() end
    if byte() % 8 == 0 then na = byte() % (na + 1) end
  else
    na = byte() % 5
    for i = 1, na do a[i] = gen(0) end
  end
  return a, na
end

local steps = 0
while pos <= n and steps < 300 do
  steps = steps + 1
  local op = byte() % 10
  local obj = pool[byte() % #pool + 1]
  if op <= 4 then
    -- a method of the object (or of another type: wrong receivers raise)
    local mt = getmetatable(obj)
    if not SIGS[mt] then mt = pick(TYPES) end
    local name = pick(METHOD_NAMES[mt])
    local sig = SIGS[mt][name]
    if name == "sortkeys" then name = "sort" end
    local ok, f = pcall(function() return obj[name] end)
    if not ok or type(f) ~= "function" then
      local other = pool[byte() % #pool + 1]
      ok, f = pcall(function() return other[name] end)
    end
    if ok and type(f) == "function" then
      local a, na = args(sig)
      call(f, obj, table.unpack(a, 1, na))
    end
  elseif op == 5 then
    local name = pick(MODULE)
    local sig = MODSIGS[name]
    local a, na = args(sig)
    if name == "write_report" and byte() % 2 == 0 then a[1] = sheets end
    call(tl[name], table.unpack(a, 1, na))
  elseif op == 6 then
    local name = pick(RE)
    local a, na = args(RESIGS[name])
    call(tl.re[name], table.unpack(a, 1, na))
  elseif op == 7 then
    -- chart (refused in the sandbox), base64
    if byte() % 8 == 0 then
      local a, na = args({ "path", "opt" })
      call(tl.chart.stacked_bar, table.unpack(a, 1, na))
    else
      local a, na = args({ "subject" })
      call(tl.base64, table.unpack(a, 1, na))
    end
  elseif op == 8 then
    -- iterators and callables from the pool, fields, lengths, text
    local k = byte() % 6
    if type(obj) == "function" then
      local a, na = args()
      for _ = 1, byte() % 8 do call(obj, table.unpack(a, 1, na)) end
    elseif k == 0 then call(function() return obj[pick(FIELDS)] end)
    elseif k == 1 then call(function() return #obj end)
    elseif k == 2 then call(tostring, obj)
    elseif k == 3 then call(function() return obj == pool[byte() % #pool + 1] end)
    elseif k == 4 then call(function() return getmetatable(obj).__gc(obj) end)
    else call(function() return obj[gen(1)] end)
    end
  else
    if byte() % 2 == 0 then collectgarbage() else collectgarbage("step", byte()) end
  end
end

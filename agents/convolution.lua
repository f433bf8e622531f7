-- Convolution analyzer (categories conv_fwd, conv_bwd, convolution):
-- agents-and-report.md §3.12, rules in docs/analyzers.md.
--
-- Compute-bound groups: tile/occupancy tuning of the dominant kernel (a
-- depthwise convolution is called out first: one input channel per filter
-- leaves little work per output). Memory-bound groups: when ops named
-- transpose take more than 10% of convolution time, switch to channels-last;
-- otherwise tune memory access. When the NCHW<->NHWC conversion kernels
-- inside the convolutions take more than 10%, the finding's own kernels
-- decide: channels-last removes only its conversions (said, in ms and % of
-- end-to-end time), so the convolution kernel's remedy comes first unless the
-- conversions are most of the op's kernel time. The expected efficiency
-- depends on the filter size, and is stated only in the unit of the group's
-- bound (TFLOPS for compute-bound, bandwidth for memory-bound).
local json = require "tracelens.json"
local F = require "tracelens.findings"
local say = require "tracelens.prose"
local py = require "tracelens.py"
local kname = require "tracelens.kernel_name"
local categories = require "tracelens.categories"
local analysis = require "tracelens.analysis"

local ctx = ...

local TRANSPOSE_MODERATE, TRANSPOSE_HIGH = 10, 20 -- % of convolution time spent in layout transposes
local SHORT_REDUCTION, FEW_POSITIONS = 256, 1024 -- implicit-GEMM K and M below which the problem is thin
local NEAR_RIDGE = 0.5 -- a memory-bound convolution at this share of the GPU's ridge or more is tuned as a balanced one

-- Is the op a convolution's backward pass: aten::convolution_backward(_overrideable), whose Input Dims are
-- (grad_output, input, weight, bias_sizes, stride, padding, dilation, transposed, output_padding, groups,
-- output_mask), or another backward op?
local function is_backward(op) return op.name:lower():find("backward", 1, true) ~= nil end
local function aten_backward(op) return op.name:find("^aten::convolution_backward") ~= nil end

-- The Input Dims index of the convolution's input (the weight follows), or nil for a backward op of another
-- schema. aten::convolution's input leads; convolution_backward's grad_output does, and read as the input it
-- made the batch a channel count and the input's spatial size the filter.
local function input_index(op)
  if not is_backward(op) then return 1 end
  return aten_backward(op) and 2 or nil
end

-- Input (N, C, spatial...) and filter (C_out, C_in / groups, kernel...) shapes.
local function geometry(op)
  local dims, xi = say.input_dims(op), input_index(op)
  local x, w = dims and xi and dims[xi], dims and xi and dims[xi + 1]
  if type(x) ~= "table" or type(w) ~= "table" or #x < 3 or #w ~= #x then return nil end
  local g = { rank = #x - 2, batch = x[1], c_in = x[2], c_out = w[1], per_group = w[2], spatial = {}, kernel = {} }
  for i = 3, #x do g.spatial[#g.spatial + 1] = x[i]; g.kernel[#g.kernel + 1] = w[i] end
  return g
end

local function square(g)
  for _, d in ipairs(g.kernel) do
    if d ~= g.kernel[1] then return false end
  end
  return true
end

-- The implicit GEMM of a convolution: K = input channels per group × filter
-- area, M ≤ batch × input positions (the stride is not in the metrics).
local function implicit_gemm(g, batch)
  local k, m = g.per_group, batch
  for i = 1, #g.kernel do k, m = k * g.kernel[i], m * g.spatial[i] end
  return k, m
end

local function class(op)
  local name, kernel = op.name:lower(), tostring(op.kernel_name or ""):lower()
  -- a layout conversion kernel (MIOpen's batched_transpose_*, cuDNN's
  -- nchwToNhwc) is not a transposed convolution
  if categories.is_layout_kernel(name) then return "layout" end
  if name:find("transpose") or name:find("deconv") then return "transpose" end
  local g = geometry(op)
  if kernel:find("depthwise") or (g and g.per_group == 1 and g.c_in > 1) then return "depthwise" end
  if g then return g.rank .. "d" end
  return "other"
end

local CLASS_TEXT = { transpose = "transposed convolution (also a layout-mismatch signal)",
  layout = "layout conversion between NCHW and NHWC, run around convolutions whose kernels want the other layout",
  depthwise = "depthwise convolution", ["1d"] = "standard 1D convolution", ["2d"] = "standard 2D convolution",
  ["3d"] = "standard 3D convolution", other = "convolution of unrecognised shape" }

-- Expected efficiency by filter: {what, % of peak, unit, bound} or nil
-- (asymmetric or unknown filters); bound: the roofline side the figure is
-- of (nil: either).
local function expected(op)
  if class(op) == "depthwise" then return { "depthwise convolutions", 50, "of peak" } end
  local g = geometry(op)
  if not g then return nil end
  if not square(g) then return nil end
  local k = g.kernel[1]
  if k >= 5 then return { "large filters (5×5 and up)", 70, "of peak TFLOPS", "compute" } end
  if k == 3 then return { "3×3 filters", 70, "of peak TFLOPS", "compute" } end
  if k == 1 then return { "1×1 filters", 60, "of peak HBM bandwidth", "memory" } end
end

-- The share of convolution time in layout changes: ops named transpose, and
-- the NCHW<->NHWC conversion kernels run inside the convolutions.
local function transpose_pct(v) return (v.metrics.category_specific or {}).transpose_overhead_percent or 0 end
local function layout_pct(v) return (v.metrics.category_specific or {}).layout_kernel_percent or 0 end
local function layout_share(v) return math.max(transpose_pct(v), layout_pct(v)) end

-- The memory layout of the lead's 4-D input from its `Input Strides` (the ops table's): "NCHW" (contiguous
-- channels-first), "NHWC" (channels-last), or nil when the trace does not tell.
local function input_layout(op)
  local dims, strides = F.op_dims_strides(ctx, op)
  local xi = input_index(op)
  local d, st = dims and xi and dims[xi], strides and xi and strides[xi]
  if type(d) ~= "table" or type(st) ~= "table" or #d ~= 4 or #st ~= 4 then return nil end
  local n = {}
  for i = 1, 4 do n[i] = tonumber(d[i]) end
  local s = {}
  for i = 1, 4 do s[i] = tonumber(st[i]) end
  if not (n[1] and n[2] and n[3] and n[4] and s[1] and s[2] and s[3] and s[4]) then return nil end
  local c, h, w = n[2], n[3], n[4]
  if s[4] == 1 and s[3] == w and s[2] == h * w and s[1] == c * h * w then return "NCHW", st end
  if s[2] == 1 and s[4] == c and s[3] == w * c and s[1] == h * w * c then return "NHWC", st end
  return nil
end

-- A kernel's display name: a CUTLASS kernel's configuration
-- (`cutlass_tensorop_bf16_s16816fprop_optimized_bf16_256x64_32x4_nhwc_align8`,
-- which `Kernel<…>` would hide), else the short name.
local function kernel_label(name)
  return name:match("Kernel%d*<([%w_]+)>") or kname.short(name)
end

-- The µs of each kernel in an ops-table row's kernel_details_summary, in order: {{name, us}, ...}.
local function row_kernels(row)
  local names, seen = {}, {}
  analysis.kernel_time_us(row, function(n)
    if not seen[n] then seen[n], names[#names + 1] = true, n end
    return false
  end)
  local out = {}
  for i, n in ipairs(names) do
    out[i] = { name = n, us = analysis.kernel_time_us(row, function(x) return x == n end) }
  end
  return out
end

-- The end-to-end GPU time, ms: the metadata's, else from the op's time and share.
local function e2e_ms(v, op)
  local util = F.metadata(v.ctx).gpu_utilization
  local total = type(util) == "table" and tonumber(util.total_time_ms)
  if total and total > 0 then return total end
  local ms, pct = tonumber(op.time_ms), tonumber(op.percent_of_total)
  if ms and pct and pct > 0 then return ms / pct * 100 end
end

-- What the finding's own kernels are, from its members' ops-table rows
-- (kernel_details_summary): {total_us, layout_us (the NCHW<->NHWC
-- conversions, what channels-last removes), layout_e2e (their % of
-- end-to-end GPU time), main = {name, us} (the lead's largest other kernel,
-- memsets aside)}; nil when no member's row lists its kernels.
local function member_kernels(v)
  local k, found = { total_us = 0, layout_us = 0, layout_e2e = 0 }, false
  for i, r in ipairs(v.rows) do
    local row = F.op_row(v.ctx, r.op)
    local list = row and row_kernels(row) or {}
    local layout = 0
    for _, kn in ipairs(list) do
      found = true
      k.total_us = k.total_us + kn.us
      if categories.is_layout_kernel(kn.name) then
        layout = layout + kn.us
      elseif i == 1 and not kn.name:find("^Memset") and (not k.main or kn.us > k.main.us) then
        k.main = kn
      end
    end
    k.layout_us = k.layout_us + layout
    local total = e2e_ms(v, r.op)
    if total then k.layout_e2e = k.layout_e2e + layout / 1000 / total * 100 end
  end
  return found and k or nil
end

-- Does the lead's own kernel want tile tuning: compute-bound, or memory-bound
-- at half the ridge or more (not far from balanced: how the tiles fill the GPU
-- matters more than bandwidth; Falconsai's patch embedding, 258 of 295 FLOP/B)?
local function tiles_matter(v)
  if v.bound == "compute" then return true end
  local r = v.bound == "memory" and not v.comparative and F.ridge_ratio(v.lead)
  return r and r >= NEAR_RIDGE or false
end

-- The layout route: category-wide, the conversion kernels take more than 10%
-- of convolution time (ops named transpose do not: their remedy is the
-- reference's), and the finding's own kernels are known. Returns
-- member_kernels' table, or nil.
local function layout_route(v)
  if v.heuristic or transpose_pct(v) > TRANSPOSE_MODERATE or layout_pct(v) <= TRANSPOSE_MODERATE then return nil end
  return member_kernels(v)
end

-- The remedy of the convolution's own kernel (k.main, named with its share of the op's kernel time).
local function kernel_remedy(v, k)
  local target
  if k.main then
    target = say.code(kernel_label(k.main.name)) .. ", the convolution kernel of " .. say.code(v.lead.name) .. " ("
      .. F.num(F.round(k.main.us, 2)) .. " of its " .. F.num(F.round(k.total_us, 2)) .. " µs of kernel time),"
  end
  local r = tiles_matter(v) and say.remedy.tile_tuning(v, target) or say.remedy.memory_access(v, target)
  if v.library == "cuDNN" or v.library == "MIOpen" then
    -- the library picks the kernel (and, with conversions, a kernel for the other layout): its choice is the
    -- user's lever
    r.action = r.action .. " " .. v.library .. " chose that kernel"
      .. (k.layout_us > 0 and " and the layout conversions around it" or "") .. ": with "
      .. "`torch.backends.cudnn.benchmark = True` (unless the run sets it already) it times its algorithms for this "
      .. "shape and keeps the fastest."
  end
  return r
end

-- Channels-last with what it can recover: only the conversion kernels inside the finding's convolutions.
local function channels_last_bounded(v, k)
  local r = say.remedy.channels_last(v)
  r.action = "Switching the model to the channels-last memory layout (`model.to(memory_format=torch.channels_last)`) "
    .. "removes only the NCHW/NHWC conversion kernels inside " .. (#v.rows > 1 and "these convolutions" or "it")
    .. ": at most " .. F.num(F.round(k.layout_us / 1000, 3)) .. " ms, " .. F.num(F.round(k.layout_e2e, 2))
    .. "% of end-to-end GPU time, not the efficiency gap the impact_score measures."
  r.mechanism = r.mechanism .. " The convolution kernel itself runs as before, so the part of the gap that lies "
    .. "in it stays."
  return r
end

local rules = { missing = "No Convolution operations found in trace" }

function rules.noun(v)
  local c = class(v.lead)
  if c == "layout" then return "layout conversion" end
  if c == "depthwise" then return "depthwise convolution" end
  if c == "transpose" then return "transposed convolution" end
  return "convolution"
end

-- The filter size of a single-member group: "7×7".
function rules.qualifier(v)
  local g = geometry(v.lead)
  if g and #v.rows == 1 then return say.shape_text(g.kernel) end
end

function rules.describe(op)
  local g = geometry(op)
  if not g then return say.tensors_text(op) end
  local types = say.input_types(op)
  local t = types and types[input_index(op)]
  local dtype = type(t) == "string" and (py.torch_dtype(t) or py.torch_dtype("c10::" .. t))
  dtype = dtype and dtype:upper() or nil
  return say.shape_text(g.kernel) .. " filter, " .. g.c_in .. "→" .. g.c_out .. " channels, "
    .. say.shape_text(g.spatial) .. " input" .. (dtype and (", " .. dtype) or "")
end

function rules.identify(v)
  local c = class(v.lead)
  local out = { "The dominant operation is a " .. CLASS_TEXT[c] .. "." }
  if c == "depthwise" then
    out[2] = "Each filter sees one input channel, so every output has little work and a lower efficiency is expected."
  end
  local t = layout_share(v)
  if (v.bound == "memory" or layout_pct(v) > TRANSPOSE_MODERATE) and t > TRANSPOSE_MODERATE then
    out[#out + 1] = "Layout transposes take " .. F.num(t) .. "% of convolution time, "
      .. (t > TRANSPOSE_HIGH and "a high share" or "a moderate share") .. "."
  end
  return out
end

function rules.source_keys(v)
  local keys = { "operations[].Input Dims" }
  if v.bound == "memory" then
    keys[2] = "category_specific.transpose_overhead_percent"
    keys[3] = "category_specific.layout_kernel_percent"
  end
  return keys
end

function rules.reasoning(v)
  local out, e = {}, expected(v.lead)
  local eff = (v.lead.efficiency or {}).efficiency_percent
  if e and (e[4] == nil or e[4] == v.bound) and not v.heuristic and not v.comparative and F.present(eff) then
    out[1] = "Convolutions with " .. e[1] .. " usually reach more than " .. e[2] .. "% " .. e[3] .. ", and "
      .. say.code(v.lead.name) .. " reaches " .. F.num(eff) .. "%."
  end
  local g = geometry(v.lead)
  -- the forward pass's implicit GEMM: the backward pass's two (input and weight gradients) reduce over
  -- other dimensions
  if g and not v.heuristic and v.bound == "compute" and not is_backward(v.lead) then
    local k, m = implicit_gemm(g, g.batch)
    if k < SHORT_REDUCTION then
      out[#out + 1] = "As an implicit GEMM its reduction is only " .. k .. " long (" .. g.per_group .. " "
        .. say.plural(g.per_group, "input channel") .. " × " .. say.shape_text(g.kernel) .. " filter), so each output tile does little arithmetic."
    end
    if m < FEW_POSITIONS then
      out[#out + 1] = "It has at most " .. m .. " output positions (batch × spatial), too few rows of work to "
        .. "fill the compute units."
    end
  end
  if g and not square(g) then
    out[#out + 1] = "Its " .. say.shape_text(g.kernel) .. " filter is not square, so it maps less evenly onto "
      .. "convolution tiles than the common square filters."
  end
  local k = layout_route(v)
  if k and k.main and k.layout_us > 0 then
    -- where the finding's kernel time goes: what channels-last removes against the convolution kernel
    out[#out + 1] = "Of the " .. F.num(F.round(k.total_us, 2)) .. " µs its kernels run, " .. say.code(kernel_label(k.main.name))
      .. " takes " .. F.num(F.round(k.main.us, 2)) .. " µs and the NCHW/NHWC conversion kernels "
      .. F.num(F.round(k.layout_us, 2)) .. " µs (" .. F.num(F.round(k.layout_us / k.total_us * 100, 2)) .. "%)"
      .. (k.main.us > k.layout_us and ": the gap lies mostly in the convolution kernel, which a change of layout "
        .. "does not touch." or ".")
  end
  out[#out + 1] = F.occupancy_note(v)
  return out
end

-- Without a performance model: a layout conversion is removed by running
-- the model in the layout its convolutions want; anything else is profiled.
function rules.advice_unmodeled(v)
  if class(v.lead) == "layout" then return { say.remedy.channels_last(v) } end
  return { say.remedy.profile_unmodeled(v) }
end

function rules.advice(v)
  local k = layout_route(v)
  if k then
    -- the conversion kernels are part of the finding's own time: channels-last recovers them and no more,
    -- so it leads only when they are most of that time, and goes when the finding has none
    if k.layout_us <= 0 then return { kernel_remedy(v, k) } end
    if k.layout_us * 2 >= k.total_us then return { channels_last_bounded(v, k), kernel_remedy(v, k) } end
    return { kernel_remedy(v, k), channels_last_bounded(v, k) }
  end
  if v.bound == "compute" then
    -- the conversion kernels run beside the convolution's own kernel: a
    -- channels-last model drops them whatever bounds that kernel
    if layout_pct(v) > TRANSPOSE_MODERATE then return { say.remedy.tile_tuning(v), say.remedy.channels_last(v) } end
    return { say.remedy.tile_tuning(v) }
  end
  if layout_share(v) > TRANSPOSE_MODERATE then return { say.remedy.channels_last(v) } end
  return { say.remedy.memory_access(v) }
end

-- A patch embedding: stride equal to the filter, no padding or dilation,
-- one group, not transposed (Concrete Inputs: stride, padding, dilation,
-- transposed, output padding, groups). Each output position reads its own
-- patch, so the convolution is one matrix product of the patches by the
-- flattened filters: {m, k, n, batch, kernel}, or nil.
local function patch_gemm(op)
  if is_backward(op) then return nil end -- its Concrete Inputs are laid out otherwise
  local g = geometry(op)
  local row = F.op_row(ctx, op)
  local ci = row and py.literal(tostring(row["Concrete Inputs"] or ""))
  if not g or type(ci) ~= "table" or g.per_group ~= g.c_in then return nil end
  local stride, pad, dil = py.literal(tostring(ci[4] or "")), py.literal(tostring(ci[5] or "")),
    py.literal(tostring(ci[6] or ""))
  if type(stride) ~= "table" or type(pad) ~= "table" or type(dil) ~= "table" or #stride ~= g.rank then return nil end
  if tostring(ci[7]) ~= "False" or tostring(ci[9]) ~= "1" then return nil end
  local batch = (say.input_dims(op) or {})[1]
  batch = type(batch) == "table" and tonumber(batch[1]) or nil
  if not batch then return nil end
  local m, k = batch, g.c_in
  for i = 1, g.rank do
    if tonumber(stride[i]) ~= g.kernel[i] or tonumber(pad[i]) ~= 0 or tonumber(dil[i]) ~= 1 then return nil end
    m, k = m * (g.spatial[i] // g.kernel[i]), k * g.kernel[i]
  end
  return { m = m, k = k, n = g.c_out, kernel = g.kernel }
end

local function patch_note(op)
  local p = patch_gemm(op)
  if not p then return nil end
  local kdims = {}
  for i, d in ipairs(p.kernel) do kdims[i] = tostring(math.tointeger(d) or d) end
  local per_call = say.per_call_us(op)
  return string.format("%s has a stride equal to its %s filter and no padding or dilation: a patch embedding, one "
    .. "matrix product of the %d x %d patches by the %d x %d flattened filters (%.2f GFLOP). Written as a GEMM "
    .. "(the input reshaped into patches, then `torch.nn.functional.linear` with the weight flattened to %d x %d) "
    .. "it runs on the GEMM library's kernels instead of a convolution kernel%s.", say.code(op.name),
    table.concat(kdims, "x"), p.m, p.k, p.k, p.n, 2 * p.m * p.k * p.n / 1e9, p.n, p.k,
    per_call and string.format("; time it against this convolution's %.1f µs per call", per_call) or "")
end

-- Without Input Strides, the layout the convolution kernel's name states
-- (MIOpen's igemm_fwd_gtcx_nhwc_...: the data it computes on, which is the
-- input's unless conversion kernels run beside it), as a clause, or nil.
local function kernel_names(op)
  local names = require("tracelens.analysis").kernel_names(op.kernel_details_summary)
  if #names == 0 then
    for part in (tostring(op.kernel_name or "") .. "<br>"):gmatch("(.-)<br>") do
      names[#names + 1] = (part:gsub("^Kernel %d+: ", ""))
    end
  end
  return names
end

local function kernel_layout_text(op)
  for _, name in ipairs(kernel_names(op)) do
    local l = name:lower()
    if not categories.is_layout_kernel(l) then
      local nhwc, nchw = l:find("nhwc", 1, true), l:find("nchw", 1, true)
      if nhwc and not nchw then
        return "The trace records no Input Strides for " .. say.code(op.name) .. ", but its kernel's name says it "
          .. "computes on channels-last (NHWC) data (" .. say.code(kname.short(name)) .. ")"
      elseif nchw and not nhwc then
        return "The trace records no Input Strides for " .. say.code(op.name) .. ", but its kernel's name says it "
          .. "computes on channels-first (NCHW) data (" .. say.code(kname.short(name)) .. ")"
      end
    end
  end
  return nil
end

function rules.notes(v)
  if v.heuristic then return { F.FALLBACK.root_cause } end
  local notes = {}
  local route = layout_route(v)
  if v.bound ~= "memory" or (route and route.main and tiles_matter(v)) then
    local t = kname.tile(v.lead.kernel_name)
    notes[1] = t and say.tile_note(t) or ("The trace does not show the kernel's tile size; a kernel profiler "
      .. "(Nsight Compute, rocprofv3) shows it, and whether another tile shape would fill more compute units.")
  end
  local layout, st = input_layout(v.lead)
  local parts = {}
  for i, x in ipairs(st or {}) do parts[i] = tostring(math.tointeger(tonumber(x)) or x) end
  notes[#notes + 1] = (layout and (say.code(v.lead.name) .. "'s input is " .. (layout == "NCHW"
    and "channels-first (NCHW" or "channels-last (NHWC") .. ": Input Strides (" .. table.concat(parts, ", ") .. "))")
    or kernel_layout_text(v.lead) or "The trace does not show this convolution's memory layout")
    .. "; across all convolutions, NCHW/NHWC "
    .. "conversion kernels inside them take " .. F.num(layout_pct(v)) .. "% of convolution time and ops named "
    .. "transpose " .. F.num(transpose_pct(v)) .. "%."
  notes[#notes + 1] = patch_note(v.lead)
  return notes
end

function rules.summary(metrics)
  local cs = metrics.category_specific or {}
  local t = cs.transpose_overhead_percent or 0
  local band = t > TRANSPOSE_HIGH and "high" or (t > TRANSPOSE_MODERATE and "moderate" or "acceptable")
  local out = { "Layout transposes: " .. F.num(cs.transpose_count) .. " signatures, " .. F.num(cs.transpose_time_ms)
    .. " ms, " .. F.num(cs.transpose_overhead_percent) .. "% of convolution time (" .. band .. ")." }
  local l = cs.layout_kernel_percent or 0
  if l > 0 then
    out[2] = "Layout conversion kernels inside the convolutions (NCHW/NHWC): " .. F.num(cs.layout_kernel_time_ms)
      .. " ms, " .. F.num(l) .. "% of convolution time ("
      .. (l > TRANSPOSE_HIGH and "high" or (l > TRANSPOSE_MODERATE and "moderate" or "acceptable")) .. ")."
  end
  return out
end

local metrics = F.analyze(ctx)
return { metrics = json.encode(metrics), findings = F.render(ctx, metrics, rules) }

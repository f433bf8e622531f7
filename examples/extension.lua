-- extension.lua — an example extension module for `tracelens report`
-- (`--extension-file examples/extension.lua`, or trace:report{extension = ...}).
-- The module returns a table with any of three hooks; see
-- docs/report-columns.md "Extension modules" for the contract.
local M = {}

-- 1. Exact-name category overrides (the reference's op_category_extension).
M.op_category = {
  ["aten::gelu_backward"] = "activation",
}

-- 2. Extra perf models (the reference's perf_model_extension). aten::gelu has
-- no built-in model: this one counts one FLOP per output element and reads
-- the input and writes the output once.
local BPE = { ["c10::BFloat16"] = 2, ["c10::Half"] = 2, ["float"] = 4, ["double"] = 8 }
local PREC = { ["c10::BFloat16"] = "bf16", ["c10::Half"] = "fp16", ["float"] = "fp32", ["double"] = "fp64" }

M.perf_models = {
  ["aten::gelu"] = {
    category = "elementwise",
    sheet = "UnaryElementwise",
    maf = "vector",
    fn = function(ev)
      local shape = ev.input_dims[1]
      local n = 1
      for _, d in ipairs(shape) do n = n * d end
      local dtype = ev.input_type[1]
      local bpe = BPE[dtype]
      return {
        flops = n,
        bytes = bpe and 2 * n * bpe or nil, -- nil: unknown bytes (no TB/s column value)
        precision = PREC[dtype],
        params = { { "op_shape", shape }, { "dtype_in_out", { dtype, dtype } } },
      }
    end,
  },
}

-- 3. Extra sheets (the reference's get_additional_dataframes_extension),
-- written after every other sheet, in name order. `sheets` holds the
-- report's own sheets (its options, this module's categories and models).
function M.additional_sheets(_, sheets)
  local ops = sheets.ops_summary
  local rows = {}
  for i = 1, math.min(5, ops:nrows()) do
    local r = ops:row(i)
    rows[#rows + 1] = { r.name, r["total_direct_kernel_time_ms"] }
  end
  return { top_ops = { columns = { "name", "kernel_time_ms" }, rows = rows } }
end

return M

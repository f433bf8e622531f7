-- tracelens.validate.files — whether every findings and metrics file of an
-- output directory belongs to the analysis its metadata names (a check of
-- `tracelens validate DIR`, not of the reference's levels).
--
-- The orchestrator writes metadata/tracelens_run.json: the trace, the run's
-- id and every findings (category_findings/, system_findings/) and metrics
-- (category_data/*_metrics.json) file it wrote. A file that is not listed
-- there (left by another analysis, or added by hand), a listed file that is
-- missing, and a run record that names another trace than the manifest are
-- errors. A directory without a run record (the reference's, or an older
-- tracelens') is checked against its manifest instead: each findings file
-- must be a category of category_manifest.json, each metrics file a category
-- or one of the system analyses.
local json = require "tracelens.json"
local outdir = require "tracelens.validate.outdir"
local text = require "tracelens.validate.text"

local M = {}

M.RUN_FILE = "metadata/tracelens_run.json"

local KINDS = { { dir = "category_findings", suffix = "_findings.md" }, { dir = "system_findings", suffix = "_findings.md" },
  { dir = "category_data", suffix = "_metrics.json" } }
-- Metrics the orchestrator writes whether or not the manifest lists them.
local SYSTEM_METRICS = { cpu_idle = true, multi_kernel = true, kernel_fusion = true }

-- Every findings and metrics file under out: {{rel, stem, metrics = bool}}.
local function present_files(out)
  local list = {}
  for _, k in ipairs(KINDS) do
    for _, name in ipairs(outdir.listdir(text.join(out, k.dir)) or {}) do
      if text.endswith(name, k.suffix) then
        list[#list + 1] = { rel = k.dir .. "/" .. name, stem = name:sub(1, #name - #k.suffix),
          metrics = k.dir == "category_data" }
      end
    end
  end
  return list
end

local function with_record(out, record, errors)
  local listed = {}
  for _, rel in ipairs(outdir.list(record, "files")) do
    if type(rel) == "string" then listed[rel] = true end
  end
  local manifest = outdir.load_json(outdir.manifest_path(out))
  local a, b = outdir.field(record, "trace_path"), outdir.field(manifest, "trace_path")
  if manifest and a ~= b then
    errors[#errors + 1] = string.format("%s names trace %s but category_data/category_manifest.json names %s",
      M.RUN_FILE, text.str(a), text.str(b))
  end
  for _, f in ipairs(present_files(out)) do
    if not listed[f.rel] then
      errors[#errors + 1] = string.format("%s: not written by the analysis of %s (not in %s)", f.rel, text.str(a),
        M.RUN_FILE)
    end
  end
  local names = {}
  for rel in pairs(listed) do names[#names + 1] = rel end
  table.sort(names)
  for _, rel in ipairs(names) do
    if outdir.kind(text.join(out, rel)) ~= "file" then
      errors[#errors + 1] = string.format("%s: listed in %s but missing", rel, M.RUN_FILE)
    end
  end
end

local function with_manifest(out, manifest, errors)
  local categories = {}
  for _, c in ipairs(outdir.list(manifest, "categories")) do
    local name = outdir.field(c, "name")
    if type(name) == "string" then categories[name] = true end
  end
  for _, f in ipairs(present_files(out)) do
    if not categories[f.stem] and not (f.metrics and SYSTEM_METRICS[f.stem]) then
      errors[#errors + 1] = string.format("%s: %s is not a category of category_data/category_manifest.json", f.rel,
        f.stem)
    end
  end
end

--- The errors of out's files against its run record (or its manifest when
--- there is no run record); {} when they all belong. A run record that
--- cannot be read is an error; without record and manifest nothing is
--- checked here (Levels 2 and 3 report the missing manifest).
function M.check(out)
  local errors = {}
  local path = text.join(out, M.RUN_FILE)
  if outdir.kind(path) then
    local record, err = outdir.load_json(path)
    if not json.is_obj(record) then
      errors[#errors + 1] = M.RUN_FILE .. ": " .. tostring(err or "not a JSON object")
      return errors
    end
    with_record(out, record, errors)
  else
    local manifest = outdir.load_json(outdir.manifest_path(out))
    if json.is_obj(manifest) then with_manifest(out, manifest, errors) end
  end
  return errors
end

return M

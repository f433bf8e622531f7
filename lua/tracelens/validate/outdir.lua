-- tracelens.validate.outdir — where the validators find things in an
-- analysis output directory, and how they read them.
--
-- Owns: JSON loading that answers nil instead of raising, the comparison
-- scope a check applies ([FIX, Q4]: the given scope, else the manifest's
-- comparison_scope, else "standalone"), the metrics file that belongs to a
-- findings file, and the findings files of a directory (sorted by name,
-- [DROP, Q16]).
local tl = require "tracelens"
local json = require "tracelens.json"
local text = require "tracelens.validate.text"

local M = {}

local FINDINGS_SUFFIX = "_findings.md"

local function fs()
  return tl.fs or error("tracelens.validate needs tl.fs (a full Lua state: tracelens run or the REPL)", 0)
end

--- "file", "directory", "other", or nil when path does not exist.
function M.kind(path) return fs().kind(path) end

--- The sorted names in a directory, or nil when it cannot be listed.
function M.listdir(path) return (fs().listdir(path)) end

--- The decoded JSON in path; nil, reason (without the path) when it is
--- missing or invalid (the reference's `except (OSError, JSONDecodeError)`).
function M.load_json(path)
  local body, err = text.read(path)
  if not body then
    err = tostring(err)
    if text.startswith(err, path .. ": ") then err = err:sub(#path + 3) end
    return nil, err
  end
  local ok, value = pcall(json.decode, body)
  if not ok then return nil, tostring(value) end
  return value
end

--- A JSON object field (nil when the value is not an object or lacks it;
--- JSON null reads as nil, as Python's None).
function M.field(obj, key)
  if type(obj) ~= "table" or json.is_arr(obj) then return nil end
  local v = obj[key]
  if json.is_null(v) then return nil end
  return v
end

--- The elements of a JSON array field ({} when absent, null or not an array).
function M.list(obj, key)
  local v = M.field(obj, key)
  if type(v) == "table" and not json.is_obj(v) then return v end
  return {}
end

function M.manifest_path(out) return text.join(out, "category_data", "category_manifest.json") end

--- The comparison scope to apply: scope when given, else the manifest's
--- comparison_scope, else "standalone".
function M.resolve_scope(out, scope)
  if scope ~= nil then return scope end
  local manifest = M.load_json(M.manifest_path(out))
  local s = M.field(manifest, "comparison_scope")
  if type(s) == "string" then return s end
  return "standalone"
end

--- The category a findings file name belongs to: "gemm_findings.md" -> "gemm".
function M.stem(name) return text.replace(name, FINDINGS_SUFFIX, "") end

--- The output directory of a findings file (the parent of its directory).
function M.out_of_findings(path) return text.dirname(text.dirname(path)) end

--- category_data/<stem>_metrics.json next to a findings file.
function M.metrics_for_findings(path)
  return text.join(M.out_of_findings(path), "category_data", M.stem(text.basename(path)) .. "_metrics.json")
end

--- The findings files in out/subdir, sorted by name: an array of
--- {name, stem, path}; empty when the directory does not exist.
function M.findings_files(out, subdir)
  local dir = text.join(out, subdir)
  local out_files = {}
  for _, name in ipairs(M.listdir(dir) or {}) do
    if text.endswith(name, FINDINGS_SUFFIX) then
      out_files[#out_files + 1] = { name = name, stem = M.stem(name), path = text.join(dir, name) }
    end
  end
  return out_files
end

return M

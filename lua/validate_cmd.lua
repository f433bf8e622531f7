-- validate_cmd.lua — `tracelens validate`: the command line over
-- tracelens.validate (docs/validate.md). Returns the exit status: 0 valid,
-- 1 invalid or unreadable, 2 usage error.
local validate = require "tracelens.validate"
local outdir = require "tracelens.validate.outdir"
local text = require "tracelens.validate.text"

local USAGE = [[
usage: tracelens validate DIR [--scope standalone|comparative] [--level 1|2|3|4]
       tracelens validate [DIR] --findings FILE --tier compute|system|fusion [--scope S]

Checks of an analysis output directory: the reference's three structural
validation levels and a consistency level:
  Level 1  each findings file: DIR/category_findings/*_findings.md (tier
           compute) and DIR/system_findings/*_findings.md (tier system,
           kernel_fusion_findings.md tier fusion)
  Level 2  manifest, findings and priority_data.json cross-checks (warnings)
  Level 3  DIR/analysis.md
  Level 4  consistency of the written files: no share above 100% of its
           whole, Top Operations shares summing to at most 100%, no
           interpreter value (table: 0x…, nil, nan, inf) in text, no GPU
           event in two fusion candidates, no "within target" verdict on
           less than half of GPU kernel time

options:
  --scope S        standalone or comparative (default: the manifest's
                   comparison_scope, else standalone)
  --level N        run only level 1, 2, 3 or 4
  --findings FILE  check only FILE (Level 1, printed as the reference prints
                   it); a relative FILE is looked up in DIR first
  --tier T         the tier of FILE: compute, system or fusion
  -h, --help       this help

Exit status: 0 valid (Levels 3 and 4 and every Level 1 file pass; Level 2
only warns), 1 invalid or unreadable, 2 usage error.
]]

local CHOICES = {
  scope = { standalone = true, comparative = true },
  tier = { compute = true, system = true, fusion = true },
  level = { ["1"] = true, ["2"] = true, ["3"] = true, ["4"] = true },
}
local CHOICE_TEXT = { scope = "standalone or comparative", tier = "compute, system or fusion", level = "1, 2, 3 or 4" }

-- One line: the problem and where the usage is.
local function usage_error(msg)
  io.stderr:write("tracelens: validate: ", msg, " (see `tracelens validate --help`)\n")
  return 2
end

-- Options and the directory from argv; nil, message on a usage error.
local function parse(argv)
  local o = {}
  local i = 1
  while i <= #argv do
    local a = argv[i]
    local name, value = a:match("^%-%-(%w+)=(.*)$")
    name = name or a:match("^%-%-(%w+)$")
    if a == "-h" or a == "--help" then
      o.help = true
    elseif name == "scope" or name == "tier" or name == "level" or name == "findings" then
      if not value then
        i = i + 1
        value = argv[i]
      end
      if not value then return nil, "--" .. name .. " needs a value" end
      if CHOICES[name] and not CHOICES[name][value] then
        return nil, "--" .. name .. " must be " .. CHOICE_TEXT[name]
      end
      o[name] = value
    elseif a:sub(1, 1) == "-" and a ~= "-" then
      return nil, "unknown option '" .. a .. "'"
    elseif o.dir then
      return nil, "more than one directory given"
    else
      o.dir = a
    end
    i = i + 1
  end
  if o.help then return o end
  if o.tier and not o.findings then return nil, "--tier needs --findings FILE" end
  if o.findings then
    if not o.tier then return nil, "--findings needs --tier compute|system|fusion" end
    if o.level and o.level ~= "1" then return nil, "--findings runs Level 1 only" end
  elseif not o.dir then
    return nil, "no output directory given"
  end
  return o
end

-- FILE as given, or DIR/FILE when FILE is relative and found there.
local function findings_path(o)
  local f = o.findings
  if o.dir and f:sub(1, 1) ~= "/" and outdir.kind(text.join(o.dir, f)) then return text.join(o.dir, f) end
  return f
end

local function main(argv)
  local o, err = parse(argv)
  if not o then return usage_error(err) end
  if o.help then
    io.write(USAGE)
    return 0
  end
  if o.dir and outdir.kind(o.dir) ~= "directory" then
    io.stderr:write("tracelens: validate: ", o.dir, ": not a directory\n")
    return 1
  end
  if o.findings then
    local passed, errors = validate.validate_findings_file(findings_path(o), o.tier, o.scope)
    io.write(validate.format_findings(passed, errors))
    return passed and 0 or 1
  end
  -- a folder with none of an analysis' outputs (a perf report's, say): say
  -- so, rather than run the levels over missing files
  local function has(p) return outdir.kind(text.join(o.dir, p)) ~= nil end
  if not (has("analysis.md") or has("category_findings") or has("system_findings") or has("priority_data.json")) then
    io.stderr:write("tracelens: validate: ", o.dir, ": not an analysis output folder (no analysis.md, "
      .. "category_findings/, system_findings/ or priority_data.json): validate checks what "
      .. "`tracelens run orchestrator.lua TRACE -o DIR` writes\n")
    return 1
  end
  local levels = o.level and { [tonumber(o.level)] = true } or nil
  local r = validate.validate_dir(o.dir, { scope = o.scope, levels = levels })
  if o.level == "2" and r.outputs_error then
    io.stderr:write("tracelens: validate: ", r.outputs_error, "\n")
    return 1
  end
  io.write(validate.format_dir(r))
  return r.passed and 0 or 1
end

return main({ ... })

-- The orchestrator's behaviour around the analysis: usage errors, a bad
-- trace, and analyzers that fail (raise, run past the time limit, return
-- nonsense): each is run once more, then left out and listed under
-- ## Warnings while the report completes and passes the checks.
local root, shared, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"

local trace = root .. "/examples/demo_trace.json"
local tmp = T.tmpdir()
local function orch(args)
  return T.run(string.format("cd %s && %s run orchestrator.lua %s", T.q(tmp), T.q(bin), args))
end
local read = tl.fs.read_file

-- usage errors: exit 2 with a message
local ok, code, out, err = orch("")
T.eq(code, 2, "no trace: exit 2")
T.check(err:find("no trace given", 1, true), "no trace: says so: " .. err)
-- --inference runs (tests/lua/test_inference_analysis.lua checks it); its
-- capture folder needs the mode
ok, code, out, err = orch(T.q(trace) .. " --capture_folder .")
T.eq(code, 2, "--capture_folder without --inference: exit 2")
T.check(err:find("--capture_folder needs --inference", 1, true), "--capture_folder needs --inference: " .. err)
ok, code, out, err = orch(T.q(trace) .. " --bogus")
T.eq(code, 2, "unknown option: exit 2")
ok, code, out, err = orch("--help")
T.eq(code, 0, "--help: exit 0")
T.check(out:find("usage: tracelens run orchestrator.lua TRACE", 1, true), "--help prints the usage")
ok, code, out, err = orch(T.q(trace) .. " --platform NOPE -o out_nope")
T.check(code ~= 0 and err:find("NOPE", 1, true), "unknown platform named in the error: " .. err)
-- a bad trace: exit 1, the file and offset named, no report left behind
local bad = tmp .. "/bad.json"
local f = assert(io.open(bad, "wb"))
f:write('{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": }]}')
f:close()
ok, code, out, err = orch(T.q(bad) .. " -o out_bad")
T.eq(code, 1, "bad trace: exit 1")
T.check(err:find("bad.json: byte", 1, true), "bad trace: file and byte offset: " .. err)
T.check(read(tmp .. "/out_bad/analysis.md") == nil, "bad trace: no analysis.md")
ok, code, out, err = orch(T.q(trace) .. " --compare " .. T.q(bad) .. " -o out_bad2")
T.eq(code, 1, "bad trace 2: exit 1")
T.check(err:find("bad.json: byte", 1, true), "bad trace 2: file and byte offset: " .. err)
-- a trace 2 TraceDiff cannot align (GPU events only, no cpu_op): exit 1, the
-- reason as the library says it, and no output directory
local gpu_only = tmp .. "/gpu_only.json"
tl.fs.write_file(gpu_only, '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, '
  .. '"ts": 1, "dur": 2, "args": {"stream": 7}}]}')
ok, code, out, err = orch(T.q(trace) .. " --compare " .. T.q(gpu_only) .. " -o out_gpu_only")
T.eq(code, 1, "trace 2 without cpu_op roots: exit 1")
T.check(err:find("gpu_only.json: TraceDiff needs cpu_op roots in both traces (none in trace 2)", 1, true)
  and not err:find("[string", 1, true), "trace 2 without cpu_op roots: the reason, no chunk name: " .. err)
T.check(tl.fs.kind(tmp .. "/out_gpu_only") == nil, "trace 2 without cpu_op roots: no output directory")

-- failing rules next to a working one
local rules = tmp .. "/rules"
tl.fs.mkdir(rules)
tl.fs.write_file(rules .. "/raises.lua", 'error("this rule is broken")\n')
tl.fs.write_file(rules .. "/loops.lua", "while true do end\n")
tl.fs.write_file(rules .. "/nonsense.lua", "return 42\n")
tl.fs.write_file(rules .. "/fine.lua", [[
local rule = require "tracelens.rule"
return rule.run(..., {
  select = function(row) return row.name == "aten::mm" end,
  advice = function(v) return { { action = "Look at the GEMMs again.", mechanism = "Because this is a test." } } end,
})
]])
ok, code, out, err = orch(T.q(trace) .. " -o out --rules rules --timeout 2 -q")
T.eq(code, 0, "with failing rules the analysis completes: " .. err)
local report = read(tmp .. "/out/analysis.md") or ""
local warnings = report:match("## Warnings(.-)\n## ") or ""
for _, name in ipairs({ "raises", "loops", "nonsense" }) do
  T.check(warnings:find(name, 1, true), name .. " listed under ## Warnings")
  local fd = read(tmp .. "/out/category_findings/" .. name .. "_findings.md") or ""
  T.check(fd:find("Status: ERROR", 1, true), name .. ": findings file says Status: ERROR")
end
T.check(warnings:find("this rule is broken", 1, true), "the error text is given")
T.check(not warnings:find("fine", 1, true), "the working rule is not a warning")
T.check(read(tmp .. "/out/category_findings/fine_findings.md"), "the working rule wrote its findings")
-- every rule that ran is listed in the Appendix with its file; the run
-- record names the trace and every findings file
local rules_section = report:match("### Rules\n(.*)$") or ""
T.check(rules_section:find("- `fine`: `rules/fine.lua`", 1, true), "the rule listed with its path: " .. rules_section)
T.check(rules_section:find("- `raises`: `rules/raises.lua` (failed)", 1, true), "a failed rule is marked: "
  .. rules_section)
local run = read(tmp .. "/out/metadata/tracelens_run.json") or ""
T.check(run:find('"trace_path": "' .. trace, 1, true) and run:find('"category_findings/fine_findings.md"', 1, true),
  "metadata/tracelens_run.json names the trace and the files")
local vok, vcode, vout = T.run(string.format("%s validate %s", T.q(bin), T.q(tmp .. "/out")))
T.check(vok, "the report with failed rules passes tracelens validate (exit " .. tostring(vcode) .. ")\n" .. vout)

-- every file of the output tree
for _, rel in ipairs({ "perf_report.xlsx", "perf_report_csvs/unified_perf_summary.csv", "category_data/category_manifest.json",
  "category_data/cpu_idle_ops.csv", "metadata/model_info.json", "metadata/nn_modules.txt", "metadata/condensed_op_info.csv",
  "priority_data.json", "perf_improvement.png", "perf_improvement_base64.txt", "analysis.md" }) do
  T.check(read(tmp .. "/out/" .. rel) ~= nil, "written: " .. rel)
end
T.check(not report:find("{{PERF_PLOT}}", 1, true) and report:find("data:image/png;base64,", 1, true),
  "the chart is embedded")
T.rmrf(tmp)
T.finish()

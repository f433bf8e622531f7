#!/usr/bin/env bash
# The orchestrator's errors, rules and output directory (issue 10 items 3, 4,
# 8, 15, 16; issue 13's one-line errors):
# - every error is one line "tracelens: ..." (no Lua position, no traceback);
#   usage errors exit 2 and point to --help instead of printing it; options
#   are checked before the trace is loaded (a broken trace proves it: the
#   error must be about the option);
# - --timeout / --memory-mb / -j edge values are usage errors;
# - a rules/ folder in the current directory does not run; the report lists
#   every rule that ran with its path;
# - a rule named like a built-in analyzer or category, or like a rule of
#   another directory, is refused;
# - OUT is replaced whole: a previous analysis leaves nothing behind, a
#   directory that is not an analysis is refused, links are never followed,
#   a failed run leaves the previous analysis as it was; `tracelens
#   validate` fails on a findings file that is not of this analysis.
set -u
BIN=$1 ROOT=$2
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
cd "$T" || exit 1
TRACE=$ROOT/examples/demo_trace.json
HINT='(see `tracelens run orchestrator.lua --help`)'
printf '{"traceEvents": [' >bad.json

# expect NAME RC PATTERN ARGS...: exit RC and one line "tracelens: ..." on
# stderr that holds PATTERN and no Lua position or traceback.
expect() {
  local name=$1 want=$2 pat=$3
  shift 3
  "$BIN" run orchestrator.lua "$@" >"$T/stdout" 2>"$T/err"
  local rc=$?
  [ "$rc" -eq "$want" ] && ok || ko "$name: exit $rc, expected $want: $(cat "$T/err")"
  [ "$(wc -l <"$T/err")" -eq 1 ] && ok || ko "$name: stderr is not one line: $(cat "$T/err")"
  grep -q '^tracelens: ' "$T/err" && ok || ko "$name: no 'tracelens: ' prefix: $(cat "$T/err")"
  grep -qF -- "$pat" "$T/err" && ok || ko "$name: stderr lacks '$pat': $(cat "$T/err")"
  grep -qE 'orchestrator:|stack traceback|\.lua:[0-9]+:' "$T/err" && ko "$name: Lua position: $(cat "$T/err")" || ok
}
usage() { # NAME PATTERN ARGS...: a usage error that points to --help
  local name=$1 pat=$2
  shift 2
  expect "$name" 2 "$pat $HINT" "$@"
  grep -q 'usage:' "$T/err" && ko "$name: the whole help was printed" || ok
}

# usage errors (item 16, issue 13)
usage "no trace" "tracelens: no trace given"
usage "unknown option" "unknown option --bogus" "$TRACE" --bogus
usage "missing value" "-o needs a value" "$TRACE" -o
usage "platform and arch" "--platform and --arch are mutually exclusive" bad.json --platform H100 --arch x.json
# edge values (item 8)
for v in 0 -1 1.5 x; do usage "-j $v" "-j $v: expected a whole number from 1 to 4096" bad.json -j "$v"; done
for v in 0 -1 nan inf 1e999; do usage "--timeout $v" "--timeout $v: expected seconds above 0 and at most 604800" bad.json --timeout "$v"; done
for v in 0 -1 17592186044416; do
  usage "--memory-mb $v" "--memory-mb $v: expected a whole number from 1 to 1048576" bad.json --memory-mb "$v"
done
# option values checked before the trace is loaded (bad.json would fail to load)
touch afile
expect "-o a file" 2 "tracelens: -o afile: exists and is not a directory" bad.json -o afile
expect "-o under a file" 2 "-o afile/sub: afile is not a directory" bad.json -o afile/sub
expect "-o ." 2 "-o .: give the output directory by its name" bad.json -o .
expect "unknown platform" 2 "tracelens: --platform XYZ: unknown GPU platform (available: " bad.json --platform XYZ
expect "--rules nodir" 2 "tracelens: --rules nodir: no such directory" bad.json --rules nodir
expect "--rules a file" 2 "tracelens: --rules afile: not a directory" bad.json --rules afile
expect "--arch nofile" 2 "tracelens: --arch nofile: no such file" bad.json --arch nofile
if [ "$(id -u)" -eq 0 ]; then
  unwritable=/proc/tracelens-test-out # root may write anywhere else
else
  mkdir ro && chmod 555 ro && unwritable=ro/out
fi
expect "unwritable -o" 1 "tracelens: -o $unwritable: " bad.json -o "$unwritable"
# the trace's own error: exit 1, one line (the library's message)
expect "bad trace" 1 "tracelens: bad.json: byte 17 (event 0): unexpected end of data" bad.json -o out_bad -q
[ ! -e out_bad ] && ok || ko "a failed load leaves no output directory"

# validate and diff: one-line usage errors too
"$BIN" validate --bogus x >/dev/null 2>"$T/err"
[ $? -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF '(see `tracelens validate --help`)' "$T/err" && ok \
  || ko "validate usage error: $(cat "$T/err")"
"$BIN" diff bad.json >/dev/null 2>"$T/err"
[ $? -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF '(see `tracelens diff --help`)' "$T/err" && ok \
  || ko "diff usage error: $(cat "$T/err")"
"$BIN" diff bad.json bad.json -o afile >/dev/null 2>"$T/err"
[ $? -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF 'tracelens: diff: -o afile: exists and is not a directory' \
  "$T/err" && ok || ko "diff -o a file, before the load: $(cat "$T/err")"

# rules (items 3 and 4) ---------------------------------------------------------------
FINE='local rule = require "tracelens.rule"
return rule.run(..., { select = function(row) return true end,
  advice = function(v) return { { action = "Act.", mechanism = "Because." } } end })'
mkdir rules mine
printf '%s\n' "$FINE" >rules/evil.lua
printf '%s\n' "$FINE" >mine/fine.lua
"$BIN" run orchestrator.lua "$TRACE" -o o_default -q >/dev/null 2>"$T/err" && ok || ko "default run: $(cat "$T/err")"
[ ! -e o_default/category_findings/evil_findings.md ] && ok || ko "./rules ran without --rules"
grep -q evil o_default/analysis.md && ko "./rules is in the report" || ok
grep -qF -- "- \`many_small_launches\`: \`$ROOT/rules/many_small_launches.lua\`" o_default/analysis.md && ok \
  || ko "the shipped rule is listed with its path: $(sed -n '/### Rules/,$p' o_default/analysis.md)"
"$BIN" run orchestrator.lua "$TRACE" -o o_mine --rules mine -q >/dev/null 2>"$T/err" && ok || ko "--rules: $(cat "$T/err")"
[ -e o_mine/category_findings/fine_findings.md ] && ok || ko "--rules DIR ran"
grep -qF -- "- \`fine\`: \`mine/fine.lua\`" o_mine/analysis.md && ok || ko "--rules DIR's rule listed with its path"
grep -q many_small_launches o_mine/analysis.md && ko "--rules replaces the shipped rules" || ok
"$BIN" run orchestrator.lua "$TRACE" -o o_none --no-rules -q >/dev/null 2>&1
grep -qF "No rules ran (--no-rules)." o_none/analysis.md && ok || ko "--no-rules: no rule ran, and the report says so"

for name in gemm cpu_idle kernel_fusion model_id multi_kernel sdpa_fwd GEMM; do
  rm -rf clash && mkdir clash && printf '%s\n' "$FINE" >"clash/$name.lua"
  expect "rule $name.lua" 2 "tracelens: rule clash/$name.lua: $name is the name of a built-in" bad.json --rules clash
done
mkdir other && printf '%s\n' "$FINE" >other/fine.lua
expect "the same rule name in two directories" 2 \
  "tracelens: rule other/fine.lua: a rule named fine already comes from mine/fine.lua" bad.json --rules mine --rules other
rm -rf clash && mkdir clash && printf '%s\n' "$FINE" >clash/multi_tensor_apply.lua
expect "a rule named like a category of the trace" 2 \
  "rule clash/multi_tensor_apply.lua: multi_tensor_apply is the name of a category of this trace" \
  "$TRACE" --rules clash -o o_clash -q
[ ! -e o_clash ] && ok || ko "a refused rule leaves no output directory"

# the output directory (item 15) -------------------------------------------------------
"$BIN" run orchestrator.lua "$TRACE" -o reuse --rules mine -q >/dev/null 2>&1
[ -e reuse/category_findings/fine_findings.md ] && ok || ko "first analysis written"
mkdir victim victim2 && echo keep >victim/keep.txt && echo keep >victim2/keep.txt
ln -s "$T/victim" reuse/category_data/planted
ln -s "$T/victim2" reuse/perf_report_trace2_csvs
"$BIN" run orchestrator.lua "$TRACE" -o reuse --no-rules -q >/dev/null 2>"$T/err" && ok || ko "rerun: $(cat "$T/err")"
[ ! -e reuse/category_findings/fine_findings.md ] && ok || ko "the previous analysis' findings are gone"
[ ! -e reuse/category_data/fine_metrics.json ] && ok || ko "the previous analysis' metrics are gone"
[ -f victim/keep.txt ] && [ -f victim2/keep.txt ] && ok || ko "links in the old directory were followed"
[ ! -L reuse/perf_report_trace2_csvs ] && [ ! -e reuse/category_data/planted ] && ok || ko "the planted links are gone"
ls -a | grep -q '^\.tracelens-' && ko "a staging directory was left: $(ls -a)" || ok
"$BIN" validate reuse >"$T/v" 2>&1 && ok || ko "the new analysis validates: $(tail -3 "$T/v")"
cp reuse/category_findings/gemm_findings.md reuse/category_findings/stale_findings.md
"$BIN" validate reuse >"$T/v" 2>&1 && ko "validate passes a findings file of another analysis" || ok
grep -qF "FAIL  category_findings/stale_findings.md: not written by the analysis of $TRACE" "$T/v" && ok \
  || ko "validate names the stray file: $(grep FAIL "$T/v")"
cp -r reuse legacy && rm legacy/metadata/tracelens_run.json # without a run record: the manifest decides
"$BIN" validate legacy >"$T/v" 2>&1 && ko "validate passes a stray file without a run record" || ok
grep -qF "FAIL  category_findings/stale_findings.md: stale is not a category of category_data/category_manifest.json" \
  "$T/v" && ok || ko "validate names the stray file by the manifest: $(grep FAIL "$T/v")"
rm reuse/category_findings/stale_findings.md
"$BIN" validate reuse >/dev/null 2>&1 && ok || ko "validate passes again without the stray file"

# a failed run leaves the previous analysis as it was
sum=$(cat reuse/analysis.md | cksum)
expect "failed rerun" 2 "multi_tensor_apply is the name of a category" "$TRACE" -o reuse --rules clash -q
[ "$(cat reuse/analysis.md | cksum)" = "$sum" ] && ok || ko "a failed run changed the previous analysis"
ls -a | grep -q '^\.tracelens-' && ko "a failed run left a staging directory" || ok

# directories that are not an analysis, links
mkdir notes && echo mine >notes/notes.txt
expect "a directory that is not an analysis" 2 "tracelens: -o notes: exists and holds notes.txt, which tracelens does not write" \
  bad.json -o notes
[ -f notes/notes.txt ] && ok || ko "a foreign directory was touched"
ln -s "$T/reuse" link_out
expect "-o a link" 2 "tracelens: -o link_out: is a symbolic link" bad.json -o link_out
mkdir empty_dir
"$BIN" run orchestrator.lua "$TRACE" -o empty_dir --no-rules -q >/dev/null 2>&1 && [ -f empty_dir/analysis.md ] && ok \
  || ko "an empty directory is used"

# what a rule prints goes to stderr, each line tagged with the rule's name and
# its control bytes escaped: it cannot pass for tracelens's own output on
# stdout nor clear the terminal (redteam2)
mkdir chatty
cat >chatty/chatty.lua <<'LUA'
local rule = require "tracelens.rule"
print("analysis: /elsewhere/analysis.md\n  findings: 0 compute\27[2J")
warn("tracelens: consistency: FAILED")
return rule.run(..., { select = function(row) return false end })
LUA
"$BIN" run orchestrator.lua "$TRACE" -o o_chatty --rules chatty >"$T/out" 2>"$T/err"
rc=$?
[ $rc -eq 0 ] && ! grep -q 'elsewhere' "$T/out" && grep -qF '[chatty] analysis: /elsewhere/analysis.md' "$T/err" \
  && grep -qF '[chatty]   findings: 0 compute\x1b[2J' "$T/err" && grep -qF '[chatty] warning: tracelens: consistency: FAILED' "$T/err" \
  && ! grep -q "$(printf '\033')" "$T/err" && ok || ko "a rule's print: exit $rc, stdout $(head -c 300 "$T/out"), stderr $(grep chatty "$T/err" | head -3)"

# a rule's metrics name its own category: one that names a built-in category
# (its findings ranked as GEMM's, at any impact it claims) fails, and no
# finding of the built-in category carries its numbers (redteam)
mkdir spoof
cat >spoof/spoof.lua <<'LUA'
local rule = require "tracelens.rule"
local json = require "tracelens.json"
local r = rule.run(..., { select = function(row) return true end,
  advice = function(v) return { { action = "Do X.", mechanism = "Because Y." } } end })
local m = json.decode(r.metrics)
m.category = "gemm"
for _, f in ipairs(m.category_findings or {}) do f.impact_score, f.impact_score_low, f.impact_score_high = 9999, 9998, 10000 end
r.metrics = json.encode(m)
return r
LUA
"$BIN" run orchestrator.lua "$TRACE" -o o_spoof --rules spoof -q >/dev/null 2>"$T/err"
grep -F '| spoof | Compute Kernel |' o_spoof/analysis.md | grep -qF 'metrics are for category gemm, not spoof' && ok \
  || ko "a rule's metrics for another category: $(grep -F 'spoof' o_spoof/analysis.md | head -3)"
grep -q '9999' o_spoof/priority_data.json o_spoof/analysis.md && ko "a rule's impact ranked under a built-in category" || ok

# a rule's cards and blocks are copied into analysis.md as its own text: a
# heading (ATX, setext, inside a list), raw HTML, a marker or an anchor in
# them does not become part of the report's structure (redteam)
mkdir inject
cat >inject/inject.lua <<'LUA'
local rule = require "tracelens.rule"
local r = rule.run(..., { select = function(row) return true end,
  advice = function(v) return { { action = "Do X.", mechanism = "Because Y." } } end })
local lines = { "", "FAKE Warnings", "-------------", "", "- # FAKE heading in a list", "> ## FAKE quoted heading",
  "x\r## FAKE after a carriage return", "<h2>FAKE html</h2>", "<!-- top-ops-row low=1 high=2 -->",
  "<a id=\"detailed-analysis-compute-p1\"></a>", "* * *", "" }
local inject = table.concat(lines, "\n")
r.findings = r.findings:gsub("(%*%*Action%*%*:[^\n]*\n)", function(a) return a .. inject end)
r.findings = r.findings:gsub("(<!%-%- reasoning%-candidate tier=compute rank=1 %-%->\n[^\n]*\n)",
  function(a) return a .. inject end, 1)
return r
LUA
"$BIN" run orchestrator.lua "$TRACE" -o o_inject --rules inject -q >/dev/null 2>"$T/err"
grep -q 'FAKE Warnings' o_inject/analysis.md && ok || ko "the injecting rule's cards are in the report"
grep -q '| inject | Compute Kernel |' o_inject/analysis.md && ko "the injecting rule failed: $(grep '| inject | Compute' o_inject/analysis.md)" || ok
bad=$(grep -nE '^(-{4,}|={3,}|(- |> )?#+ FAKE|<h2>|<!-- top-ops-row low=1 high=2 -->|\* \* \*$)' o_inject/analysis.md)
[ -z "$bad" ] && ok || ko "a rule's text became report structure: $bad"
n_a=$(grep -c '^<a id="detailed-analysis-compute-p1"></a>$' o_inject/analysis.md)
[ "$n_a" -eq 1 ] && ok || ko "a rule's text added an anchor ($n_a)"
grep -q $'\r' o_inject/analysis.md && ko "a carriage return from a rule is in the report" || ok

# a rule file that is a symbolic link is refused: it can name any file, and
# a syntax error would quote a word of it into analysis.md (redteam2)
mkdir linked && printf 'aws_key AKIASECRETKEY123456\n' >secret.txt && ln -s "$T/secret.txt" linked/leak.lua
expect "a rule that is a symbolic link" 2 "tracelens: rule linked/leak.lua: is a symbolic link" "$TRACE" --rules linked \
  -o o_linked -q
[ ! -e o_linked ] && ok || ko "a refused rule link leaves no output directory"

# a rule's text cannot fail the consistency checks of the whole run
# (redteam2): findings with an interpreter value or a share above 100% fail
# the rule (left out, listed under Warnings), and a rule's error message with
# such text is not shown; the run passes its checks and exits 0
mkdir consist
cat >consist/bad_text.lua <<'LUA'
local rule = require "tracelens.rule"
return rule.run(..., { select = function(row) return true end,
  advice = function(v) return { { action = "Act on table: 0x55d0c0ffee00.", mechanism = "It is 250% of total time." } } end })
LUA
printf '%s\n' 'error("oops table: 0x55d0c0ffee00 nan 250% of total time")' >consist/bad_err.lua
printf '%s\n' "$FINE" >consist/fine.lua
"$BIN" run orchestrator.lua "$TRACE" -o o_consist --rules consist -q >"$T/stdout" 2>"$T/err" && ok \
  || ko "a rule's text failed the run: $(cat "$T/stdout" "$T/err")"
grep -q "consistency passed" "$T/stdout" && ok || ko "consistency with bad rules: $(cat "$T/stdout")"
grep -qF '| bad_text | Compute Kernel | findings fail the consistency checks' o_consist/analysis.md && ok \
  || ko "the rule with inconsistent findings failed: $(grep -F 'bad_text' o_consist/analysis.md | head -3)"
grep -qF '| bad_err | Compute Kernel | its error message is not shown' o_consist/analysis.md && ok \
  || ko "the rule's error message is not shown: $(grep -F 'bad_err' o_consist/analysis.md | head -3)"
[ -e o_consist/category_findings/fine_findings.md ] && grep -q '| fine | Compute Kernel |' o_consist/analysis.md \
  && ko "the good rule failed" || ok
grep -rq '0x55d0c0ffee00' o_consist && ko "a rule's interpreter value is in the output" || ok

# run from inside the shipped lua/ directory (the script found as
# ./orchestrator.lua): the analyzers are still found next to it
(cd "$ROOT/lua" && "$BIN" run orchestrator.lua "$TRACE" -o "$T/from_lua_dir" -q >"$T/stdout" 2>"$T/err")
grep -q "0 analyzers failed" "$T/stdout" && ok || ko "run from lua/: $(cat "$T/stdout" "$T/err")"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# `tracelens validate`: exit 0 valid, 1 invalid or unreadable, 2 usage error;
# usage errors name the problem on stderr; the one-level and --findings modes
# print what the reference prints.
set -u
BIN=$1
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
ko() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }

expect() { # name rc pattern-in-stdout+stderr args...
  local name=$1 want=$2 pat=$3; shift 3
  "$BIN" validate "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  [ "$rc" -eq "$want" ] && ok || ko "$name: exit $rc, expected $want ($(cat "$T/out" "$T/err"))"
  grep -qF -- "$pat" "$T/out" "$T/err" && ok || ko "$name: output lacks '$pat': $(cat "$T/out" "$T/err")"
}

# a small valid output directory
D=$T/out1
mkdir -p "$D/category_data" "$D/category_findings" "$D/system_findings"
cat >"$D/category_data/category_manifest.json" <<'J'
{"comparison_scope": "standalone", "gpu_utilization": {"total_time_ms": 4.0, "computation_time_percent": 50.0},
 "categories": [{"name": "cpu_idle", "tier": "system"}, {"name": "kernel_fusion", "tier": "system"}]}
J
cat >"$D/system_findings/cpu_idle_findings.md" <<'M'
# CPU/Idle Time Analysis Findings
## Recommendations
### P1: Host synchronization stalls the GPU
**Insight**: The GPU idles between launches.
**Action**: Remove host synchronization.
<!-- impact-begin kind=p_item low=null mid=null high=null -->
**Impact**: Not quantifiable from trace data
<!-- impact-end -->
## Detailed Analysis
<!-- reasoning-candidate tier=system rank=1 -->
#### Host synchronization
Impact estimate is not quantifiable from trace data.
M
printf '# Kernel Fusion Analysis Summary (Experimental)\n\nNo kernel fusion opportunities detected.\n' \
  >"$D/system_findings/kernel_fusion_findings.md"
cat >"$D/analysis.md" <<'M'
# Workload - MI300X Standalone Analysis

## Executive Summary

| Metric | Value |
|--------|-------|
| Total Time | 4.0 ms |
| Compute % | 50.0% |
| Idle % | 50.0% |
| Exposed Communication % | 0.0% |
| Top Bottleneck Category | GEMM (50.0%) |

## Compute Kernel Optimizations

<!-- impact-begin kind=top_ops -->
| Rank | Category |
|------|----------|
<!-- impact-end -->

## Kernel Fusion Opportunities (Experimental)

No kernel fusion opportunities detected.

## System-Level Optimizations

## Detailed Analysis

## Appendix
M

expect "valid directory" 0 "RESULT: PASS" "$D"
expect "fusion note" 0 "NOTE  system_findings/kernel_fusion_findings.md (fusion)" "$D"
expect "level 2 summary" 0 "VALIDATION SUMMARY" "$D"
expect "level 3 only" 0 "PASS: All required sections present" "$D" --level 3
[ "$(cat "$T/out")" = "PASS: All required sections present" ] && ok || ko "level 3 prints one line: $(cat "$T/out")"
expect "level 2 only" 0 "  coverage_check: PASS" "$D" --level=2
expect "findings file, relative to DIR" 0 "PASS: Findings file is valid" "$D" --findings system_findings/cpu_idle_findings.md --tier system
expect "findings file, tier mismatch" 1 "  - reasoning-candidate tier mismatch: expected tier=fusion, found tier=system rank=1" \
  --findings "$D/system_findings/cpu_idle_findings.md" --tier fusion
expect "no-opportunity file under Level 1 itself" 1 "  - Missing required section: ## Recommendations" \
  --findings "$D/system_findings/kernel_fusion_findings.md" --tier fusion
expect "missing findings file" 1 "  - File not found: $T/nope_findings.md" --findings "$T/nope_findings.md" --tier compute
expect "explicit scope" 0 "RESULT: PASS" "$D" --scope comparative

# failures
cp -r "$D" "$T/out2"
sed -i 's/^## Appendix$/## Notes/' "$T/out2/analysis.md"
expect "invalid report" 1 "  - Missing section: Appendix" "$T/out2"
expect "invalid report, result line" 1 "RESULT: FAIL (analysis.md)" "$T/out2"
cp -r "$D" "$T/out3"
sed -i 's/tier=system rank=1/tier=compute rank=1/' "$T/out3/system_findings/cpu_idle_findings.md"
expect "invalid findings file" 1 "RESULT: FAIL (system_findings/cpu_idle_findings.md)" "$T/out3"
mkdir "$T/empty"
# a folder with none of an analysis' outputs (an empty one, a perf report's): one line saying so
expect "empty directory" 1 "tracelens: validate: $T/empty: not an analysis output folder" "$T/empty"
expect "empty directory, level 2" 1 "not an analysis output folder" "$T/empty" --level 2
mkdir -p "$T/partial/category_findings"
expect "level 2 without a manifest" 1 "category_manifest.json: " "$T/partial" --level 2
expect "not a directory" 1 "tracelens: validate: $T/nowhere: not a directory" "$T/nowhere"

# usage errors
expect "no directory" 2 "tracelens: validate: no output directory given"
expect "unknown option" 2 "unknown option '--bogus'" "$D" --bogus
expect "bad scope" 2 "--scope must be standalone or comparative" "$D" --scope both
expect "bad level" 2 "--level must be 1, 2, 3 or 4" "$D" --level 5
expect "scope without value" 2 "--scope needs a value" "$D" --scope
expect "tier without findings" 2 "--tier needs --findings FILE" "$D" --tier compute
expect "findings without tier" 2 "--findings needs --tier compute|system|fusion" "$D" --findings x.md
expect "findings with level 3" 2 "--findings runs Level 1 only" "$D" --findings x.md --tier system --level 3
expect "two directories" 2 "more than one directory given" "$D" "$D"
[ "$(wc -l <"$T/err")" -eq 1 ] && grep -qF "(see \`tracelens validate --help\`)" "$T/err" && ok \
  || ko "usage errors are one line that points to --help: $(cat "$T/err")"
expect "help" 0 "usage: tracelens validate DIR" --help
"$BIN" --help | grep -qF "validate DIR" && ok || ko "main help lists validate"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# The layering rule of docs/architecture.md ("Layers"): a file of src/ includes
# only headers of its own folder or of a lower stage; json and trace, the
# loading stage, may include each other. Reads the #include "..." lines of
# every .c/.h under src/ and fails on a header of a higher or sibling stage,
# or on a folder of src/ that has no stage. First checks itself on a small
# tree that breaks the rule (so the check can fail), then checks src/.
set -u
ROOT=$2

# stage of each folder of src/ (keep in step with docs/architecture.md)
STAGES='util=0 io=1 json=2 trace=2 perf=3 table=3 report=4 render=4 diff=4
        analysis=5 ranks=5 split=5 compare=5 lua=6 cli=7'

# check SRC: prints each violation, returns 1 when there is one (one awk
# pass over every file)
check() {
  local files
  files=$(ls "$1"/*/*.[ch] 2>/dev/null)
  [ -n "$files" ] || return 0
  # shellcheck disable=SC2086
  awk -v stages="$STAGES" '
    BEGIN { n = split(stages, kv, /[ \n]+/); for (i = 1; i <= n; i++) if (split(kv[i], p, "=") == 2) st[p[1]] = p[2] }
    FNR == 1 {
      k = split(FILENAME, parts, "/"); dir = parts[k - 1]
      if (!(dir in st)) { printf "layers: %s: src/%s has no stage (add it to docs/architecture.md and tests/cli/test_layers.sh)\n", FILENAME, dir; bad = 1; nextfile }
    }
    /^[ \t]*#[ \t]*include[ \t]*"/ {
      inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
      if (inc !~ /\//) next                    # its own folder
      t = inc; sub(/^\.\.\//, "", t); sub(/\/.*/, "", t)
      if (t == dir || (dir == "json" && t == "trace") || (dir == "trace" && t == "json")) next
      if (!(t in st) || st[t] + 0 >= st[dir] + 0) {
        printf "layers: %s includes \"%s\": src/%s is not a stage below src/%s\n", FILENAME, inc, t, dir; bad = 1
      }
    }
    END { exit bad }' $files
}

# the check itself: a report file including the diff (a sibling) and a
# trace file including the report (a higher stage) must both be found
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/src/report" "$T/src/trace" "$T/src/json"
printf '#include "../diff/trace_diff.h"\n#include "../trace/trace.h"\n' >"$T/src/report/a.c"
printf '#include "../json/kineto_scan.h"\n#include "report/report.h"\n' >"$T/src/trace/b.c"
printf '#include "../trace/trace.h"\n#include "b.h"\n' >"$T/src/json/c.c"
out=$(check "$T/src")
if [ $? -eq 0 ] || [ "$(printf '%s\n' "$out" | grep -c .)" -ne 2 ] ||
  ! printf '%s\n' "$out" | grep -q 'report/a.c includes "../diff/trace_diff.h"' ||
  ! printf '%s\n' "$out" | grep -q 'trace/b.c includes "report/report.h"'; then
  echo "FAIL: the layer check did not find the two planted violations:" >&2
  printf '%s\n' "$out" >&2
  exit 1
fi

if ! check "$ROOT/src"; then
  echo "FAIL: src/ breaks the layering rule (docs/architecture.md, \"Layers\")" >&2
  exit 1
fi
echo "layers: ok"

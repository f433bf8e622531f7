-- `tracelens match-blocks` (inference spec §1.8, docs/split.md) on two
-- traces built here with vLLM detailed annotations: the phase blocks (runs
-- of one phase; single decode steps and idle steps dropped), the windows of
-- --num-steps, the best pair per phase by the per-step mean distances
-- (computed here by hand), the notes of a phase without a pair, the file
-- names, match_report.json / .csv and the extracted traces.
local root, _, bin = arg[1], arg[2], arg[3]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local cjson = require "cjson"

local tmp = T.tmpdir()

-- steps: {c, g, c_sq, c_sk, g_sq, g_sk}
local function ann(s)
  local c, g, csq, csk, gsq, gsk = table.unpack(s)
  return string.format("execute_%d_context_%d(sq%dsk%dsqsq%dsqsk%d)_generation_%d(sq%dsk%dsqsq%dsqsk%d)",
    csq + gsq, c, csq, csk, csq * csq, csq * csk, g, gsq, gsk, gsq, gsq * gsk)
end

local function build(path, steps)
  local ev = {}
  for i, s in ipairs(steps) do
    local t0 = i * 1000
    ev[#ev + 1] = {ph = "X", cat = "user_annotation", name = ann(s), pid = 1, tid = 1, ts = t0, dur = 500}
    ev[#ev + 1] = {ph = "X", cat = "cpu_op", name = "aten::mm", pid = 1, tid = 1, ts = t0 + 10, dur = 50}
  end
  tl.fs.write_file(path, cjson.encode({schemaVersion = 1, traceEvents = ev}))
end

local function dec(gsk) return {0, 8, 0, 0, 8, gsk} end
local function mix(csq, gsk) return {1, 7, csq, csq, 7, gsk} end
-- A: decode 0-4, mixed 5-6, a lone decode 7 (dropped), prefill-only 8, decode 9-11
local A = {dec(1000), dec(1010), dec(1020), dec(1030), dec(1040), mix(100, 900), mix(200, 900), dec(5000),
  {2, 0, 300, 300, 0, 0}, dec(2000), dec(2000), dec(2000)}
-- B: decode 0-2, mixed 3, decode 4-8, mixed 9-10
local B = {dec(2003), dec(2006), dec(2009), mix(50, 900), dec(1100), dec(1100), dec(1100), dec(1100), dec(1100),
  mix(150, 900), mix(260, 900)}
local pa, pb = tmp .. "/a.pt.trace.json", tmp .. "/b.json"
build(pa, A)
build(pb, B)

local function read_json(path)
  local text
  if path:match("%.gz$") then
    local _, _, out = T.run("gzip -dc " .. T.q(path))
    text = out
  else
    text = T.read_file(path)
  end
  return cjson.decode(text or "null")
end

local function run(args, want)
  local _, code, _, err = T.run(T.q(bin) .. " match-blocks " .. args)
  T.eq(code, want or 0, "match-blocks " .. args .. ": exit (" .. tostring(err) .. ")")
  return err
end

-- default: --num-steps 16, phases decode_only,prefilldecode
local out = tmp .. "/m"
run(T.q(pa) .. " " .. T.q(pb) .. " -o " .. T.q(out) .. " -q")
-- blocks A: 0 dec [0,5), 1 pd [5,7), 2 prefill_only [8,9), 3 dec [9,12);
--        B: 0 dec [0,3), 1 pd [3,4), 2 dec [4,9), 3 pd [9,11).
-- decode_only, same size: A0-B2 (5 steps): mean|dg_sq| 0, mean|dg_sk| = (100+90+80+70+60)/5 = 80;
--                         A3-B0 (3 steps): 0, (3+6+9)/3 = 6  -> A3-B0.
-- prefilldecode: A1-B3 (2 steps): (0, 0, (50+60)/2 = 55, 0).
local rep = read_json(out .. "/match_report.json")
T.eq(#rep, 2, "two matches")
local m1, m2 = rep[1] or {}, rep[2] or {}
T.eq(m1.phase, "decode_only", "first: decode_only")
T.eq(m1.TraceA and m1.TraceA.block_index, 3, "decode: A block 3")
T.eq(m1.TraceB and m1.TraceB.block_index, 0, "decode: B block 0")
T.eq(m1.num_steps, 3, "decode: 3 steps")
T.eq(cjson.encode(m1.distance), "[0,6]", "decode: distance")
T.eq(m1.TraceA and m1.TraceA.start, 9, "decode: A start")
T.eq(m1.TraceA and m1.TraceA["end"], 12, "decode: A end")
T.eq(m1.TraceA and m1.TraceA.original_num_steps, 3, "decode: original_num_steps")
T.eq(m1.TraceA and m1.TraceA.truncated, false, "decode: not truncated")
T.eq(m1.TraceB and m1.TraceB.avg_g_sk, 2006, "decode: B avg_g_sk")
T.eq(m1.TraceA and #m1.TraceA.steps, 3, "decode: A steps")
T.eq(m1.TraceA and m1.TraceA.steps[1].step, 9, "decode: first step index")
T.eq(m1.TraceA and m1.TraceA.steps[1].name, ann(A[10]), "decode: step name")
T.eq(m2.phase, "prefilldecode", "second: prefilldecode")
T.eq(m2.TraceA and m2.TraceA.block_index, 1, "pd: A block 1")
T.eq(m2.TraceB and m2.TraceB.block_index, 3, "pd: B block 3")
T.eq(cjson.encode(m2.distance), "[0,0,55,0]", "pd: distance")
T.eq(m2.TraceA and m2.TraceA.avg_c_sq, 150, "pd: A avg_c_sq")
local fa = out .. "/decode_only/decode_only_best_A3_B0_A_prefill_0_prefilldecode_0_decode_3_bs8_conc8_a.json.gz"
local fb = out .. "/decode_only/decode_only_best_A3_B0_B_prefill_0_prefilldecode_0_decode_3_bs8_conc8_b.json.gz"
T.eq(m1.TraceA and m1.TraceA.output_path, fa, "decode: A output path")
T.eq(m1.TraceB and m1.TraceB.output_path, fb, "decode: B output path")
T.eq(T.file_exists(fa) and #read_json(fa).traceEvents, 6, "decode: A file (3 roots and their ops)")
T.eq(T.file_exists(fb) and #read_json(fb).traceEvents, 6, "decode: B file")
local pdf = out .. "/prefilldecode/prefilldecode_best_A1_B3_A_prefill_0_prefilldecode_2_decode_0_bs157_conc8_a.json.gz"
T.check(T.file_exists(pdf), "pd: A file " .. pdf)
T.eq(#read_json(out .. "/match_notes.json"), 0, "no notes")
local header, rows = T.read_csv(out .. "/match_report.csv")
T.eq(header[4], "distance", "csv: distance column")
T.eq(header[5], "TraceA_trace", "csv: TraceA_trace")
T.eq(#header, 4 + 26, "csv: columns")
T.eq(rows[1] and rows[1][4], "0.0|6.0", "csv: distance |-joined")
T.eq(rows[2] and rows[2][4], "0.0|0.0|55.0|0.0", "csv: pd distance")

-- windows of 2; prefill_only has no B block: a note, and --no-extract
out = tmp .. "/w"
run(T.q(pa) .. " " .. T.q(pb) .. " -o " .. T.q(out) .. " --num-steps 2 --phases decode_only,prefill_only --no-extract -q")
rep = read_json(out .. "/match_report.json")
T.eq(#rep, 1, "windows: one match")
-- A windows: [0,2) [2,4) (of 5), [9,11) (of 3); B: [0,2) (of 3), [4,6) [6,8) (of 5).
-- [9,11)-[0,2): (0, (3+6)/2 = 4.5); [2,4)-[4,6): (0, (80+70)/2 = 75); ... the best is A block of [9,11).
T.eq(rep[1] and rep[1].TraceA.start, 9, "windows: A [9,11)")
T.eq(rep[1] and rep[1].TraceB.start, 0, "windows: B [0,2)")
T.eq(rep[1] and rep[1].TraceA.original_num_steps, 3, "windows: original 3")
T.eq(rep[1] and rep[1].TraceA.truncated, true, "windows: truncated")
T.eq(rep[1] and cjson.encode(rep[1].distance), "[0,4.5]", "windows: distance")
local notes = read_json(out .. "/match_notes.json")
T.eq(#notes, 1, "windows: one note")
T.eq(notes[1] and notes[1].reason, "no eligible (A, B) pair found (A blocks of phase: 1, with same-size B candidate: 0)",
  "windows: the note")
T.eq(#T.glob(out .. "/*/*.json.gz"), 0, "--no-extract: no traces")
-- the console says why: A's one prefill-only iteration (8) against none in B
local _, _, said = T.run(T.q(bin) .. " match-blocks " .. T.q(pa) .. " " .. T.q(pb) .. " -o " .. T.q(tmp .. "/w2")
  .. " --num-steps 2 --phases prefill_only --no-extract")
T.check((said or ""):find("prefill_only: no pair: A has 1 prefill_only iteration and B 0; none of A's 1 block has a B "
  .. "block of the same size with sequence statistics\n", 1, true), "windows: why no pair, said: " .. tostring(said))

-- errors: a bad phase (2), a trace without annotations (1)
local err = run(T.q(pa) .. " " .. T.q(pb) .. " -o " .. T.q(tmp .. "/e") .. " --phases decode", 2)
T.check(err:match("^tracelens: ") and select(2, err:gsub("\n", "")) == 1, "bad phase: one line: " .. err)
tl.fs.write_file(tmp .. "/none.json", '{"traceEvents":[]}')
err = run(T.q(pa) .. " " .. T.q(tmp .. "/none.json") .. " -o " .. T.q(tmp .. "/e"), 1)
T.check(err:match("no iteration annotations"), "no annotations: " .. err)
T.check(not T.dir_exists(tmp .. "/e"), "errors write nothing")

T.rmrf(tmp)
T.finish()

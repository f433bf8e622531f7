-- tl.re (PCRE2 with Python re semantics), tracelens.json (Python json.dump
-- layout, float repr, int/float kept apart, ordered objects) and tracelens.py
-- (round half-even, literal reader). Expected values were produced by
-- CPython 3.11 (repr, round, json.dumps(indent=2), re.findall/re.sub).
local root = arg[1]
package.path = root .. "/tests/lib/?.lua;" .. package.path
local T = require "testlib"
local json = require "tracelens.json"
local py = require "tracelens.py"
local re = tl.re

-- float repr
local reprs = {
  {0.1, "0.1"}, {1e-05, "1e-05"}, {1e16, "1e+16"}, {1.5e16, "1.5e+16"}, {5.0, "5.0"}, {30.0, "30.0"},
  {83.6, "83.6"}, {0.0687592976244032, "0.0687592976244032"}, {3.49597607421875, "3.49597607421875"},
  {1e-4, "0.0001"}, {123456789012345.6, "123456789012345.6"}, {9999999999999998.0, "9999999999999998.0"},
  {-2.5, "-2.5"}, {1e22, "1e+22"}, {0.0, "0.0"}, {-0.0, "-0.0"}, {2.0 ^ -1074, "5e-324"},
  {1.7976931348623157e308, "1.7976931348623157e+308"}, {0 / 0, "NaN"}, {math.huge, "Infinity"},
}
for _, c in ipairs(reprs) do T.eq(json.repr_float(c[1]), c[2], "repr " .. c[2]) end
T.eq(json.number_text(708), "708", "integers stay integers")

-- round(x, n): half-to-even on the binary value
T.eq(py.round(2.675, 2), 2.67, "round(2.675, 2)")
T.eq(py.round(4.375, 2), 4.38, "round(4.375, 2)")
T.eq(py.round(0.125, 2), 0.12, "round(0.125, 2)")
T.eq(math.type(py.round(708, 2)), "integer", "round(int) is an int")
T.eq(py.round(2.3849, 2), 2.38, "round(2.3849, 2)")
T.eq(json.number_text(py.round(83.6, 2)), "83.6", "round keeps the shortest repr")

-- encoder layout (json.dumps(obj, indent=2), ensure_ascii)
local o = json.obj("b", 1, "a", json.arr(), "c", json.obj(), "d", {1, 2.0, "x\"é😀\n"}, "e", json.null, "f", nil)
o.z = true
T.eq(json.encode(o), table.concat({
  "{", '  "b": 1,', '  "a": [],', '  "c": {},', '  "d": [', "    1,", "    2.0,",
  '    "x\\"\\u00e9\\ud83d\\ude00\\n"', "  ],", '  "e": null,', '  "z": true', "}"}, "\n"), "encode layout")
local keys = {}
for k in pairs(o) do keys[#keys + 1] = k end
T.eq(table.concat(keys, ","), "b,a,c,d,e,z", "pairs() follows assignment order")

-- decoder keeps order and number kinds
local d = json.decode('{"z": 1, "a": [1.0, 2, -3e-05, null, "\\u00e9\\ud83d\\ude00"], "m": {}, "n": NaN}')
T.eq(table.concat(json.keys(d), ","), "z,a,m,n", "decoded key order")
T.eq(math.type(d.z), "integer", "decoded int")
T.eq(math.type(d.a[1]), "float", "decoded 1.0 is a float")
T.eq(d.a[3], -3e-05, "decoded exponent")
T.check(json.is_null(d.a[4]), "decoded null")
T.eq(d.a[5], "é😀", "decoded surrogate pair")
T.check(json.is_obj(d.m), "empty object stays an object")
T.check(d.n ~= d.n, "NaN token")
T.check(not pcall(json.decode, '{"a": 1,}'), "trailing comma rejected")
T.eq(json.encode(json.decode(json.encode(o))), json.encode(o), "round trip")

-- Python literals (ast.literal_eval)
local lit = py.literal("((512,), (141, 512), (), 'c10::BFloat16', {'M': 3, 'x': None}, -1.5e-3, True)")
T.eq(#lit, 7, "tuple length")
T.eq(lit[1][1], 512, "nested tuple")
T.eq(#lit[3], 0, "empty tuple")
T.eq(lit[5].M, 3, "dict value")
T.check(json.is_null(lit[5].x), "None")
T.eq(lit[6], -0.0015, "float literal")
T.eq(lit[7], true, "True")
T.eq(py.literal("np.float64(1.0)"), nil, "np.float64 wrapper is not a literal")
T.eq(py.literal("(1, 2"), nil, "unterminated tuple")
T.eq(py.repr(py.literal("([1, 2], (3,), 'a', \"b'c\", None, True, 1.5)")),
  "([1, 2], (3,), 'a', \"b'c\", None, True, 1.5)", "repr keeps tuples, lists and quotes as Python")
-- a TensorList input: its dims are tuples, printed as Python's str() of each
T.eq(require("tracelens.analysis").format_args("(((16, 16, 559, 32), (16, 16, 559, 32)), ())",
  "('TensorList', 'Scalar')"), "((16, 16, 559, 32),(16, 16, 559, 32)) TensorList", "format_args of a TensorList")
T.eq(py.torch_dtype("c10::BFloat16"), "bf16", "dtype map is case-insensitive")
T.eq(py.torch_dtype("long int"), nil, "unmapped dtype")

-- tl.re: Python re semantics through PCRE2
T.check(re.test("rsqrt.*mean.*pow|mean.*mul.*pow.*rsqrt", "triton_red_fused__to_copy_add_mean_mul_pow_rsqrt_0", "i"),
  "alternation")
T.check(not re.test("\\bgelu\\b", "at::native::GeluCUDAKernelImpl", "i"), "\\b inside a word")
T.check(re.test("\\bgelu\\b", "elementwise_kernel<128, 2, gelu>", "i"), "\\b at a word edge")
T.eq(re.compile("_(\\d+)$"):gsub("BertLayer_10", ""), "BertLayer", "gsub")
T.eq(table.concat(re.findall("'name':\\s*'([^']+)'", "[{'name': 'a', 'x': 1}, {'name': 'b'}]"), ","), "a,b",
  "findall with one group")
local pairs2 = re.findall("(a)(b)?", "ab a")
T.eq(#pairs2, 2, "findall with groups")
T.eq(pairs2[2][2], "", "unmatched group is ''")
T.eq(re.compile("x*"):gsub("abc", "-"), "-a-b-c-", "empty matches as re.sub")
local s, e, n = re.compile("^### .*?P(\\d+)\\s*:", "m"):search("intro\n### 🔴 P12: title")
T.eq(n, "12", "multiline anchor, UTF-8 subject")
T.eq(s, 7, "1-based start")
T.check(re.compile("^MEMORY_COPY_(HOST_TO_DEVICE|DEVICE_TO_HOST)(\\.kd)?$"):fullmatch("MEMORY_COPY_HOST_TO_DEVICE"),
  "fullmatch")
T.check(not re.compile("abc"):fullmatch("abcd"), "fullmatch needs the whole subject")
T.check(not pcall(re.compile, "(*BAD"), "bad pattern raises")
local ok, err = pcall(function() return re.compile("a"):gsub("aaa", function() error("boom", 0) end) end)
T.check(not ok and err == "boom", "a replacement function's error propagates")
T.check(re.test(re.escape("a.b(c)"), "xa.b(c)y"), "escape")
T.check(not re.test(re.escape("a.b"), "axb"), "escaped dot is literal")
T.check(re.test(".", "\xff\xfea"), "invalid UTF-8 subject is not an error")

T.finish()

#!/usr/bin/env python3
"""Check a tile_trace output against its input (meant for tiles of ~100 MB;
python's json needs roughly 25x the file size in memory).

Usage: bench/check_tile.py IN.json[.gz] OUT.json[.gz]

Recomputes SPAN and IDSTRIDE from the input with the rules of tile_trace.c and
verifies: top-level keys other than traceEvents unchanged; event count
= N*(non-M events) + M events; copy 0 identical to the input events; every
event of copy k equal to its copy-0 event with each "ts" + k*SPAN and each
non-negative integer id + k*IDSTRIDE (exact decimal arithmetic, same number
of fraction digits as the input); copy k starts >= 1000 us after copy k-1 ends.
"""
import gzip
import json
import math
import sys
from decimal import Decimal

ID_KEYS = {"id", "External id", "correlation", "Sequence number", "Python id",
           "Python parent id", "Record function id", "Ev Idx"}


def load(path):
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open(path, "rb") if gz else open(path, "rb")) as f:
        return json.load(f, parse_float=Decimal)


def is_num(v):
    return isinstance(v, (int, Decimal)) and not isinstance(v, bool)


def is_meta(e):
    return isinstance(e, dict) and e.get("ph") == "M"


def max_id(o):
    m = -1
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ID_KEYS and isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                m = max(m, v)
            else:
                m = max(m, max_id(v))
    elif isinstance(o, list):
        for x in o:
            m = max(m, max_id(x))
    return m


def shift(o, dts, did):
    if isinstance(o, dict):
        r = {}
        for k, v in o.items():
            if k == "ts" and is_num(v):
                r[k] = v + dts
            elif k in ID_KEYS and isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                r[k] = v + did
            else:
                r[k] = shift(v, dts, did)
        return r
    if isinstance(o, list):
        return [shift(x, dts, did) for x in o]
    return o


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    a, b = load(sys.argv[1]), load(sys.argv[2])
    ea, eb = a["traceEvents"], b["traceEvents"]
    assert [k for k in a if k != "traceEvents"] == [k for k in b if k != "traceEvents"], "top-level keys differ"
    for k in a:
        if k != "traceEvents":
            assert a[k] == b[k], f"top-level {k!r} differs"

    timed = [e for e in ea if isinstance(e, dict) and is_num(e.get("ts"))]
    lo = min(e["ts"] for e in timed)
    hi = max(e["ts"] + (e["dur"] if is_num(e.get("dur")) and e["dur"] > 0 else 0) for e in timed)
    span = math.ceil(hi - lo) + 1000
    stride = 10
    m = max(max_id(e) for e in ea if isinstance(e, dict))
    while stride <= m:
        stride *= 10

    meta = [e for e in ea if is_meta(e)]
    body = [e for e in ea if not is_meta(e)]
    n = (len(eb) - len(meta)) // len(body)
    assert len(eb) == n * len(body) + len(meta), f"event count {len(eb)} != {n}*{len(body)}+{len(meta)}"
    assert eb[:len(ea)] == ea, "copy 0 differs from the input"
    pos = len(ea)
    for k in range(1, n):
        for e in body:
            got = eb[pos]
            pos += 1
            want = shift(e, k * span, k * stride) if isinstance(e, dict) else e
            assert got == want, f"copy {k}: expected {want}, got {got}"
            if isinstance(e, dict) and isinstance(e.get("ts"), Decimal) and "E" not in str(e["ts"]).upper():
                assert got["ts"].as_tuple().exponent == e["ts"].as_tuple().exponent, \
                    f"copy {k}: ts format changed: {e['ts']} -> {got['ts']}"
    print(f"OK: {n} copies, {len(eb)} events ({len(meta)} metadata), SPAN {span} us, "
          f"IDSTRIDE {stride}, gap between copies {lo + span - hi} us")


if __name__ == "__main__":
    main()

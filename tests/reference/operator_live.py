"""The operator_memory blocks of one rank folder, read with Python's csv module: the time origin
(the earliest timestamp of memory_record, operator_memory and npu_module_mem, as memsight's), the
peak of the live blocks' total (a block is alive from its allocation to just before its release)
and, at a time (ms from the origin; default that peak), the bytes alive per operator.

usage: operator_live.py ASCEND_PROFILER_OUTPUT [AT_MS]   -> JSON on stdout
"""
import csv
import json
import os
import sys
from collections import defaultdict


def ns(text):
    """A µs timestamp ("1779785515596661.420", possibly quoted and tab-suffixed) as int ns."""
    t = text.strip().strip('"').strip()
    if not t or t == "N/A":
        return None
    whole, _, frac = t.partition(".")
    return int(whole) * 1000 + int((frac + "000")[:3])


def rows(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def main():
    out = sys.argv[1]
    ops = rows(os.path.join(out, "operator_memory.csv"))
    stamps = []
    for r in rows(os.path.join(out, "memory_record.csv")):
        stamps.append(ns(r["Timestamp(us)"]))
    for r in ops:
        stamps += [ns(r["Allocation Time(us)"]), ns(r["Release Time(us)"])]
    for r in rows(os.path.join(out, "npu_module_mem.csv")):
        stamps.append(ns(r["Timestamp(us)"]))
    origin = min(s for s in stamps if s is not None)
    blocks = []
    for r in ops:
        size = round(float(r["Size(KB)"]) * 1024)
        a, z = ns(r["Allocation Time(us)"]), ns(r["Release Time(us)"])
        if size > 0 and a is not None:
            blocks.append((r["Name"], size, a - origin, None if z is None else z - origin))
    events = sorted(
        [(a, 1, s) for _, s, a, _ in blocks] + [(z, 0, -s) for _, s, _, z in blocks if z is not None]
    )
    total, peak, peak_at = 0, 0, None
    i = 0
    while i < len(events):
        t = events[i][0]
        while i < len(events) and events[i][0] == t:  # every change at t, releases first
            total += events[i][2]
            i += 1
        if total > peak:
            peak, peak_at = total, t
    at = peak_at if len(sys.argv) < 3 else round(float(sys.argv[2]) * 1e6)
    by = defaultdict(int)
    for name, s, a, z in blocks:
        if a <= at and (z is None or z > at):
            by[name] += s
    print(json.dumps({
        "origin_ns": origin,
        "peak_bytes": peak,
        "peak_at_ns": peak_at,
        "at_ns": at,
        "by_operator": sorted(by.items(), key=lambda kv: (-kv[1], kv[0])),
    }))


main()

"""Writes an allocator snapshot of the allocations a PyTorch profiler trace recorded, on the
snapshot's own clock, for testing the join of a snapshot with a profile of the same run
(tests/cli/cli_snapshot_join.rs) where no GPU is at hand to record both at once.

    python3 tests/reference/make_snapshot_of_trace.py TRACE.json[.gz] OUT.pickle [SHIFT_S]

- The device's (Device Type 1, Device Id 0) `[memory]` events in time order (file order on
  ties): Bytes > 0 an `alloc`, Bytes < 0 a `free_requested` and a `free_completed` of -Bytes,
  each at time_us = (ts in ns + baseTimeNanoseconds) / 1000, rounded to the µs as CUDA's
  allocator writes it, plus SHIFT_S seconds (a record of another moment).
- The segments at the end: one per block still allocated, holding just it.
"""
import decimal
import gzip
import pickle
import sys


def main(trace, out, shift_s=0.0):
    import json

    opener = gzip.open if trace.endswith(".gz") else open
    with opener(trace, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    base = int(doc["baseTimeNanoseconds"])
    mem = []
    for i, e in enumerate(doc["traceEvents"]):
        a = e.get("args") or {}
        if e.get("name") == "[memory]" and a.get("Device Type") == 1 and a.get("Device Id") == 0:
            mem.append((int(decimal.Decimal(str(e["ts"])) * 1000), i, a))
    mem.sort(key=lambda m: (m[0], m[1]))
    shift = int(decimal.Decimal(str(shift_s)) * 1_000_000)
    events, live = [], {}
    for ns, _, a in mem:
        us = (ns + base + 500) // 1000 + shift
        addr, size = int(a["Addr"]), int(a["Bytes"])
        if size > 0:
            events.append({"action": "alloc", "addr": addr, "size": size, "stream": 0,
                           "time_us": us, "frames": []})
            live[addr] = size
        elif size < 0:
            for action in ("free_requested", "free_completed"):
                events.append({"action": action, "addr": addr, "size": -size, "stream": 0,
                               "time_us": us, "frames": []})
            live.pop(addr, None)
    segments = [
        {"device": 0, "address": addr, "total_size": size, "allocated_size": size,
         "active_size": size, "requested_size": size, "stream": 0, "segment_type": "large",
         "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
         "blocks": [{"address": addr, "size": size, "requested_size": size,
                     "state": "active_allocated", "frames": []}]}
        for addr, size in sorted(live.items())
    ]
    snap = {"segments": segments, "device_traces": [events],
            "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": ""}}
    with open(out, "wb") as f:
        pickle.dump(snap, f, protocol=2)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]) if len(sys.argv) > 3 else 0.0)

"""Writes an OOM bundle as torch_npu's OOM_SNAPSHOT_ENABLE does (an allocator snapshot whose trace
ends with an `oom` event, and a device_{N}_memUsageInfo_{ts}.csv beside it) and prints, as
JSON, what a reader must find in it, computed here from the data written.

    python3 tests/reference/make_oom_bundle.py OUT_DIR

Device 0 ran out by fragmentation: its segment has free holes of 2 MiB between held blocks and
the request is 8 MiB. Device 1 ran out by exhaustion: its one hole and the device's free memory
together are less than the request. The `oom` events carry `device_free` (and `addr`, as the
CUDA writer does) and `size`; the state at them is the final state (they are the last events).
"""
import json
import os
import pickle
import sys

MiB = 1 << 20


def device(dev, held_sizes, hole, requested, device_free):
    base = 0x1240_0000_0000 + dev * (1 << 40)
    blocks, trace, addr = [], [], base
    frames = [{"filename": "/work/train.py", "line": 40 + dev, "name": "train_step"}]
    for k, size in enumerate(held_sizes):
        blocks.append({"address": addr, "size": size, "requested_size": size,
                       "state": "active_allocated", "frames": frames})
        trace.append({"action": "alloc", "addr": addr, "size": size, "stream": 0, "frames": frames})
        addr += size
        if hole and k < len(held_sizes) - 1:  # a hole between two held blocks, never two in a row
            blocks.append({"address": addr, "size": hole, "requested_size": hole,
                           "state": "inactive", "frames": []})
            addr += hole
    total = addr - base
    trace.append({"action": "oom", "addr": device_free, "device_free": device_free,
                  "size": requested, "stream": 0, "frames": frames})
    segment = {"device": dev, "address": base, "total_size": total,
               "allocated_size": sum(held_sizes), "active_size": sum(held_sizes),
               "requested_size": sum(held_sizes), "stream": 0, "segment_pool_id": (0, 0),
               "segment_type": "large", "is_expandable": False, "frames": [], "blocks": blocks}
    free = [b["size"] for b in blocks if b["state"] == "inactive"]
    expected = {
        "device": dev, "event": len(trace) - 1, "requested_bytes": requested,
        "device_free_bytes": device_free, "reserved_bytes": total,
        "allocated_bytes": sum(held_sizes), "free_in_segments_bytes": sum(free),
        "largest_free_block_bytes": max(free, default=0),
        "verdict": "fragmentation" if sum(free) + device_free >= requested else "exhaustion",
    }
    return segment, trace, expected


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    s0, t0, e0 = device(0, [6 * MiB] * 9, 2 * MiB, 8 * MiB, 1 * MiB)
    s1, t1, e1 = device(1, [16 * MiB, 15 * MiB], 1 * MiB, 64 * MiB, 4 * MiB)
    with open(os.path.join(out, "oom_snapshot_4242_20261125101600.pickle"), "wb") as f:
        pickle.dump({"segments": [s0, s1], "device_traces": [t0, t1]}, f, protocol=4)
    modules = [("RUNTIME", 812.25, 900.5), ("HCCL", 1536.0, 1536.0), ("GE", 64.0, 128.75)]
    with open(os.path.join(out, "device_0_memUsageInfo_20261125101600.csv"), "w") as f:
        f.write("moduleName,curMemSize(MB),memPeakSize(MB)\n")
        for m in modules:
            f.write("%s,%s,%s\n" % m)
    json.dump({"oom": [e0, e1],
               "modules": [{"device": 0, "module": m, "current_mb": c, "peak_mb": p}
                           for m, c, p in sorted(modules, key=lambda m: -m[1])]},
              sys.stdout)


main()

"""Writes an OOM bundle as torch_npu's OOM_SNAPSHOT_ENABLE does (an allocator snapshot whose trace
ends with an `oom` event, and a device_{N}_memUsageInfo_{ts}.csv beside it) and prints, as
JSON, what a reader must find in it, computed here from the data written.

    python3 tests/reference/make_oom_bundle.py OUT_DIR
    python3 tests/reference/make_oom_bundle.py --cluster OUT_DIR

With --cluster, OUT_DIR is a job's folder of bundles, one per rank: rank_0/ holds the bundle
above, rank_1/ a snapshot of a rank that did not run out (no `oom` event); the JSON is the
cluster's table (which ranks ran out, each one's reserve, peak and headroom against the room the
ranks that ran out had: their reserve at the OOM plus the device's free memory).

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


def quiet_rank():
    """A device that did not run out: A (10 MiB) and B (4 MiB) allocated, B freed, C (6 MiB)
    allocated past B's hole; a 2 MiB free tail. Returns the segment, trace and its figures."""
    base = 0x1240_0000_0000
    frames = [{"filename": "/work/train.py", "line": 50, "name": "train_step"}]
    a, b, c = 10 * MiB, 4 * MiB, 6 * MiB
    trace = [
        {"action": "alloc", "addr": base, "size": a, "stream": 0, "frames": frames},
        {"action": "alloc", "addr": base + a, "size": b, "stream": 0, "frames": frames},
        {"action": "free_requested", "addr": base + a, "size": b, "stream": 0, "frames": frames},
        {"action": "free_completed", "addr": base + a, "size": b, "stream": 0, "frames": frames},
        {"action": "alloc", "addr": base + a + b, "size": c, "stream": 0, "frames": frames},
    ]
    blocks = [
        {"address": base, "size": a, "requested_size": a, "state": "active_allocated", "frames": frames},
        {"address": base + a, "size": b, "requested_size": b, "state": "inactive", "frames": []},
        {"address": base + a + b, "size": c, "requested_size": c, "state": "active_allocated", "frames": frames},
        {"address": base + a + b + c, "size": 2 * MiB, "requested_size": 2 * MiB, "state": "inactive", "frames": []},
    ]
    total = a + b + c + 2 * MiB
    segment = {"device": 0, "address": base, "total_size": total, "allocated_size": a + c,
               "active_size": a + c, "requested_size": a + c, "stream": 0,
               "segment_pool_id": (0, 0), "segment_type": "large", "is_expandable": False,
               "frames": [], "blocks": blocks}
    live, peak = 0, 0
    for e in trace:
        if e["action"] == "alloc":
            live += e["size"]
        elif e["action"] == "free_completed":
            live -= e["size"]
        peak = max(peak, live)
    return segment, trace, {"reserved_bytes": total, "peak_allocated_bytes": peak}


def cluster(out):
    """The --cluster folder and its expected table."""
    rank0 = os.path.join(out, "rank_0")
    os.makedirs(rank0, exist_ok=True)
    s0, t0, e0 = device(0, [6 * MiB] * 9, 2 * MiB, 8 * MiB, 1 * MiB)
    s1, t1, e1 = device(1, [16 * MiB, 15 * MiB], 1 * MiB, 64 * MiB, 4 * MiB)
    name0 = "oom_snapshot_4242_20261125101600.pickle"
    with open(os.path.join(rank0, name0), "wb") as f:
        pickle.dump({"segments": [s0, s1], "device_traces": [t0, t1]}, f, protocol=4)
    rank1 = os.path.join(out, "rank_1")
    os.makedirs(rank1, exist_ok=True)
    sq, tq, eq = quiet_rank()
    name1 = "oom_snapshot_4243_20261125101600.pickle"
    with open(os.path.join(rank1, name1), "wb") as f:
        pickle.dump({"segments": [sq], "device_traces": [tq]}, f, protocol=4)
    room = max(e["reserved_bytes"] + e["device_free_bytes"] for e in (e0, e1))
    rows = []
    for e in (e0, e1):
        rows.append({"file": os.path.join("rank_0", name0), "device": e["device"],
                     "verdict": e["verdict"], "requested_bytes": e["requested_bytes"],
                     "device_free_bytes": e["device_free_bytes"],
                     "reserved_bytes": e["reserved_bytes"],
                     # Only allocations before the OOM: the peak is everything held.
                     "peak_allocated_bytes": e["allocated_bytes"],
                     "headroom_bytes": room - e["reserved_bytes"]})
    rows.append({"file": os.path.join("rank_1", name1), "device": 0, "verdict": None,
                 "requested_bytes": None, "device_free_bytes": None,
                 "reserved_bytes": eq["reserved_bytes"],
                 "peak_allocated_bytes": eq["peak_allocated_bytes"],
                 "headroom_bytes": room - eq["reserved_bytes"]})
    json.dump({"rows": rows, "room_bytes": room, "unreadable": [], "left_out": 0}, sys.stdout)


def main():
    if sys.argv[1] == "--cluster":
        cluster(sys.argv[2])
        return
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

"""Independent computation of `memsight snapshot --json` with Python's own pickle module.

Usage: python3 snapshot_summary.py FILE [TOP [DEVICE EVENT]]
Prints the same JSON fields memsight does (tests/snapshot.rs compares them). Only for trusted
test files: unlike memsight, pickle.load would run code from a malicious file.
"""
import collections
import json
import pickle
import sys


def main():
    path = sys.argv[1]
    top = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    at = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else None
    with open(path, "rb") as f:
        d = pickle.load(f)
    segs = d.get("segments", [])
    traces = d.get("device_traces", [])
    devices = sorted({s["device"] for s in segs} | {i for i, t in enumerate(traces) if t})

    def trace(dev):
        return traces[dev] if 0 <= dev < len(traces) else []

    def live_at_end(dev):
        last = {}
        for e in trace(dev):
            if e["action"] == "alloc":
                last[e["addr"]] = e["frames"]
        live = {}
        for s in segs:
            if s["device"] != dev:
                continue
            for b in s["blocks"]:
                if b["state"] == "active_allocated":
                    frames = b["frames"] or last.get(b["address"], [])
                    live[b["address"]] = (b["size"], frames)
        return live

    out = {"devices": []}
    for dev in devices:
        dsegs = [s for s in segs if s["device"] == dev]
        blocks = [b for s in dsegs for b in s["blocks"]]
        allocated = sum(b["size"] for b in blocks if b["state"] == "active_allocated")
        evs = trace(dev)
        start = allocated
        for e in evs:
            if e["action"] == "alloc":
                start -= e["size"]
            elif e["action"] == "free_completed":
                start += e["size"]
        peak, peak_event, cur, after = start, None, start, []
        for i, e in enumerate(evs):
            if e["action"] == "alloc":
                cur += e["size"]
            elif e["action"] == "free_completed":
                cur -= e["size"]
            after.append(cur)
            if cur > peak:
                peak, peak_event = cur, i
        out["devices"].append({
            "device": dev,
            "segments": len(dsegs),
            "reserved_bytes": sum(s["total_size"] for s in dsegs),
            "allocated_bytes": allocated,
            "blocks": dict(sorted(collections.Counter(b["state"] for b in blocks).items())),
            "events": dict(sorted(collections.Counter(e["action"] for e in evs).items())),
            "peak_allocated_bytes": peak,
            "peak_event": peak_event,
            "free_in_segments_bytes": sum(
                b["size"] for b in blocks
                if b["state"] not in ("active_allocated", "active_pending_free")),
            "largest_free_block_bytes": max(
                [b["size"] for b in blocks
                 if b["state"] not in ("active_allocated", "active_pending_free")] or [0]),
        })
        if at and at[0] == dev:
            at_after = after

    if at is None:
        live = [v for dev in devices for v in live_at_end(dev).values()]
    else:
        dev, k = at
        evs = trace(dev)
        live_map = live_at_end(dev)
        last, free_frames = {}, {}
        for j, e in enumerate(evs):
            if e["action"] == "alloc":
                last[e["addr"]] = e["frames"]
            elif e["action"] == "free_completed":
                free_frames[j] = last.get(e["addr"], e["frames"])
        for j in range(len(evs) - 1, k, -1):
            e = evs[j]
            if e["action"] == "alloc":
                live_map.pop(e["addr"], None)
            elif e["action"] == "free_completed":
                live_map[e["addr"]] = (e["size"], free_frames[j])
        live = list(live_map.values())
        out["at_event"] = {"device": dev, "event": k, "allocated_bytes": at_after[k],
                           "blocks": len(live_map)}

    groups = {}
    for size, frames in live:
        key = tuple((f["filename"], f["line"], f["name"]) for f in frames)
        g = groups.setdefault(key, [0, 0])
        g[0] += size
        g[1] += 1
    ranked = sorted(groups.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))[:top]
    out["top_stacks"] = [
        {"frames": [{"filename": f, "line": l, "name": n} for f, l, n in key],
         "bytes": b, "blocks": c}
        for key, (b, c) in ranked
    ]
    print(json.dumps(out))


main()

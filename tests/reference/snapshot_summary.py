"""Independent computation of `memsight snapshot --json` with Python's own pickle module.

Usage: python3 snapshot_summary.py FILE [TOP [DEVICE EVENT]]
Prints the same JSON fields memsight does (tests/snapshot.rs compares them). Only for trusted
test files: unlike memsight, pickle.load would run code from a malicious file.
"""
import collections
import json
import pickle
import sys


def replay_at(segs, dev, evs, k):
    """Reserved ranges and held blocks just after event k, by replaying the later events
    backwards from the final state: [start, end, expandable] lists and {addr: [size, pending]}."""
    ranges = sorted([s["address"], s["address"] + s["total_size"], bool(s["is_expandable"])]
                    for s in segs if s["device"] == dev)
    held = {b["address"]: [b["size"], b["state"] == "active_pending_free"]
            for s in segs if s["device"] == dev for b in s["blocks"]
            if b["state"] in ("active_allocated", "active_pending_free")}
    for e in reversed(evs[k + 1:]):
        a, size, act = e.get("addr", 0), e.get("size", 0), e["action"]
        if act == "alloc":
            held.pop(a, None)
        elif act == "free_requested":
            if a in held:
                held[a][1] = False
        elif act == "free_completed":
            held[a] = [size, True]
        elif act in ("segment_alloc", "segment_map"):
            cut = []
            for lo, hi, x in ranges:
                if hi <= a or lo >= a + size:
                    cut.append([lo, hi, x])
                    continue
                if lo < a:
                    cut.append([lo, a, x])
                if hi > a + size:
                    cut.append([a + size, hi, x])
            ranges = sorted(cut)
        elif act in ("segment_free", "segment_unmap"):
            new = [a, a + size, act == "segment_unmap"]
            if new[2]:
                for r in [r for r in ranges if r[2] and (r[1] == new[0] or r[0] == new[1])]:
                    ranges.remove(r)
                    new = [min(new[0], r[0]), max(new[1], r[1]), True]
            ranges = sorted(ranges + [new])
    return ranges, held


def segments_at(segs, dev, evs, k):
    """The figures of the segments just after event k (replay_at's)."""
    ranges, held = replay_at(segs, dev, evs, k)
    free, largest, pending = 0, 0, 0
    for lo, hi, _ in ranges:
        at = lo
        for addr in sorted(x for x in held if lo <= x < hi):
            if addr < at:
                continue
            size, is_pending = held[addr]
            size = min(size, hi - addr)
            free += addr - at
            largest = max(largest, addr - at)
            pending += size if is_pending else 0
            at = addr + size
        free += hi - at
        largest = max(largest, hi - at)
    return {"segments": len(ranges), "reserved_bytes": sum(hi - lo for lo, hi, _ in ranges),
            "pending_free_bytes": pending, "free_in_segments_bytes": free,
            "largest_free_block_bytes": largest}


def live_at(segs, evs, dev, k):
    """The live blocks of device dev just after event k (None: at the end): {addr: (size,
    frames)}. At the end, the `active_allocated` blocks (their frames, else those of the last
    alloc at the address); before, the later events undone: an alloc after k was not live yet,
    a free_completed after k was (with the frames of the last alloc at it before)."""
    last = {}
    for e in evs:
        if e["action"] == "alloc":
            last[e["addr"]] = e["frames"]
    live = {}
    for s in segs:
        if s["device"] != dev:
            continue
        for b in s["blocks"]:
            if b["state"] == "active_allocated":
                live[b["address"]] = (b["size"], b["frames"] or last.get(b["address"], []))
    if k is None:
        return live
    last, free_frames = {}, {}
    for j, e in enumerate(evs):
        if e["action"] == "alloc":
            last[e["addr"]] = e["frames"]
        elif e["action"] == "free_completed":
            free_frames[j] = last.get(e["addr"], e["frames"])
    for j in range(len(evs) - 1, k, -1):
        e = evs[j]
        if e["action"] == "alloc":
            live.pop(e["addr"], None)
        elif e["action"] == "free_completed":
            live[e["addr"]] = (e["size"], free_frames[j])
    return live


# Installed packages and standard modules PyTorch writes relative to sys.path.
LIBRARY_ROOTS = {"torch", "torch_npu", "typing", "transformers", "deepspeed", "numpy"}
MACHINERY = ("torch::unwind::", "torch::CapturedTraceback", "CachingAllocator", "c10::cuda::",
             "c10_npu::", "gather_with_cpp")


def is_library(filename):
    f = filename.replace("\\", "/")
    low = f.lower()
    if low.startswith("<") or "/site-packages/" in low or "/dist-packages/" in low:
        return True
    if "/lib/" in low and any(p.startswith(("python3", "python2")) for p in low.split("/")):
        return True
    if f.startswith(("/", "~")) or f[1:2] == ":":
        return False
    root = f.split("/")[0]
    return (root[:-3] if root.endswith(".py") else root) in LIBRARY_ROOTS


def holder(frames):
    """The frame that names a stack: the user's innermost Python frame, else the innermost
    Python frame, else the innermost C++ frame with a file that is not the allocator's."""
    py = [f for f in frames if f["filename"].lower().endswith((".py", ".pyx"))
          or f["filename"].startswith("<")]
    for f in py:
        if not is_library(f["filename"]):
            return f
    if py:
        return py[0]
    for f in frames:
        if f["filename"] not in ("", "??") and not any(m in f["name"] for m in MACHINERY) \
                and not f["filename"].endswith("CachingAllocator.cpp") \
                and f["filename"] != "memory_snapshot.cpp":
            return f
    return frames[0] if frames else None


def backend(d):
    settings = d.get("allocator_settings") or {}
    if "PYTORCH_CUDA_ALLOC_CONF" in settings:
        return "cuda"
    if "PYTORCH_NPU_ALLOC_CONF" in settings:
        return "npu"
    frames = [f for s in d.get("segments", []) for b in s["blocks"] for f in b["frames"]]
    frames += [f for t in d.get("device_traces", []) for e in t for f in e["frames"]]
    for f in frames:
        fn = f["filename"].replace("\\", "/")
        if "c10_npu::" in f["name"] or "NPUCachingAllocator" in f["name"] or "torch_npu/" in fn:
            return "npu"
        if "c10::cuda::" in f["name"] or fn.endswith("CUDACachingAllocator.cpp") \
                or "torch/cuda/" in fn:
            return "cuda"
    return "npu"


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

    out = {"backend": backend(d), "devices": []}
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
            "label": f"{out['backend'].upper()}:{dev}",
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
        live = [v for dev in devices for v in live_at(segs, trace(dev), dev, None).values()]
    else:
        dev, k = at
        evs = trace(dev)
        live_map = live_at(segs, evs, dev, k)
        live = list(live_map.values())
        out["at_event"] = {"device": dev, "event": k, "allocated_bytes": at_after[k],
                           "blocks": len(live_map)}
        out["at_event"].update(segments_at(segs, dev, evs, k))

    groups = {}
    for size, frames in live:
        key = tuple((f["filename"], f["line"], f["name"]) for f in frames)
        g = groups.setdefault(key, [0, 0])
        g[0] += size
        g[1] += 1
    ranked = sorted(groups.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))[:top]
    out["top_stacks"] = []
    for key, (b, c) in ranked:
        frames = [{"filename": f, "line": l, "name": n} for f, l, n in key]
        out["top_stacks"].append({"frames": frames, "frame": holder(frames), "bytes": b,
                                  "blocks": c})
    tell_apart(out["top_stacks"])
    print(json.dumps(out))


def tell_apart(rows):
    """`via` of each listed stack: when another listed stack is named by the same frame, the
    frame of its stack that most of theirs lack (ties: a Python frame, then the innermost),
    unless none is lacked or it is its naming frame; else None."""
    for r in rows:
        others = [o for o in rows if o is not r and r["frame"] is not None
                  and o["frame"] == r["frame"]]
        via = None
        if others:
            def py(f):
                return f["filename"].lower().endswith((".py", ".pyx")) or f["filename"].startswith("<")
            scored = [(sum(f not in o["frames"] for o in others), py(f), -k, f)
                      for k, f in enumerate(r["frames"])]
            scored = [x for x in scored if x[0] > 0]
            if scored:
                best = max(scored, key=lambda x: x[:3])[3]
                via = best if best != r["frame"] else None
        r["via"] = via


if __name__ == "__main__":
    main()

"""Two allocator snapshots compared, by plain arithmetic over the raw pickles (Python's own
pickle module, no memsight code): the reference `memsight compare A.pickle B.pickle --json` is
checked against (tests/cli/cli_snapshot_compare.rs).

    python3 tests/reference/snapshot_compare.py A.pickle B.pickle [AT_A [AT_B]]

AT_A / AT_B: `peak` (default), `end` or an event index. Each side, on its device (that of its
first `oom` event, else its first device with events, else its first segment's):
- the event: `peak` is the first event after which the running allocated total (alloc adds,
  free_completed subtracts, starting from the final allocated total with the trace undone) is
  largest, the first event when it never rises above its start; `end` is the final state;
- the segments and held blocks then (snapshot_summary.replay_at: the later events undone);
- reserved = Σ segment sizes; allocated = Σ held blocks not pending free;
- causes: each segment's free stretches between held blocks, classified as
  snapshot_fragmentation.py does, with the stream and pool of the final segment holding it;
- live blocks then (alloc to free_completed, with the stack of the last alloc at the address)
  by the holder frame, by size; pools: reserved and allocated by the final segment's pool.

Prints JSON in the shape of memsight's (only the fields checked).
"""
import json
import os
import pickle
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from snapshot_summary import holder, live_at, replay_at  # noqa: E402

CAUSES = ("split_across_segments", "holes_between_live_blocks", "empty_segments",
          "other_stream", "pending_stream_sync", "private_pool")


def device_of(d):
    traces = d.get("device_traces", [])
    for i, t in enumerate(traces):
        if any(e["action"] == "oom" for e in t):
            return i
    for i, t in enumerate(traces):
        if t:
            return i
    segs = d.get("segments", [])
    return segs[0]["device"] if segs else 0


def final_segment(segs, dev, addr):
    for s in segs:
        if s["device"] == dev and s["address"] <= addr < s["address"] + s["total_size"]:
            return s
    return None


def side(d, at):
    segs = d.get("segments", [])
    traces = d.get("device_traces", [])
    dev = device_of(d)
    evs = traces[dev] if dev < len(traces) else []
    allocated_end = sum(b["size"] for s in segs if s["device"] == dev for b in s["blocks"]
                        if b["state"] == "active_allocated")
    if at == "end" or (at == "peak" and not evs):
        k = None
    elif at == "peak":
        cur = allocated_end
        for e in evs:
            if e["action"] == "alloc":
                cur -= e["size"]
            elif e["action"] == "free_completed":
                cur += e["size"]
        peak, k = cur, 0
        for i, e in enumerate(evs):
            if e["action"] == "alloc":
                cur += e["size"]
            elif e["action"] == "free_completed":
                cur -= e["size"]
            if cur > peak:
                peak, k = cur, i
    else:
        k = int(at)
    kk = len(evs) if k is None else k
    stream = evs[k].get("stream", 0) if k is not None and evs[k]["action"] == "oom" else 0
    ranges, held = replay_at(segs, dev, evs, kk)
    causes = dict.fromkeys(CAUSES, 0)
    pools = {}
    reserved = allocated = 0
    for lo, hi, _ in ranges:
        reserved += hi - lo
        g = final_segment(segs, dev, lo)
        own = (g["stream"] if g else stream) == stream
        pool = tuple(g.get("segment_pool_id", (0, 0))) if g else (0, 0)
        private = pool != (0, 0)
        at_addr, runs, holds, seg_alloc = lo, [], False, 0
        for addr in sorted(a for a in held if lo <= a < hi):
            if addr < at_addr:
                continue
            size, pending = held[addr]
            size = min(size, hi - addr)
            if addr > at_addr:
                runs.append((addr - at_addr, holds, True))
            if pending:
                causes["pending_stream_sync"] += size
            else:
                seg_alloc += size
            holds = True
            at_addr = addr + size
        if hi > at_addr:
            runs.append((hi - at_addr, holds, False))
        allocated += seg_alloc
        p = pools.setdefault(pool, [0, 0])
        p[0] += hi - lo
        p[1] += seg_alloc
        for size, before, after in runs:
            if private:
                causes["private_pool"] += size
            elif not own:
                causes["other_stream"] += size
            elif not holds:
                causes["empty_segments"] += size
            elif before and after:
                causes["holes_between_live_blocks"] += size
            else:
                causes["split_across_segments"] += size
    live = live_at(segs, evs, dev, None if k is None else kk)
    stacks, sizes = {}, {}
    for size, frames in live.values():
        h = holder(frames)
        key = json.dumps(h and {"filename": h["filename"], "line": h["line"], "name": h["name"]},
                         sort_keys=True)
        for table, kx in ((stacks, key), (sizes, size)):
            t = table.setdefault(kx, [0, 0])
            t[0] += size
            t[1] += 1
    return {"device": dev, "event": k, "reserved_bytes": reserved, "allocated_bytes": allocated,
            "not_handed_out_bytes": reserved - allocated, "causes": causes,
            "live_bytes": sum(v[0] for v in live.values()), "live_blocks": len(live),
            "stacks": stacks, "sizes": sizes, "pools": pools}


def changes(a, b):
    out = []
    for k in set(a) | set(b):
        x, y = a.get(k, [0, 0]), b.get(k, [0, 0])
        if x != y:
            out.append((k, x[0], y[0], x[1], y[1]))
    return out


def main(pa, pb, at_a="peak", at_b="peak"):
    sides = []
    for path, at in ((pa, at_a), (pb, at_b)):
        with open(path, "rb") as f:
            sides.append(side(pickle.load(f), at))
    a, b = sides
    out = {}
    for name, s in (("a", a), ("b", b)):
        out[name] = {k: s[k] for k in ("device", "event", "reserved_bytes", "allocated_bytes",
                                         "not_handed_out_bytes", "live_bytes", "live_blocks")}
        out[name]["causes"] = s["causes"]
    out["delta"] = {k: b[k] - a[k] for k in ("reserved_bytes", "allocated_bytes",
                                              "not_handed_out_bytes")}
    out["delta"]["causes"] = {c: b["causes"][c] - a["causes"][c] for c in CAUSES}
    out["stacks"] = [{"frame": json.loads(k), "a_bytes": x, "b_bytes": y, "a_blocks": m,
                      "b_blocks": n} for k, x, y, m, n in changes(a["stacks"], b["stacks"])]
    out["sizes"] = [{"size_bytes": k, "a_bytes": x, "b_bytes": y, "a_blocks": m, "b_blocks": n}
                    for k, x, y, m, n in changes(a["sizes"], b["sizes"])]
    out["pools"] = [{"pool": list(p), "a_reserved_bytes": a["pools"].get(p, [0, 0])[0],
                     "b_reserved_bytes": b["pools"].get(p, [0, 0])[0],
                     "a_allocated_bytes": a["pools"].get(p, [0, 0])[1],
                     "b_allocated_bytes": b["pools"].get(p, [0, 0])[1]}
                    for p in sorted(set(a["pools"]) | set(b["pools"]))]
    print(json.dumps(out))


if __name__ == "__main__":
    main(*sys.argv[1:5])

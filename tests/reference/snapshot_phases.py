"""The user's annotations of an allocator snapshot as phases, by plain arithmetic over the raw
pickle (Python's own pickle module, no memsight code): the reference `memsight snapshot --json`'s
`phases` and `live_by_phase` are checked against (tests/cli/cli_snapshot_phases.rs).

    python3 tests/reference/snapshot_phases.py SNAPSHOT.pickle DEVICE [EVENT]

- Pairing: `external_annotations` in order; a START opens (device, name); an END closes the
  latest open START of that (device, name); an END with none open, or an entry without stage,
  name or time_us, is dropped. An unclosed START runs to the end (end_us null).
- depth: how many other annotations of the device contain its [start, end] (an identical span
  counts when it comes earlier).
- An event is in [start, end] by its time_us (no event when any event lacks a time); first and
  last event in it; allocated before = the running total before its first event (alloc adds,
  free_completed subtracts, from final allocated with the trace undone), peak = the most of that
  and the totals after its events (peak_event: the first event reaching it, null when the
  value held before is the most), after = the total after its last event.
- live_by_phase at EVENT (default the end): the live blocks then (alloc to free_completed), each
  by the innermost phase (deepest, then latest start) of the last alloc at its address up to
  EVENT, `null` outside every phase, `before_trace` without such an alloc.

- compile_contexts: per `compile_context` other than N/A (torch.compile regions), its alloc
  events and their bytes, and the live blocks at EVENT whose last alloc was in it.

Prints JSON: {"phases": [...], "live_by_phase": [{"phase", "before_trace", "bytes", "blocks"}],
"compile_contexts": [{"context", "allocs", "alloc_bytes", "live_bytes", "live_blocks"}]}.
"""
import json
import pickle
import sys


def main(path, device, at=None):
    with open(path, "rb") as f:
        d = pickle.load(f)
    segs = d.get("segments", [])
    traces = d.get("device_traces", [])
    evs = traces[device] if 0 <= device < len(traces) else []
    anns, open_ = [], {}
    for a in d.get("external_annotations", []) or []:
        stage, name, time = a.get("stage"), a.get("name"), a.get("time_us")
        if stage is None or name is None or time is None:
            continue
        dev = a.get("device", 0)
        key = (dev, name)
        if stage.upper() == "START":
            open_.setdefault(key, []).append(len(anns))
            anns.append({"name": name, "device": dev, "start_us": time, "end_us": None})
        elif stage.upper() == "END" and open_.get(key):
            anns[open_[key].pop()]["end_us"] = time
    anns = [a for a in anns if a["device"] == device]
    final = sum(b["size"] for s in segs if s["device"] == device for b in s["blocks"]
                if b["state"] == "active_allocated")
    start = final
    for e in evs:
        start += -e["size"] if e["action"] == "alloc" else \
            e["size"] if e["action"] == "free_completed" else 0
    totals, cur = [], start
    for e in evs:
        cur += e["size"] if e["action"] == "alloc" else \
            -e["size"] if e["action"] == "free_completed" else 0
        totals.append(cur)
    timed = bool(evs) and all("time_us" in e and e["time_us"] is not None for e in evs)
    big = 2 ** 63 - 1
    phases = []
    for i, a in enumerate(anns):
        lo, hi = a["start_us"], a["end_us"] if a["end_us"] is not None else big
        depth = 0
        for j, b in enumerate(anns):
            blo, bhi = b["start_us"], b["end_us"] if b["end_us"] is not None else big
            if j != i and blo <= lo and bhi >= hi and ((blo, bhi) != (lo, hi) or j < i):
                depth += 1
        inside = [k for k, e in enumerate(evs) if timed and lo <= e["time_us"] <= hi]
        if inside:
            f, l = inside[0], inside[-1]
            held = start if f == 0 else totals[f - 1]
            peak = max([held] + totals[f:l + 1])
            peak_event = None if peak == held else f + totals[f:l + 1].index(peak)
            after = totals[l]
        else:
            f = l = None
            if timed:
                n = sum(1 for e in evs if e["time_us"] < lo)
                held = start if n == 0 else totals[n - 1]
            else:
                held = start
            peak = after = held
            peak_event = None
        phases.append({"device": device, "name": a["name"], "start_us": a["start_us"],
                       "end_us": a["end_us"], "depth": depth, "first_event": f,
                       "last_event": l, "allocated_before_bytes": held,
                       "peak_allocated_bytes": peak, "peak_event": peak_event,
                       "allocated_after_bytes": after})
    # The innermost phase of each event.
    def phase_of(k):
        best = None
        for i, p in enumerate(phases):
            if p["first_event"] is not None and p["first_event"] <= k <= p["last_event"]:
                rank = (p["depth"], p["start_us"], i)
                if best is None or rank > best[0]:
                    best = (rank, p["name"])
        return best and best[1]
    # Live blocks at the event.
    upto = len(evs) if at is None else min(at + 1, len(evs))
    live = {b["address"]: b["size"] for s in segs if s["device"] == device
            for b in s["blocks"] if b["state"] == "active_allocated"}
    if at is not None:
        for e in reversed(evs[at + 1:]):
            if e["action"] == "alloc":
                live.pop(e["addr"], None)
            elif e["action"] == "free_completed":
                live[e["addr"]] = e["size"]
    alloc_at = {}
    for k, e in enumerate(evs[:upto]):
        if e["action"] == "alloc":
            alloc_at[e["addr"]] = k
    groups = {}
    for addr, size in live.items():
        if addr not in alloc_at:
            key = (None, True)
        else:
            key = (phase_of(alloc_at[addr]), False)
        g = groups.setdefault(key, [0, 0])
        g[0] += size
        g[1] += 1
    holding = [{"phase": k[0], "before_trace": k[1], "bytes": v[0], "blocks": v[1]}
               for k, v in groups.items()]
    # Compiled regions: alloc events naming one, and the live blocks they allocated.
    regions = {}
    for e in evs:
        c = e.get("compile_context") or "N/A"
        if e["action"] == "alloc" and c != "N/A":
            r = regions.setdefault(c, [0, 0, 0, 0])
            r[0] += 1
            r[1] += e["size"]
    for addr, size in live.items():
        if addr in alloc_at:
            c = evs[alloc_at[addr]].get("compile_context") or "N/A"
            if c != "N/A":
                r = regions.setdefault(c, [0, 0, 0, 0])
                r[2] += size
                r[3] += 1
    compiled = [{"context": c, "allocs": r[0], "alloc_bytes": r[1], "live_bytes": r[2],
                 "live_blocks": r[3]} for c, r in sorted(regions.items())]
    print(json.dumps({"phases": phases, "live_by_phase": holding,
                      "compile_contexts": compiled}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), *(int(a) for a in sys.argv[3:4]))

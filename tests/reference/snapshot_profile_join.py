"""A snapshot joined by time with a PyTorch profiler trace of the same run, by plain arithmetic
over the raw files (Python's pickle and json modules, no memsight code): the reference
`memsight snapshot --profile --json`'s `profile_join` is checked against
(tests/cli/cli_snapshot_join.rs).

    python3 tests/reference/snapshot_profile_join.py SNAPSHOT.pickle TRACE.json[.gz] AT_EVENT

- Clocks: a trace event at `ts` µs happened at Unix ns ts × 1000 + baseTimeNanoseconds; a
  snapshot event at Unix µs time_us is at time_us × 1000 − base on the trace's clock.
- The profile's allocations: the `[memory]` events of Device Type 1, Device Id 0 with Bytes > 0,
  in time order (file order on ties); their span [first, last].
- The snapshot's `alloc` events of device 0 in trace order; one is within the span when its time
  is within [first − 1 ms, last + 1 ms]; it takes the allocation of the same Bytes (its size, or its size rounded up to 512:
  the profiler reports the allocator's block, the snapshot the size asked for) whose time is
  within 1 ms of its own plus the clocks' offset, not taken before, nearest (ties: the earlier
  allocation). The offset: over every alloc event within the span and every allocation of its
  Bytes within 1 ms, (allocation time − event time) // 2000 counted; the fullest bin (ties: the
  bin nearest 0, then the lower) × 2000 + 1000; 0 without any.
- Its operator: the innermost `cpu_op` running on the allocation's thread (pid, tid) at that
  time (start ≤ t ≤ start + dur; the latest start, then the shortest); its step: the
  `ProfilerStep#N` span with start ≤ t < end.
- The live blocks just after AT_EVENT: replay of alloc / free_completed over events 0..AT_EVENT.

Prints JSON: {"base_time_ns", "clock_offset_ns", "alloc_events", "in_profile", "matched", "blocks": [{"addr",
"size", "event", "profile_ns", "op", "step"}] by address}.
"""
import bisect
import collections
import decimal
import gzip
import json
import pickle
import sys

TOL = 1_000_000


def same(bytes_, size):
    """The profile's Bytes is the allocator's block: the size asked for, rounded up to 512."""
    return bytes_ == size or (size > 0 and -(-size // 512) * 512 == bytes_)
BIN = 2_000


def ns(ts):
    return int(decimal.Decimal(str(ts)) * 1000)


def main(snap_path, trace_path, at):
    with open(snap_path, "rb") as f:
        snap = pickle.load(f)
    opener = gzip.open if trace_path.endswith(".gz") else open
    with opener(trace_path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    base = int(doc["baseTimeNanoseconds"])
    allocs, ops, steps = [], collections.defaultdict(list), []
    for i, e in enumerate(doc["traceEvents"]):
        a = e.get("args") or {}
        thread = (str(e.get("pid")), str(e.get("tid")))
        if e.get("name") == "[memory]" and a.get("Device Type") == 1 and a.get("Device Id") == 0:
            if int(a["Bytes"]) > 0:
                allocs.append((ns(e["ts"]), i, int(a["Bytes"]), thread))
        elif e.get("ph") == "X" and e.get("cat") == "cpu_op":
            s = ns(e["ts"])
            ops[thread].append((s, s + ns(e.get("dur", 0)), e.get("name", "")))
        elif e.get("ph") == "X" and str(e.get("name", "")).startswith("ProfilerStep#"):
            s = ns(e["ts"])
            steps.append((s, s + ns(e.get("dur", 0)), int(e["name"].split("#", 1)[1])))
    allocs.sort(key=lambda r: (r[0], r[1]))
    times = [r[0] for r in allocs]
    first, last = times[0], times[-1]
    trace = snap["device_traces"][0]
    def match_all(offset):
        used = [False] * len(allocs)
        match = {}
        n_alloc = n_in = 0
        for k, e in enumerate(trace):
            if e["action"] != "alloc":
                continue
            n_alloc += 1
            t = e["time_us"] * 1000 - base
            if not (first - TOL <= t <= last + TOL):
                continue
            n_in += 1
            t += offset
            lo, hi = bisect.bisect_left(times, t - TOL), bisect.bisect_right(times, t + TOL)
            cands = [i for i in range(lo, hi) if not used[i] and same(allocs[i][2], e["size"])]
            if cands:
                i = min(cands, key=lambda i: (abs(allocs[i][0] - t), i))
                used[i] = True
                match[k] = (allocs[i], t - offset)
        return match, n_alloc, n_in

    bins = collections.Counter()
    for e in trace:
        t = e["time_us"] * 1000 - base
        if e["action"] != "alloc" or not (first - TOL <= t <= last + TOL):
            continue
        lo, hi = bisect.bisect_left(times, t - TOL), bisect.bisect_right(times, t + TOL)
        for i in range(lo, hi):
            if same(allocs[i][2], e["size"]):
                bins[(allocs[i][0] - t) // BIN] += 1
    offset = 0
    if bins:
        best = max(bins.items(), key=lambda kv: (kv[1], -abs(kv[0]), -kv[0]))[0]
        offset = best * BIN + BIN // 2
    match, n_alloc, n_in = match_all(offset)
    n_match = len(match)
    match = {k: m[0] for k, m in match.items()}
    live = {}
    for k, e in enumerate(trace[: at + 1]):
        if e["action"] == "alloc":
            live[e["addr"]] = (e["size"], k)
        elif e["action"] == "free_completed":
            live.pop(e["addr"], None)

    def op_of(t, thread):
        inside = [o for o in ops[thread] if o[0] <= t <= o[1]]
        return max(inside, key=lambda o: (o[0], -o[1]))[2] if inside else ""

    def step_of(t):
        return next((s[2] for s in steps if s[0] <= t < s[1]), None)

    blocks = []
    for addr in sorted(live):
        size, k = live[addr]
        m = match.get(k)
        blocks.append({"addr": addr, "size": size, "event": k,
                       "profile_ns": m[0] if m else None,
                       "op": op_of(m[0], m[3]) if m else None,
                       "step": step_of(m[0]) if m else None})
    print(json.dumps({"base_time_ns": base, "clock_offset_ns": offset, "alloc_events": n_alloc, "in_profile": n_in,
                      "matched": n_match, "blocks": blocks}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))

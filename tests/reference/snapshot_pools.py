"""Private memory pools of an allocator snapshot's device over its trace, by plain arithmetic
over the raw pickle (Python's own pickle module, no memsight code): the reference
`memsight snapshot --json`'s `private_pools` is checked against
(tests/cli/cli_snapshot_fields.rs).

    python3 tests/reference/snapshot_pools.py SNAPSHOT.pickle DEVICE

- A private pool: a `segment_pool_id` other than (0, 0) among the device's segments at the end;
  its segments, their total_size, the bytes of their active_allocated blocks.
- An event of the device's trace is the pool's when its addr lies in [address, address +
  total_size) of one of those segments; segment_alloc / segment_map add its size to reserved,
  segment_free / segment_unmap take it away; alloc adds to allocated, free_completed takes away.
- Undo the pool's events from the end's figures for the start; replay; peaks of both (the
  start counts), and the first event that raises allocated above every earlier value (null:
  the start is the most).

Prints JSON: [{"pool", "segments", "reserved_bytes", "allocated_bytes", "peak_reserved_bytes",
"peak_allocated_bytes", "peak_event"}], by pool id.
"""
import json
import pickle
import sys


def main(path, device):
    with open(path, "rb") as f:
        d = pickle.load(f)
    segs = [s for s in d.get("segments", []) if s.get("device", 0) == device
            and tuple(s.get("segment_pool_id", (0, 0))) != (0, 0)]
    traces = d.get("device_traces", [])
    trace = traces[device] if 0 <= device < len(traces) else []
    out = []
    for pool in sorted({tuple(s["segment_pool_id"]) for s in segs}):
        mine = [s for s in segs if tuple(s["segment_pool_id"]) == pool]
        reserved = sum(s["total_size"] for s in mine)
        allocated = sum(b["size"] for s in mine for b in s["blocks"]
                        if b["state"] == "active_allocated")

        def delta(e):
            a = e["action"]
            if a in ("segment_alloc", "segment_map"):
                return e["size"], 0
            if a in ("segment_free", "segment_unmap"):
                return -e["size"], 0
            if a == "alloc":
                return 0, e["size"]
            if a == "free_completed":
                return 0, -e["size"]
            return None

        evs = []
        for k, e in enumerate(trace):
            addr = e.get("addr")
            if addr is None or delta(e) is None:
                continue
            if any(s["address"] <= addr < s["address"] + s["total_size"] for s in mine):
                evs.append((k, delta(e)))
        r, h = reserved, allocated
        for _, (dr, dh) in evs:
            r, h = r - dr, h - dh
        peak_r, peak_h, peak_event = r, h, None
        for k, (dr, dh) in evs:
            r, h = r + dr, h + dh
            peak_r = max(peak_r, r)
            if h > peak_h:
                peak_h, peak_event = h, k
        out.append({"pool": list(pool), "segments": len(mine), "reserved_bytes": reserved,
                    "allocated_bytes": allocated, "peak_reserved_bytes": peak_r,
                    "peak_allocated_bytes": peak_h, "peak_event": peak_event})
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))

"""Writes a synthetic caching-allocator snapshot shaped like torch_npu's `_dump_snapshot`
(segments with blocks, one event trace per device, frame dicts shared between events as the
real files share them), for benchmarks of `memsight snapshot`.

Usage: python3 scripts/gen_snapshot.py OUT.pickle [EVENTS] [DEVICES] [--timed]
(--timed: every event gets a `time_us`, as CUDA snapshots have.)
"""
import pickle
import random
import sys


def main():
    out = sys.argv[1]
    events = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    devices = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    timed = "--timed" in sys.argv[4:]
    rng = random.Random(1234)
    # A few hundred distinct frames, combined into a few thousand stacks.
    frames = [{"filename": f"/work/model/layer_{i % 40}.py", "line": 10 + i, "name": f"fn_{i}"}
              for i in range(400)]
    stacks = [[frames[rng.randrange(400)] for _ in range(rng.randint(3, 14))] for _ in range(3000)]
    segments, traces = [], []
    for dev in range(devices):
        live, trace = {}, []
        clock = 1_700_000_000_000_000
        addr = 0x1240_0000_0000 + dev * (1 << 40)
        for _ in range(events // devices):
            if live and rng.random() < 0.48:
                a = rng.choice(list(live)) if len(live) < 64 else next(iter(live))
                size, st = live.pop(a)
                trace.append({"action": "free_requested", "addr": a, "size": size, "stream": 0, "frames": []})
                trace.append({"action": "free_completed", "addr": a, "size": size, "stream": 0, "frames": []})
            else:
                size = 512 * rng.randint(1, 8192)
                addr += size
                st = stacks[rng.randrange(len(stacks))]
                live[addr] = (size, st)
                trace.append({"action": "alloc", "addr": addr, "size": size, "stream": 0, "frames": st})
        blocks = [{"address": a, "size": s, "requested_size": s, "state": "active_allocated", "frames": []}
                  for a, (s, _) in live.items()]
        total = sum(b["size"] for b in blocks) + (2 << 20)
        segments.append({"device": dev, "address": 0x1240_0000_0000 + dev * (1 << 40), "total_size": total,
                         "allocated_size": total - (2 << 20), "active_size": total - (2 << 20),
                         "requested_size": total - (2 << 20), "stream": 0, "segment_pool_id": (0, 0),
                         "segment_type": "large", "is_expandable": True, "frames": [], "blocks": blocks})
        if timed:
            for e in trace:
                clock += rng.randint(1, 50)
                e["time_us"] = clock
        traces.append(trace)
    with open(out, "wb") as f:
        pickle.dump({"segments": segments, "device_traces": traces}, f, protocol=4)


main()

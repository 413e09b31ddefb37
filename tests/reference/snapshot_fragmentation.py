"""Fragmentation by cause, by plain segment and block arithmetic over a raw allocator snapshot
(`torch.cuda.memory._dump_snapshot` / torch_npu's): the reference `memsight snapshot --json`'s
`fragmentation` is checked against (tests/cli/cli_snapshot_fragmentation.rs). No memsight code,
no torch: the pickle holds only dicts, lists and numbers.

    python3 tests/reference/snapshot_fragmentation.py SNAPSHOT.pickle DEVICE [STREAM]

At the snapshot's own state (its `segments`), for a request on STREAM (default 0), each
segment's blocks in address order, neighbouring free (`inactive`) blocks merged into runs:
- pending_stream_sync: the `active_pending_free` blocks;
- private_pool: every free run of a segment whose `segment_pool_id` is not (0, 0);
- other_stream: every free run of another segment whose `stream` is not STREAM;
- empty_segments: the free runs of a segment that holds no allocated or pending block;
- holes_between_live_blocks: a run with a held block before and after it;
- split_across_segments: any other run (at a segment's edge);
- largest_possible_bytes: the largest run of a segment of STREAM outside private pools.

Prints JSON: {"reserved_bytes", "allocated_bytes", "causes": {kind: bytes},
"largest_possible_bytes"}.
"""
import json
import pickle
import sys


def main(path, device, stream=0):
    with open(path, "rb") as f:
        snap = pickle.load(f)
    segments = snap["segments"] if isinstance(snap, dict) else snap
    causes = {k: 0 for k in ("split_across_segments", "holes_between_live_blocks", "empty_segments",
                             "other_stream", "pending_stream_sync", "private_pool")}
    reserved = allocated = largest = 0
    for seg in segments:
        if seg.get("device", 0) != device:
            continue
        reserved += seg["total_size"]
        own = seg.get("stream", 0) == stream
        private = tuple(seg.get("segment_pool_id", (0, 0))) != (0, 0)
        blocks = sorted(seg["blocks"], key=lambda b: b["address"]) if seg["blocks"] and "address" in seg["blocks"][0] else seg["blocks"]
        held = [b["state"] in ("active_allocated", "active_pending_free") for b in blocks]
        holds = any(held)
        run, before = 0, False
        runs = []
        for b, h in zip(blocks, held):
            if b["state"] == "active_allocated":
                allocated += b["size"]
            if b["state"] == "active_pending_free":
                causes["pending_stream_sync"] += b["size"]
            if h:
                if run:
                    runs.append((run, before, True))
                run, before = 0, True
            else:
                run += b["size"]
        if run:
            runs.append((run, before, False))
        for size, b, a in runs:
            if private:
                causes["private_pool"] += size
            elif not own:
                causes["other_stream"] += size
            elif not holds:
                causes["empty_segments"] += size
            elif b and a:
                causes["holes_between_live_blocks"] += size
            else:
                causes["split_across_segments"] += size
            if own and not private:
                largest = max(largest, size)
    print(json.dumps({"reserved_bytes": reserved, "allocated_bytes": allocated, "causes": causes,
                      "largest_possible_bytes": largest}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), *(int(a) for a in sys.argv[3:4]))

"""Makes real CUDA allocator snapshots that carry the 2026 fields memsight reads (issue 45,
part 3), on a machine with a GPU: a torch.compile'd model (FX-augmented frames: `fx_node_op`,
`fx_original_trace`; `compile_context` on events), record_function annotations
(`external_annotations`), pinned host memory (`host_segments` / `host_traces`, when this torch
records them) and a CUDA graph's private pool (`segment_pool_id`).

    python3 tests/reference/make_cuda_snapshot_fields.py OUT_DIR

Writes OUT_DIR/compiled.pickle and OUT_DIR/fields.json (torch version, the history call's
parameters, and which keys each part of the snapshot has).
"""
import inspect
import json
import os
import pickle
import sys

import torch


def main(out):
    os.makedirs(out, exist_ok=True)
    rec = torch.cuda.memory._record_memory_history
    params = list(inspect.signature(rec).parameters)
    kwargs = {"max_entries": 200000, "context": "all", "stacks": "all"}
    for extra in ("record_pinned_host_memory", "compile_context", "clear_history"):
        if extra in params:
            kwargs[extra] = True
    rec(**kwargs)
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(1024, 4096), torch.nn.GELU(), torch.nn.Linear(4096, 1024)
    ).cuda()
    opt = torch.optim.AdamW(model.parameters())
    compiled = torch.compile(model)
    pinned = []
    for step in range(2):
        with torch.profiler.record_function(f"ProfilerStep#{step}"):
            x = torch.empty(256, 1024, pin_memory=True).normal_()
            pinned.append(x)
            with torch.profiler.record_function("forward"):
                loss = compiled(x.cuda(non_blocking=True)).square().mean()
            with torch.profiler.record_function("backward"):
                loss.backward()
            with torch.profiler.record_function("optimizer"):
                opt.step()
                opt.zero_grad(set_to_none=True)
    # A CUDA graph: its own private pool.
    static_in = torch.randn(64, 1024, device="cuda")
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        model(static_in)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_out = model(static_in)
    g.replay()
    torch.cuda.synchronize()
    snap = torch.cuda.memory._snapshot()
    path = os.path.join(out, "compiled.pickle")
    with open(path, "wb") as f:
        pickle.dump(snap, f)
    frame_keys, event_keys, block_keys, seg_keys = set(), set(), set(), set()
    for t in snap.get("device_traces", []):
        for e in t:
            event_keys |= set(e)
            for fr in e.get("frames", []):
                frame_keys |= set(fr)
    for sg in snap.get("segments", []):
        seg_keys |= set(sg)
        for b in sg.get("blocks", []):
            block_keys |= set(b)
            for fr in b.get("frames", []):
                frame_keys |= set(fr)
    fields = {
        "torch": torch.__version__,
        "history_params": params,
        "history_kwargs": kwargs,
        "top_keys": sorted(snap),
        "segment_keys": sorted(seg_keys),
        "block_keys": sorted(block_keys),
        "event_keys": sorted(event_keys),
        "frame_keys": sorted(frame_keys),
        "pools": sorted({tuple(sg.get("segment_pool_id", (0, 0))) for sg in snap["segments"]}),
        "size_bytes": os.path.getsize(path),
        "static_out": list(static_out.shape),
    }
    with open(os.path.join(out, "fields.json"), "w") as f:
        json.dump(fields, f, indent=1)
    print(json.dumps(fields, indent=1))


if __name__ == "__main__":
    main(sys.argv[1])

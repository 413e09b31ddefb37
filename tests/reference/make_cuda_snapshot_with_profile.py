"""Makes, on a machine with a GPU, a real allocator snapshot and a real PyTorch profiler trace
of the same run (issue 45, part 4: a snapshot beside a profile, joined by time), plus an
FX-augmented snapshot of a torch.compile'd model (part 3: `fx_node_op`, `fx_original_trace`).

    python3 tests/reference/make_cuda_snapshot_with_profile.py OUT_DIR

Writes OUT_DIR/run.pickle (the snapshot), OUT_DIR/run.pt.trace.json.gz (the profile of the
same three steps), OUT_DIR/fx.pickle (FX-augmented, when this torch can) and OUT_DIR/run.json
(torch version, what was recorded, and the clocks of both files for the join).
"""
import gzip
import inspect
import json
import os
import pickle
import sys
import time

import torch


class Block(torch.nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = torch.nn.LayerNorm(d)
        self.up = torch.nn.Linear(d, 4 * d)
        self.down = torch.nn.Linear(4 * d, d)

    def forward(self, x):
        h = self.up(self.norm(x))
        return x + self.down(torch.nn.functional.gelu(h))


def main(out):
    os.makedirs(out, exist_ok=True)
    info = {"torch": torch.__version__}
    torch.manual_seed(0)
    model = torch.nn.Sequential(Block(512), Block(512)).cuda()
    opt = torch.optim.AdamW(model.parameters())
    x = torch.randn(64, 128, 512, device="cuda")
    torch.cuda.synchronize()
    rec = torch.cuda.memory._record_memory_history
    kwargs = {"max_entries": 100000, "context": "all", "stacks": "python"}
    if "record_pinned_host_memory" in inspect.signature(rec).parameters:
        kwargs["record_pinned_host_memory"] = True
    info["history_kwargs"] = kwargs
    rec(**kwargs)
    info["wall_before_us"] = int(time.time() * 1e6)
    trace = os.path.join(out, "run.pt.trace.json")
    with torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA],
        profile_memory=True,
        record_shapes=True,
        with_stack=True,
        schedule=torch.profiler.schedule(wait=0, warmup=0, active=3, repeat=1),
        # Export when the cycle ends: the cycle's end clears the events, so a later
        # export_chrome_trace would write an almost empty trace.
        on_trace_ready=lambda p: p.export_chrome_trace(trace),
    ) as prof:
        for step in range(3):
            pinned = torch.empty(1 << 20, pin_memory=True)
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            del pinned
            prof.step()
    torch.cuda.synchronize()
    info["wall_after_us"] = int(time.time() * 1e6)
    snap = torch.cuda.memory._snapshot()
    rec(enabled=None)
    with open(os.path.join(out, "run.pickle"), "wb") as f:
        pickle.dump(snap, f)
    with open(trace, "rb") as f, gzip.open(trace + ".gz", "wb") as g:
        g.write(f.read())
    os.remove(trace)
    info["snapshot_keys"] = sorted(snap)
    times = [e.get("time_us") for t in snap.get("device_traces", []) for e in t if e.get("time_us")]
    info["snapshot_time_us"] = [min(times), max(times)] if times else None
    info["host_segments"] = len(snap.get("host_segments", []) or [])
    ht = snap.get("host_traces")
    info["host_traces_type"] = type(ht).__name__ if ht is not None else None
    if isinstance(ht, list) and ht:
        info["host_traces_first"] = type(ht[0]).__name__
        first = ht[0] if isinstance(ht[0], dict) else (ht[0][0] if ht[0] else None)
        info["host_trace_entry_keys"] = sorted(first) if isinstance(first, dict) else None
    hs = snap.get("host_segments") or []
    if hs:
        info["host_segment_keys"] = sorted(hs[0])

    # FX-augmented frames: a compiled model whose FX graph runs as Python (aot_eager).
    try:
        import torch.fx.experimental._config as fx_config

        fx_config.enrich_profiler_metadata = True
        rec(max_entries=100000, context="all", stacks="python")
        compiled = torch.compile(Block(512).cuda(), backend="aot_eager")
        y = compiled(torch.randn(32, 64, 512, device="cuda"))
        y.sum().backward()
        torch.cuda.synchronize()
        s = torch.cuda.memory._snapshot(augment_with_fx_traces=True)
        rec(enabled=None)
        with open(os.path.join(out, "fx.pickle"), "wb") as f:
            pickle.dump(s, f)
        n = sum(
            1
            for t in s.get("device_traces", [])
            for e in t
            for fr in e.get("frames", [])
            if "fx_original_trace" in fr
        )
        info["fx_frames_with_original_trace"] = n
    except Exception as e:  # an older torch: say so
        info["fx_error"] = repr(e)
    with open(os.path.join(out, "run.json"), "w") as f:
        json.dump(info, f, indent=1)
    print(json.dumps(info, indent=1))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "out")

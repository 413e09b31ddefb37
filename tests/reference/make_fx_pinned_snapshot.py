"""Makes fixtures/snapshots/fx_pinned/fx_pinned.pickle on a CPU-only machine: a snapshot whose
frames PyTorch itself augmented with FX node data (`fx_node_op`, `fx_node_name`,
`fx_original_trace`), with pinned host memory (`host_segments` / `host_traces`).

    python3 tests/reference/make_fx_pinned_snapshot.py OUT.pickle

Also writes pinned_only.pickle beside OUT.pickle: the pinned part alone, as with
`record_cuda=False`, with `host_traces` as a list of lists.

- The FX part is real: a model compiled with `torch.compile(backend="aot_eager")` under
  `torch.fx.experimental._config.enrich_profiler_metadata = True` runs its FX graphs as
  generated Python files (`fx_generated_*.py`); blocks and events get stacks whose innermost
  frame is a line of those files, and PyTorch's own `_augment_memory_snapshot_stack_traces`
  (what `_dump_snapshot(augment_with_fx_traces=True)` calls) adds the fx_* keys.
- The allocator part is written by hand in the layout of `torch.cuda.memory._snapshot()`
  (a CUDA allocator needs a GPU): one device segment with three blocks and their events.
- The pinned part follows PyTorch 2.15's `record_pinned_host_memory=True`: `host_segments` is
  a list of segment dicts and `host_traces` a list of trace-entry dicts, each in the layout of
  the device's. (No GPU here to record a real one; memsight also reads `host_traces` written
  as a list of lists, as `device_traces` is.)

Paths of this machine are rewritten to /home/user/.
"""
import os
import pickle
import sys

import torch
import torch.fx.experimental._config as fx_config
from torch.fx.traceback import _FX_METADATA_REGISTRY
from torch._utils import _augment_memory_snapshot_stack_traces

HERE = os.path.abspath(__file__)
MB = 1 << 20


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(16, 64)
        self.down = torch.nn.Linear(64, 16)

    def forward(self, x):
        h = torch.relu(self.up(x))
        return self.down(h) * 2


def generated_lines():
    """(file, line) of each call_function node of the forward graph with a source trace."""
    fx_config.enrich_profiler_metadata = True
    torch.manual_seed(0)
    compiled = torch.compile(Mlp(), backend="aot_eager")
    compiled(torch.randn(4, 16)).sum().backward()
    out, seen = [], set()
    for name, md in _FX_METADATA_REGISTRY.items():
        nodes = md.get("node_metadata", {})
        for line, idx in sorted(md.get("lineno_map", {}).items()):
            node = nodes.get(idx) if idx is not None else None
            trace = node and node.get("op") == "call_function" and node.get("stack_trace")
            if trace and trace not in seen:  # one generated line per line of the model
                seen.add(trace)
                out.append((name, line + md.get("prologue_start", 0)))
    return out


def main(path):
    lines = generated_lines()
    assert len(lines) >= 2, lines
    user = {"filename": "/home/user/train.py", "line": 30, "name": "step"}
    lib = {"filename": "/home/user/.venv/lib/python3.11/site-packages/torch/_dynamo/eval_frame.py",
           "line": 838, "name": "compile_wrapper"}

    def stack(i):
        f, line = lines[i % len(lines)]
        return [{"filename": f, "line": line, "name": "forward"}, dict(lib), dict(user)]

    base, t0 = 0x7F0000000000, 1795713682000000
    sizes = [2 * MB, 3 * MB, 1 * MB]
    blocks, events = [], []
    addr = base
    for i, size in enumerate(sizes):
        state = "inactive" if i == 2 else "active_allocated"
        blocks.append({"address": addr, "size": size, "requested_size": size, "state": state,
                       "frames": stack(i) if state != "inactive" else []})
        events.append({"action": "alloc", "addr": addr, "size": size, "stream": 0,
                       "time_us": t0 + 10 * i, "frames": stack(i)})
        addr += size
    events.append({"action": "free_requested", "addr": base + 5 * MB, "size": MB, "stream": 0,
                   "time_us": t0 + 40, "frames": stack(2)})
    events.append({"action": "free_completed", "addr": base + 5 * MB, "size": MB, "stream": 0,
                   "time_us": t0 + 41, "frames": stack(2)})
    segment = {"device": 0, "address": base, "total_size": 8 * MB, "allocated_size": 5 * MB,
               "active_size": 5 * MB, "requested_size": 5 * MB, "stream": 0,
               "segment_type": "large", "segment_pool_id": (0, 0), "is_expandable": False,
               "frames": [], "blocks": blocks + [{"address": base + 6 * MB, "size": 2 * MB,
                                                   "requested_size": 0, "state": "inactive",
                                                   "frames": []}]}
    # Pinned host memory: two host segments (the pinned allocator rounds to powers of two and
    # gives each its own block); one live loader buffer, one freed but waiting for its copy's
    # stream, and an earlier buffer freed and reused.
    loader = [{"filename": "/home/user/data.py", "line": 77, "name": "pin_batch"}, dict(user)]
    h0, h1 = 0x7E0000000000, 0x7E0000800000
    host_segments = [
        {"device": -1, "address": h0, "total_size": 8 * MB, "allocated_size": 8 * MB,
         "active_size": 8 * MB, "requested_size": 6 * MB, "stream": 0, "segment_type": "large",
         "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
         "blocks": [{"address": h0, "size": 8 * MB, "requested_size": 6 * MB,
                     "state": "active_allocated", "frames": loader}]},
        {"device": -1, "address": h1, "total_size": 4 * MB, "allocated_size": 0,
         "active_size": 4 * MB, "requested_size": 3 * MB, "stream": 0, "segment_type": "large",
         "segment_pool_id": (0, 0), "is_expandable": False, "frames": [],
         "blocks": [{"address": h1, "size": 4 * MB, "requested_size": 3 * MB,
                     "state": "active_pending_free", "frames": []}]},
    ]
    host_traces = [
        {"action": "segment_alloc", "addr": h0, "size": 8 * MB, "stream": 0,
         "time_us": t0 + 1, "frames": loader},
        {"action": "alloc", "addr": h0, "size": 8 * MB, "stream": 0, "time_us": t0 + 2,
         "frames": loader},
        {"action": "segment_alloc", "addr": h1, "size": 4 * MB, "stream": 0,
         "time_us": t0 + 3, "frames": loader},
        {"action": "alloc", "addr": h1, "size": 4 * MB, "stream": 0, "time_us": t0 + 4,
         "frames": loader},
        {"action": "free_requested", "addr": h0, "size": 8 * MB, "stream": 0,
         "time_us": t0 + 5, "frames": loader},
        {"action": "free_completed", "addr": h0, "size": 8 * MB, "stream": 0,
         "time_us": t0 + 6, "frames": loader},
        {"action": "alloc", "addr": h0, "size": 8 * MB, "stream": 0, "time_us": t0 + 7,
         "frames": loader},
        {"action": "free_requested", "addr": h1, "size": 4 * MB, "stream": 0,
         "time_us": t0 + 8, "frames": loader},
    ]
    snap = {
        "segments": [segment],
        "device_traces": [events],
        "allocator_settings": {"PYTORCH_CUDA_ALLOC_CONF": "", "expandable_segments": False},
        "host_segments": host_segments,
        "host_traces": host_traces,
    }
    _augment_memory_snapshot_stack_traces(snap)
    assert any("fx_original_trace" in f for e in events for f in e["frames"]), "no fx frames"

    def scrub(v):
        if isinstance(v, str):
            return v.replace(HERE, "/home/user/model.py")
        if isinstance(v, dict):
            return {k: scrub(x) for k, x in v.items()}
        if isinstance(v, list):
            return [scrub(x) for x in v]
        if isinstance(v, tuple):
            return tuple(scrub(x) for x in v)
        return v

    with open(path, "wb") as f:
        pickle.dump(scrub(snap), f, protocol=2)
    # `record_cuda=False`: only the pinned memory, its trace as a list of lists.
    only = os.path.join(os.path.dirname(path), "pinned_only.pickle")
    with open(only, "wb") as f:
        pickle.dump(scrub({"host_segments": host_segments, "host_traces": [host_traces]}), f,
                    protocol=2)
    print(path, only, "written")


if __name__ == "__main__":
    main(sys.argv[1])

"""Real CUDA allocator snapshots for checking who memsight names as a block's holder, and an
OOM under a per-process cap (run on a machine with a GPU; writes into $OUT).

Usage: python3 cuda_snapshot_check.py
Writes `all.pickle` (context="all", stacks="all": C++ frames innermost), `python.pickle`
(context="alloc", stacks="python") and `capped_oom.pickle` (a request past a 1 GiB cap while
the device has tens of GiB free), and `expect.json`: this file's path, the line of each
allocation site below, and PyTorch's own OOM message.
"""
import inspect
import json
import os
import sys

import torch

OUT = os.environ.get("OUT", ".")
HERE = os.path.abspath(__file__)
LINES = {}


def mark(name):
    """Record the line that calls mark() + 1: the allocation site that follows it."""
    LINES[name] = inspect.currentframe().f_back.f_lineno + 1


class Block(torch.nn.Module):
    def __init__(self, h):
        super().__init__()
        self.ln = torch.nn.LayerNorm(h)
        self.fc1 = torch.nn.Linear(h, 4 * h)
        self.fc2 = torch.nn.Linear(4 * h, h)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(self.ln(x))))


def train_step(model, opt, x):
    loss = model(x).square().mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)


def snapshot(context, stacks, name):
    torch.cuda.memory._record_memory_history(enabled=None)
    torch.cuda.empty_cache()
    torch.cuda.memory._record_memory_history(context=context, stacks=stacks, max_entries=200000)
    model = torch.nn.Sequential(*[Block(512) for _ in range(4)]).cuda()
    opt = torch.optim.AdamW(model.parameters())
    x = torch.randn(16, 256, 512, device="cuda")
    for _ in range(2):
        train_step(model, opt, x)
    mark("kept")
    kept = torch.empty(64 << 20, dtype=torch.uint8, device="cuda")
    torch.cuda.memory._dump_snapshot(os.path.join(OUT, name))
    torch.cuda.memory._record_memory_history(enabled=None)
    del model, opt, x, kept


def capped_oom():
    total = torch.cuda.get_device_properties(0).total_memory
    torch.cuda.empty_cache()
    torch.cuda.set_per_process_memory_fraction((1 << 30) / total)
    torch.cuda.memory._record_memory_history(context="all", stacks="python", max_entries=10000)
    held = []
    error = None
    try:
        for _ in range(16):
            mark("capped")
            held.append(torch.empty(256 << 20, dtype=torch.uint8, device="cuda"))
    except torch.OutOfMemoryError as e:
        error = str(e)
        torch.cuda.memory._dump_snapshot(os.path.join(OUT, "capped_oom.pickle"))
    torch.cuda.memory._record_memory_history(enabled=None)
    return error


def main():
    snapshot("all", "all", "all.pickle")
    snapshot("alloc", "python", "python.pickle")
    error = capped_oom()
    with open(os.path.join(OUT, "expect.json"), "w") as f:
        json.dump({"file": HERE, "lines": LINES, "oom_error": error,
                   "torch": torch.__version__,
                   "device": torch.cuda.get_device_name(0)}, f, indent=1)
    print(json.dumps({"lines": LINES, "oom": (error or "")[:200]}))


if __name__ == "__main__":
    sys.exit(main())

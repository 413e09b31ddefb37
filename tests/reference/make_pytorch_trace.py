"""Makes the real PyTorch profiler traces memsight's tests read (CPU, no GPU needed).

    pip install torch
    python3 tests/reference/make_pytorch_trace.py OUT_DIR
    python3 tests/reference/make_pytorch_trace.py roles OUT_DIR   # the role traces only

Writes into OUT_DIR:
- `cnn_adam.pt.trace.json.gz`: a small CNN trained with Adam for a few steps under
  `torch.profiler.profile(profile_memory=True, with_stack=True, record_shapes=True)` with a
  schedule (ProfilerStep#N spans), exported with `export_chrome_trace` and gzipped;
- `ddp/`: two processes (gloo, DistributedDataParallel) each writing its trace through
  `tensorboard_trace_handler` (`{worker}.{ts}.pt.trace.json`, with `distributedInfo`);
- `roles/`: three training loops profiled from their first step (an MLP with SGD and momentum,
  a CNN with Adam, a 2-layer transformer with AdamW and two micro-batches a step), each as
  `NAME.pt.trace.json.gz` and `NAME.categories.json`: PyTorch's own category of every
  allocation in the trace, from `torch.profiler._memory_profiler.MemoryProfile`, as
  `[[ns, bytes, category], ...]` in the trace's `[memory]` event order (`ns` is the event's
  `ts` in integer ns; `category` is null where PyTorch leaves it unclassified or the timeline
  lacks the allocation). The timeline's clock differs from the trace's by a constant: an
  allocation is joined by address, size and time (within 2 µs once the offset is removed).

The committed copies under fixtures/pytorch/ were made with this script (torch 2.15.0, CPU).
Seeds are fixed; times and addresses differ from run to run, so tests never compare with
hard-coded numbers, only with arithmetic over the events of the file they read.
"""
import collections
import gzip
import json
import os
import shutil
import socket
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3, padding=1)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1)
        self.fc = nn.Linear(32 * 8 * 8, 10)

    def forward(self, x):
        x = torch.relu(self.conv1(x))
        x = nn.functional.max_pool2d(x, 2)
        x = torch.relu(self.conv2(x))
        x = nn.functional.max_pool2d(x, 2)
        return self.fc(x.flatten(1))


def batches(n, size=16):
    g = torch.Generator().manual_seed(0)
    for _ in range(n):
        yield torch.randn(size, 3, 32, 32, generator=g), torch.randint(0, 10, (size,), generator=g)


def train(model, steps, prof):
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    for x, y in batches(steps):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        prof.step()


def single(out):
    torch.manual_seed(0)
    model = Net()
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=1, warmup=1, active=3, repeat=1),
        profile_memory=True,
        record_shapes=True,
        with_stack=True,
    ) as prof:
        train(model, 6, prof)
    plain = os.path.join(out, "cnn_adam.pt.trace.json")
    prof.export_chrome_trace(plain)
    with open(plain, "rb") as f, gzip.open(plain + ".gz", "wb", compresslevel=9) as g:
        shutil.copyfileobj(f, g)
    os.remove(plain)


def worker(rank, world, port, out):
    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    model = nn.parallel.DistributedDataParallel(Net())
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=0, warmup=1, active=2, repeat=1),
        on_trace_ready=tensorboard_trace_handler(out, worker_name=f"worker{rank}"),
        profile_memory=True,
        with_stack=True,
    ) as prof:
        train(model, 3, prof)
    dist.destroy_process_group()


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(), nn.Linear(512, 10))

    def forward(self, x):
        return self.net(x)


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 64)
        layer = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.head = nn.Linear(64, 100)

    def forward(self, x):
        return self.head(self.encoder(self.embed(x)))


def role_loop(name, out):
    """One training loop profiled from its first step; writes the trace and the categories."""
    from decimal import Decimal
    from torch.profiler import _memory_profiler as memprof

    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    loss_fn = nn.CrossEntropyLoss()
    if name == "mlp_sgd":
        model = Mlp()
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        batch = lambda: (torch.randn(64, 256, generator=g), torch.randint(0, 10, (64,), generator=g))
        micro = 1
    elif name == "cnn_adam":
        model = Net()
        opt = torch.optim.Adam(model.parameters(), lr=1e-3)
        batch = lambda: (torch.randn(16, 3, 32, 32, generator=g), torch.randint(0, 10, (16,), generator=g))
        micro = 1
    else:
        model = Tiny()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        batch = lambda: (torch.randint(0, 100, (8, 32), generator=g), torch.randint(0, 100, (8, 32), generator=g))
        micro = 2
    with profile(
        activities=[ProfilerActivity.CPU],
        schedule=schedule(wait=0, warmup=0, active=3, repeat=1),
        profile_memory=True,
        record_shapes=True,
        with_stack=True,
    ) as prof:
        for _ in range(3):
            opt.zero_grad(set_to_none=True)
            for _ in range(micro):
                x, y = batch()
                out_ = model(x)
                loss = loss_fn(out_.reshape(-1, out_.shape[-1]), y.reshape(-1)) / micro
                loss.backward()
            opt.step()
            prof.step()
    plain = os.path.join(out, name + ".pt.trace.json")
    prof.export_chrome_trace(plain)
    profile_ = memprof.MemoryProfile(prof.profiler.kineto_results)
    # PyTorch's category of each allocation, keyed by (address, size), in time order.
    created = {}
    for t, action, (key, version), size in profile_.timeline:
        if action == memprof.Action.CREATE and hasattr(key, "storage"):
            cat = profile_._categories.get(key, version)
            created.setdefault((key.storage.ptr, size), []).append(
                (t, cat.name if cat is not None else None)
            )
    for v in created.values():
        v.sort(key=lambda c: c[0])
    with open(plain) as f:
        events = json.load(f, parse_float=Decimal)["traceEvents"]
    allocs = [
        e for e in events
        if e.get("name") == "[memory]" and int(e["args"].get("Bytes", 0)) > 0
    ]
    allocs.sort(key=lambda e: Decimal(e["ts"]))
    keyed = [
        ((int(e["args"]["Addr"]), int(e["args"]["Bytes"])), int(Decimal(e["ts"]) * 1000))
        for e in allocs
    ]
    # The clocks' offset: the most common difference between the k-th allocation of an
    # (address, size) in the timeline and in the trace (the timeline leaves some out, so
    # the k-th pairs are only mostly right; the mode is the offset).
    seen = {}
    diffs = collections.Counter()
    for key, ns in keyed:
        k = seen.get(key, 0)
        seen[key] = k + 1
        if k < len(created.get(key, [])):
            diffs[created[key][k][0] - ns] += 1
    offset = diffs.most_common(1)[0][0]
    rows = []
    for key, ns in keyed:
        # The timeline's allocation with this address and size at this time (within 2 µs).
        cat = None
        for t, c in created.get(key, []):
            if abs(t - offset - ns) <= 2000:
                cat = c
                break
        rows.append([ns, key[1], cat])
    with open(os.path.join(out, name + ".categories.json"), "w") as f:
        json.dump(rows, f)
    with open(plain, "rb") as f, gzip.open(plain + ".gz", "wb", compresslevel=9) as gz:
        shutil.copyfileobj(f, gz)
    os.remove(plain)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "roles":
        out = sys.argv[2]
        os.makedirs(out, exist_ok=True)
        for name in ["mlp_sgd", "cnn_adam", "transformer_adamw"]:
            role_loop(name, out)
        return
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    single(out)
    ddp = os.path.join(out, "ddp")
    os.makedirs(ddp, exist_ok=True)
    mp.spawn(worker, args=(2, free_port(), ddp), nprocs=2, join=True)


if __name__ == "__main__":
    main()

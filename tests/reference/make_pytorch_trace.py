"""Makes the real PyTorch profiler traces memsight's tests read (CPU, no GPU needed).

    pip install torch
    python3 tests/reference/make_pytorch_trace.py OUT_DIR

Writes into OUT_DIR:
- `cnn_adam.pt.trace.json.gz`: a small CNN trained with Adam for a few steps under
  `torch.profiler.profile(profile_memory=True, with_stack=True, record_shapes=True)` with a
  schedule (ProfilerStep#N spans), exported with `export_chrome_trace` and gzipped;
- `ddp/`: two processes (gloo, DistributedDataParallel) each writing its trace through
  `tensorboard_trace_handler` (`{worker}.{ts}.pt.trace.json`, with `distributedInfo`).

The committed copies under fixtures/pytorch/ were made with this script (torch 2.15.0, CPU).
Seeds are fixed; times and addresses differ from run to run, so tests never compare with
hard-coded numbers, only with arithmetic over the events of the file they read.
"""
import gzip
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


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    single(out)
    ddp = os.path.join(out, "ddp")
    os.makedirs(ddp, exist_ok=True)
    mp.spawn(worker, args=(2, free_port(), ddp), nprocs=2, join=True)


if __name__ == "__main__":
    main()

"""Makes the real PyTorch runs `memsight whatif` is checked against (CPU, no GPU needed).

    pip install torch
    python3 tests/reference/make_whatif_refs.py OUT_DIR
    python3 tests/reference/make_whatif_refs.py OUT_DIR pairs   # the 2-process pairs only

For each model (`mlp`: a 4-block MLP with SGD and momentum; `cnn`: a 3-block CNN with Adam;
`gpt`: a 4-block GPT-like decoder with AdamW), one warm-up step (so that the optimizer state
exists before profiling, as in a long run), then 3 steps under
`torch.profiler.profile(activities=[CPU], profile_memory=True, record_shapes=True,
with_stack=True, with_modules=True)`, each run in a process of its own (the CPU's Total
Allocated counts every tensor of the process), at micro-batch B, 2B and 4B, and at B with every block
checkpointed (`torch.utils.checkpoint.checkpoint(block, x, use_reentrant=False)`). Each run is
written gzipped as OUT_DIR/`{model}_b{B}[_ckpt].pt.trace.json.gz`; `runs.json` lists them with
their micro-batch and checkpointing. The tests read the measured peaks from the traces
themselves (the max of Total Allocated), never from numbers written here.

Then a 2-process pair (gloo, CPU) of the GPT-like decoder at micro-batch 4, profiled from
its first step (so that the optimizer state is made inside the profile): `ddp_r{0,1}`
(DistributedDataParallel with AdamW) and `zero1_r{0,1}` (the same with
`ZeroRedundancyOptimizer(AdamW)`: ZeRO-1), so that `--zero 1 --ranks 2` predicted from the DDP run
can be checked against the ZeRO-1 run (rank 1 of each pair is written too; the committed
copies are rank 0's).

The committed copies under fixtures/pytorch/whatif/ were made with this script (torch 2.15.0,
CPU). Seeds are fixed.
"""
import gzip
import json
import os
import subprocess
import sys

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile
from torch.utils.checkpoint import checkpoint


class MlpBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.fc1 = nn.Linear(d, 4 * d)
        self.fc2 = nn.Linear(4 * d, d)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


class ConvBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.conv1 = nn.Conv2d(c, c, 3, padding=1)
        self.conv2 = nn.Conv2d(c, c, 3, padding=1)

    def forward(self, x):
        return x + self.conv2(torch.relu(self.conv1(x)))


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / (d // self.heads) ** 0.5
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        att = att.masked_fill(~mask, float("-inf")).softmax(-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        return self.proj(y)


class Block(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = MlpBlock(d)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return self.mlp(self.ln2(x))


class Stack(nn.Module):
    """A stem, blocks (checkpointed or not) and a head."""

    def __init__(self, stem, blocks, head, ckpt):
        super().__init__()
        self.stem, self.blocks, self.head, self.ckpt = stem, nn.ModuleList(blocks), head, ckpt

    def forward(self, x):
        x = self.stem(x)
        for b in self.blocks:
            x = checkpoint(b, x, use_reentrant=False) if self.ckpt else b(x)
        return self.head(x)


class Pool(nn.Module):
    def forward(self, x):
        return x.mean(dim=(2, 3))


def model_and_batch(name, micro, ckpt, g):
    if name == "mlp":
        d = 256
        m = Stack(nn.Linear(128, d), [MlpBlock(d) for _ in range(4)], nn.Linear(d, 10), ckpt)
        opt = torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)
        batch = lambda: (torch.randn(64 * micro, 128, generator=g), torch.randint(0, 10, (64 * micro,), generator=g))
        return m, opt, batch, 64
    if name == "cnn":
        c = 16
        m = Stack(nn.Conv2d(3, c, 3, padding=1), [ConvBlock(c) for _ in range(3)], nn.Sequential(Pool(), nn.Linear(c, 10)), ckpt)
        opt = torch.optim.Adam(m.parameters(), lr=1e-3)
        batch = lambda: (torch.randn(8 * micro, 3, 32, 32, generator=g), torch.randint(0, 10, (8 * micro,), generator=g))
        return m, opt, batch, 8
    d, vocab, t = 128, 512, 64
    m = Stack(nn.Embedding(vocab, d), [Block(d, 4) for _ in range(4)], nn.Sequential(nn.LayerNorm(d), nn.Linear(d, vocab)), ckpt)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
    batch = lambda: (torch.randint(0, vocab, (4 * micro, t), generator=g), torch.randint(0, vocab, (4 * micro, t), generator=g))
    return m, opt, batch, 4


def train_step(model, opt, batch, loss_fn):
    """One training step: zero_grad, forward, loss, backward, optimizer step."""
    opt.zero_grad(set_to_none=True)
    x, y = batch()
    logits = model(x)
    loss_fn(logits.reshape(-1, logits.shape[-1]), y.reshape(-1)).backward()
    opt.step()


def profile_steps(step, out, name):
    """Profiles 3 calls of `step` and writes the trace gzipped as OUT/NAME.pt.trace.json.gz."""
    with profile(
        activities=[ProfilerActivity.CPU],
        profile_memory=True,
        record_shapes=True,
        with_stack=True,
        with_modules=True,
    ) as prof:
        for _ in range(3):
            step()
            prof.step()
    plain = os.path.join(out, name + ".pt.trace.json")
    prof.export_chrome_trace(plain)
    with open(plain, "rb") as f, gzip.open(plain + ".gz", "wb", compresslevel=9) as gz:
        gz.write(f.read())
    os.remove(plain)
    return name + ".pt.trace.json.gz"


def run(name, micro, ckpt, out):
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    model, opt, batch, b = model_and_batch(name, micro, ckpt, g)
    loss_fn = nn.CrossEntropyLoss()
    step = lambda: train_step(model, opt, batch, loss_fn)
    step()  # warm-up: the optimizer state exists before profiling
    file = profile_steps(step, out, f"{name}_b{b * micro}{'_ckpt' if ckpt else ''}")
    return {"file": file, "model": name, "micro_batch": b * micro, "base": b, "checkpoint": ckpt}


def distributed(rank, world, port, out, zero):
    """One rank of the DDP (or ZeRO-1) pair: its trace, as `{ddp|zero1}_r{rank}`."""
    import torch.distributed as dist
    from torch.distributed.optim import ZeroRedundancyOptimizer
    from torch.nn.parallel import DistributedDataParallel

    os.environ["MASTER_ADDR"] = "127.0.0.1"
    os.environ["MASTER_PORT"] = str(port)
    dist.init_process_group("gloo", rank=rank, world_size=world)
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(rank)
    model, _, batch, b = model_and_batch("gpt", 1, False, g)
    model = DistributedDataParallel(model)
    if zero:
        opt = ZeroRedundancyOptimizer(model.parameters(), optimizer_class=torch.optim.AdamW, lr=1e-3)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    loss_fn = nn.CrossEntropyLoss()
    # No warm-up: the optimizer state is made inside the profile, in the first step, so that
    # what ZeRO shards is in the trace (a CPU trace's Total Allocated does not count what was
    # allocated before profiling).
    step = lambda: train_step(model, opt, batch, loss_fn)
    profile_steps(step, out, f"{'zero1' if zero else 'ddp'}_r{rank}")
    dist.destroy_process_group()


def free_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    out = sys.argv[1]
    if len(sys.argv) == 3 and sys.argv[2] == "pairs":  # the DDP and ZeRO-1 pairs only
        import torch.multiprocessing as mp

        os.makedirs(out, exist_ok=True)
        for zero in (False, True):
            mp.spawn(distributed, args=(2, free_port(), out, zero), nprocs=2, join=True)
        return
    if len(sys.argv) == 5:  # one run, in a process of its own
        print(json.dumps(run(sys.argv[2], int(sys.argv[3]), sys.argv[4] == "1", out)))
        return
    os.makedirs(out, exist_ok=True)
    runs = []
    for name in ("mlp", "cnn", "gpt"):
        for micro, ckpt in ((1, False), (2, False), (4, False), (1, True)):
            # A fresh process a run: the CPU's Total Allocated counts every tensor of the
            # process, so an earlier run's leftovers would raise a later run's peak.
            args = [sys.executable, __file__, out, name, str(micro), "1" if ckpt else "0"]
            done = subprocess.run(args, check=True, capture_output=True, text=True)
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    subprocess.run([sys.executable, __file__, out, "pairs"], check=True, capture_output=True)
    for kind, zero in (("ddp", None), ("zero1", 1)):
        runs.append({"file": f"{kind}_r0.pt.trace.json.gz", "model": "gpt_pair", "micro_batch": 4,
                     "base": 4, "checkpoint": False, "zero": zero, "ranks": 2})
    with open(os.path.join(out, "runs.json"), "w") as f:
        json.dump({"torch": torch.__version__, "runs": runs}, f, indent=1)


if __name__ == "__main__":
    main()

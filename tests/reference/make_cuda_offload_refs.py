"""Makes the real CUDA runs `memsight whatif --offload-optimizer` is checked against (one GPU).

    python3 tests/reference/make_cuda_offload_refs.py OUT_DIR

The GPT-like decoder of make_whatif_refs.py (4 blocks, d 512, 8 heads, sequence 256, vocabulary
4096) at micro-batch 8 with AdamW, one warm-up step, then 3 steps under
`torch.profiler.profile(activities=[CPU, CUDA], profile_memory=True, record_shapes=True,
with_stack=True, with_modules=True)`, each run in a process of its own:

- `gpu`: the optimizer on the device (its state is 2 × the parameters, made in the warm-up);
- `offload`: the optimizer state offloaded to the host, as ZeRO-Offload does: after the
  backward the gradients are copied to pinned host copies of the parameters, AdamW steps them
  there, and the parameters are copied back; the device holds no optimizer state.

`--offload-optimizer` predicted from the `gpu` run is checked against the `offload` run's
measured peak (the max of the CUDA device's Total Allocated in its trace) and PyTorch's own
`max_memory_allocated` over the profiled steps, written to OUT_DIR/truth.json. Seeds are fixed.
"""
import gzip
import json
import os
import subprocess
import sys

import torch
import torch.nn as nn
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_whatif_refs import Block, Stack  # noqa: E402

D, HEADS, BLOCKS, VOCAB, T, MICRO = 512, 8, 4, 4096, 256, 8


def model():
    torch.manual_seed(0)
    head = nn.Sequential(nn.LayerNorm(D), nn.Linear(D, VOCAB))
    blocks = [Block(D, HEADS) for _ in range(BLOCKS)]
    return Stack(nn.Embedding(VOCAB, D), blocks, head, False).cuda()


def run(kind, out):
    dev = torch.device("cuda")
    m = model()
    g = torch.Generator(device=dev).manual_seed(0)
    loss_fn = nn.CrossEntropyLoss()
    params = list(m.parameters())
    if kind == "gpu":
        opt = torch.optim.AdamW(params, lr=1e-3)

        def update():
            opt.step()
    else:
        host = [p.detach().to("cpu").pin_memory().requires_grad_(True) for p in params]
        opt = torch.optim.AdamW(host, lr=1e-3)

        def update():
            for p, h in zip(params, host):
                h.grad = p.grad.to("cpu", non_blocking=True)
            torch.cuda.synchronize()
            opt.step()
            with torch.no_grad():
                for p, h in zip(params, host):
                    p.copy_(h, non_blocking=True)
            torch.cuda.synchronize()

    def step():
        for p in params:
            p.grad = None
        x = torch.randint(0, VOCAB, (MICRO, T), device=dev, generator=g)
        y = torch.randint(0, VOCAB, (MICRO, T), device=dev, generator=g)
        logits = m(x)
        loss_fn(logits.reshape(-1, VOCAB), y.reshape(-1)).backward()
        update()

    step()  # warm-up: the optimizer state exists before profiling
    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    with profile(
        activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
        profile_memory=True,
        record_shapes=True,
        with_stack=True,
        with_modules=True,
    ) as prof:
        for _ in range(3):
            step()
            prof.step()
    torch.cuda.synchronize()
    plain = os.path.join(out, kind + ".pt.trace.json")
    prof.export_chrome_trace(plain)
    with open(plain, "rb") as f, gzip.open(plain + ".gz", "wb", compresslevel=9) as gz:
        gz.write(f.read())
    os.remove(plain)
    return {
        "file": kind + ".pt.trace.json.gz",
        "max_allocated": torch.cuda.max_memory_allocated(),
        "parameters": sum(p.numel() for p in params),
        "parameter_bytes": sum(p.numel() * p.element_size() for p in params),
    }


def main():
    out = sys.argv[1]
    if len(sys.argv) == 3:
        print(json.dumps(run(sys.argv[2], out)))
        return
    os.makedirs(out, exist_ok=True)
    runs = {}
    for kind in ("gpu", "offload"):
        done = subprocess.run([sys.executable, __file__, out, kind], check=True, capture_output=True, text=True)
        runs[kind] = json.loads(done.stdout.strip().splitlines()[-1])
    truth = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0), "runs": runs}
    with open(os.path.join(out, "truth.json"), "w") as f:
        json.dump(truth, f, indent=1)
    print(json.dumps(truth, indent=1))


if __name__ == "__main__":
    main()

"""The device allocations a PyTorch profiler trace recorded, with their addresses: an oracle for
the join by time that memsight does not use (memsight matches by size and time; a real trace's
`[memory]` events also carry the block's `Addr`, the same address the allocator snapshot of the
same process gives it).

    python3 tests/reference/trace_allocations.py TRACE.json[.gz] DEVICE_ID

Prints JSON: {"allocations": [[addr, bytes, profile_ns], ...]} for the `[memory]` events of
Device Type 1 (CUDA) on DEVICE_ID with Bytes > 0, profile_ns = ts × 1000 on the trace's clock.
"""
import decimal
import gzip
import json
import sys


def main(path, device):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        doc = json.load(f, parse_float=decimal.Decimal)
    out = []
    for e in doc["traceEvents"]:
        a = e.get("args") or {}
        if e.get("name") != "[memory]" or a.get("Device Type") != 1:
            continue
        if a.get("Device Id") != device or int(a["Bytes"]) <= 0:
            continue
        out.append([int(a["Addr"]), int(a["Bytes"]), int(decimal.Decimal(str(e["ts"])) * 1000)])
    print(json.dumps({"allocations": out}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))

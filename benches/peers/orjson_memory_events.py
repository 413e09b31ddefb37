"""What a user writes without memsight to get a PyTorch trace's memory curve: orjson (or the
standard json module with --json) loads the whole trace, then a loop over its `[memory]`
events accumulates the allocated bytes and keeps the peak. The peer of `memsight inspect` in
docs/performance.md's trace figures (issue 47).

    python3 benches/peers/orjson_memory_events.py TRACE.json [--json]
"""

import gzip
import sys


def main() -> None:
    path = sys.argv[1]
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        raw = f.read()
    if "--json" in sys.argv:
        import json

        trace = json.loads(raw)
    else:
        import orjson

        trace = orjson.loads(raw)
    del raw
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    allocated = peak = 0
    count = 0
    for e in events:
        if e.get("name") != "[memory]":
            continue
        args = e["args"]
        allocated = args.get("Total Allocated", allocated + args["Bytes"])
        peak = max(peak, allocated)
        count += 1
    print(f"{count} memory events, peak allocated {peak} bytes")


if __name__ == "__main__":
    main()

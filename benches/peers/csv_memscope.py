"""What a user writes without memsight to get an msMemScope dump's memory curve with the
standard library alone, the CSV counterpart of `orjson_memory_events.py`: Python's `csv`
module (its reader is C) reads every row, a loop keeps the MALLOC and FREE rows' time and
signed `size` (taken out of the `Attr` cell), then sorts them by time and keeps the peak of
the running sum. The peer of memsight's load of a dump in docs/performance.md (issue 47);
`pandas_memscope.py` is the vectorised one.

    python3 benches/peers/csv_memscope.py DUMP.csv
"""

import csv
import sys


def size_of(attr: str) -> int:
    at = attr.find("size:")
    if at < 0:
        return 0
    end = attr.find(",", at)
    if end < 0:
        end = attr.find("}", at)
    return abs(int(attr[at + 5 : end]))


def main() -> None:
    with open(sys.argv[1], newline="", encoding="utf-8") as f:
        rows = csv.reader(f)
        header = next(rows)
        event, ts, attr = (header.index(c) for c in ("Event", "Timestamp(ns)", "Attr"))
        deltas = []
        for row in rows:
            kind = row[event]
            if kind == "MALLOC":
                deltas.append((int(row[ts]), size_of(row[attr])))
            elif kind == "FREE":
                deltas.append((int(row[ts]), -size_of(row[attr])))
    deltas.sort(key=lambda d: d[0])
    allocated = peak = 0
    for _, delta in deltas:
        allocated += delta
        peak = max(peak, allocated)
    print(f"{len(deltas)} memory events, peak allocated {peak} bytes")


if __name__ == "__main__":
    main()

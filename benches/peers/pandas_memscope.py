"""What a user writes without memsight to get an msMemScope dump's memory curve: pandas reads
the whole `memscope_dump_*.csv`, keeps its MALLOC and FREE rows, takes `size` out of the
`Attr` cell, sorts by time and keeps the peak of the running sum. The peer of memsight's load
of a dump in docs/performance.md (issue 47).

    python3 benches/peers/pandas_memscope.py DUMP.csv
"""

import sys

import pandas as pd


def main() -> None:
    dump = pd.read_csv(sys.argv[1], usecols=["Event", "Timestamp(ns)", "Attr"])
    mem = dump[dump["Event"].isin(["MALLOC", "FREE"])].copy()
    size = mem["Attr"].str.extract(r"size:(-?\d+)", expand=False).astype("int64").abs()
    mem["delta"] = size.where(mem["Event"] == "MALLOC", -size)
    mem = mem.sort_values("Timestamp(ns)", kind="stable")
    allocated = mem["delta"].cumsum()
    print(f"{len(mem)} memory events, peak allocated {allocated.max()} bytes")


if __name__ == "__main__":
    main()
